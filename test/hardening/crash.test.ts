// Nothing acknowledged is lost when the process dies: several clients send messages to a
// real server, the server is killed with SIGKILL mid-stream, and after a restart on the
// same data every message answered with success is there, with every recipient's row and
// flags. On SQLite the file as the crash left it also passes its integrity check. Under
// PARLEY_TEST_DATABASE_URL the same runs against a fresh PostgreSQL database as well: there
// the commit's durability is the database server's, but acknowledging only what is
// committed is the server's own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { keepForLife } from '../../src/store/sqlite-lifetime.ts';
import { tempDir } from '../cli/io.ts';
import { POSTGRES_SKIP, TEST_DATABASE_URL } from '../support/app.ts';
import { addMember, call, ownerOf, startServerProcess, type Account } from './server-process.ts';

const CLIENTS = 4;
/** The kill comes once this many sends were acknowledged... */
const KILL_AFTER = 60;
/** ...and no client sends more than this, whatever happens. */
const MAX_SENDS_PER_CLIENT = 100;

interface Sent {
  id: number;
  sender: number;
  content: string;
}

/** Send, kill, check the stored data (checkStore), restart and check every message. */
async function crashAndRecover(
  env: Record<string, string>,
  checkStore: () => void | Promise<void>,
): Promise<void> {
  const first = await startServerProcess(env);
  const owner = ownerOf(first);
  const users: Account[] = [owner];
  for (let i = 1; i < CLIENTS; i++) {
    users.push(await addMember(first.url, owner, `sender${i}@example.com`, `Str0ng-pass-${i}!x`));
  }
  const everyone = users.map((u) => u.id);

  const acknowledged: Sent[] = [];
  let killed = false;
  const failures: string[] = [];
  async function client(me: Account, index: number): Promise<void> {
    for (let n = 0; n < MAX_SENDS_PER_CLIENT && !killed; n++) {
      const content = `crash test: client ${index} message ${n}`;
      let res: Awaited<ReturnType<typeof call>>;
      try {
        res = await call(first.url, me, 'POST', '/messages', {
          type: 'direct',
          to: everyone.filter((id) => id !== me.id),
          content,
          read_by_sender: true,
        });
      } catch {
        // The connection died with the server: this send's outcome is unknown.
        return;
      }
      if (res.status !== 200) {
        failures.push(`${res.status} ${JSON.stringify(res.body)}`);
        return;
      }
      acknowledged.push({ id: res.body.id as number, sender: me.id, content });
      if (acknowledged.length >= KILL_AFTER && !killed) {
        killed = true;
        // Not awaited: the other clients' sends are in flight when the signal lands.
        first.child.kill('SIGKILL');
      }
    }
  }
  await Promise.all(users.map((u, i) => client(u, i)));
  assert.deepEqual(failures, [], first.stderr());
  assert.ok(killed, 'the clients finished before the kill');
  assert.deepEqual(await first.exit(), { code: null, signal: 'SIGKILL' });
  assert.ok(acknowledged.length >= KILL_AFTER);

  await checkStore();

  const second = await startServerProcess(env);
  try {
    // Each user's view of the conversation: message id -> flags, plus the contents.
    const views = new Map<number, Map<number, string[]>>();
    const contents = new Map<number, string>();
    for (const u of users) {
      const res = await call(second.url, u, 'GET', '/messages', {
        anchor: 'oldest',
        num_before: 0,
        num_after: CLIENTS * MAX_SENDS_PER_CLIENT + 10,
        apply_markdown: false,
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const messages = res.body.messages as Array<{ id: number; content: string; flags: string[] }>;
      views.set(u.id, new Map(messages.map((m) => [m.id, m.flags])));
      for (const m of messages) contents.set(m.id, m.content);
    }
    for (const sent of acknowledged) {
      assert.equal(contents.get(sent.id), sent.content, `message ${sent.id} is lost`);
      for (const u of users) {
        const flags = views.get(u.id)!.get(sent.id);
        assert.ok(flags, `message ${sent.id} has no row for user ${u.id}`);
        assert.equal(
          flags.includes('read'),
          u.id === sent.sender,
          `message ${sent.id} for user ${u.id}: ${flags.join(',')}`,
        );
      }
    }
    // A send in flight at the kill either happened whole or not at all.
    const all = [...contents.keys()];
    for (const u of users) assert.deepEqual([...views.get(u.id)!.keys()], all);
    assert.ok(all.length - acknowledged.length <= CLIENTS, `${all.length} stored`);

    const after = await call(second.url, owner, 'POST', '/messages', {
      type: 'direct',
      to: everyone.slice(1),
      content: 'after the restart',
    });
    assert.equal(after.status, 200, JSON.stringify(after.body));
    assert.ok((after.body.id as number) > Math.max(...all));
  } finally {
    second.child.kill('SIGTERM');
    assert.deepEqual(await second.exit(), { code: 0, signal: null });
  }
}

/** The file as the crash left it (the WAL not checkpointed) is consistent. */
function checkConsistent(dir: string): void {
  const file = keepForLife(new SQLite(join(dir, 'parley.sqlite3'), { readonly: true }));
  try {
    assert.deepEqual(keepForLife(file.prepare('PRAGMA integrity_check')).all(), [
      { integrity_check: 'ok' },
    ]);
    assert.deepEqual(keepForLife(file.prepare('PRAGMA foreign_key_check')).all(), []);
  } finally {
    file.close();
  }
}

test('on SQLite: a SIGKILL mid-stream loses no acknowledged message', { timeout: 180_000 }, () => {
  const dir = tempDir();
  return crashAndRecover({ PARLEY_DATA_DIR: dir }, () => checkConsistent(dir));
});

test(
  'on SQLite with synchronous FULL (commits synced after SQLite): the same',
  { timeout: 180_000 },
  () => {
    const dir = tempDir();
    return crashAndRecover({ PARLEY_DATA_DIR: dir, PARLEY_SQLITE_SYNCHRONOUS: 'FULL' }, () =>
      checkConsistent(dir),
    );
  },
);

test(
  'on PostgreSQL: a SIGKILL mid-stream loses no acknowledged message',
  { timeout: 180_000, skip: POSTGRES_SKIP },
  async (t) => {
    // A database of its own: the server migrates its default schema on the first start.
    const name = `parley_crash_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL! });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    t.after(async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    });
    const url = new URL(TEST_DATABASE_URL!);
    url.pathname = `/${name}`;
    await crashAndRecover(
      { PARLEY_DATA_DIR: tempDir(), PARLEY_DATABASE_URL: url.toString() },
      async () => {
        // PostgreSQL notices the dead client and ends its sessions, rolling back what they
        // had not committed.
        for (let i = 0; ; i++) {
          const open = await admin.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1`,
            [name],
          );
          if (open.rows[0].n === 0) break;
          assert.ok(i < 200, `${open.rows[0].n} sessions of the killed server remain`);
          await new Promise((r) => setTimeout(r, 50));
        }
      },
    );
  },
);
