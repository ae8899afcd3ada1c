// The SQLite store's accounts version: authentication reuses users and realms rows while it
// stays the same, so it must change with every write that can change those rows, from this
// connection or any other, and may stay put for writes elsewhere.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { sql } from 'kysely';
import { mayWriteAccounts, openSqlite, type Store } from '../../src/store/db.ts';

const dir = mkdtempSync(join(tmpdir(), 'parley-accounts-version-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function withTables(store: Store): Promise<void> {
  await sql`CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)`.execute(store.db);
  await sql`CREATE TABLE realms (id INTEGER PRIMARY KEY, name TEXT, event_seq INTEGER)`.execute(
    store.db,
  );
  await sql`CREATE TABLE user_messages (id INTEGER PRIMARY KEY)`.execute(store.db);
  await sql`INSERT INTO realms (id, name, event_seq) VALUES (1, 'r', 0)`.execute(store.db);
}

test('writes to users and realms change the version; other tables and reads do not', async () => {
  const store = openSqlite({ source: ':memory:' });
  try {
    await withTables(store);
    const v0 = store.accountsVersion();
    assert.equal(typeof v0, 'number');
    await sql`INSERT INTO user_messages (id) VALUES (1)`.execute(store.db);
    await sql`SELECT * FROM users`.execute(store.db);
    await store.db
      .updateTable('realms')
      .set((eb) => ({ event_seq: eb('event_seq', '+', 1) }))
      .where('id', '=', 1)
      .returning('event_seq')
      .execute();
    assert.equal(store.accountsVersion(), v0, 'unrelated writes and the event sequence');
    await sql`INSERT INTO users (id, name) VALUES (1, 'a')`.execute(store.db);
    const v1 = store.accountsVersion();
    assert.notEqual(v1, v0);
    await store.db.updateTable('realms').set({ name: 'renamed' }).where('id', '=', 1).execute();
    const v2 = store.accountsVersion();
    assert.notEqual(v2, v1);
    // A write that is rolled back changes it too: the version only promises "unchanged".
    await store.db
      .transaction()
      .execute(async (trx) => {
        await sql`DELETE FROM users`.execute(trx);
        throw new Error('roll back');
      })
      .catch(() => undefined);
    assert.notEqual(store.accountsVersion(), v2);
  } finally {
    await store.close();
  }
});

// Another connection's commits are looked for once per turn of the event loop.
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

test('a commit by another connection (a command-line action) changes the version', async () => {
  const file = join(dir, 'two-connections.sqlite3');
  const server = openSqlite({ source: file });
  const cli = openSqlite({ source: file });
  try {
    await withTables(server);
    const v0 = server.accountsVersion();
    assert.equal(server.accountsVersion(), v0);
    // Any table: another connection's writes cannot be told apart, so all of them count.
    await sql`INSERT INTO user_messages (id) VALUES (7)`.execute(cli.db);
    await nextTurn();
    const v1 = server.accountsVersion();
    assert.notEqual(v1, v0);
    assert.equal(server.accountsVersion(), v1);
    await sql`INSERT INTO users (id, name) VALUES (1, 'x')`.execute(cli.db);
    assert.equal(server.accountsVersion(), v1, 'not within the same turn');
    await nextTurn();
    assert.notEqual(server.accountsVersion(), v1);
  } finally {
    await cli.close();
    await server.close();
  }
});

test('statements whose target is not recognised count as account writes', () => {
  assert.equal(mayWriteAccounts('insert into "subscriptions" ("a") values (?)'), false);
  assert.equal(mayWriteAccounts('UPDATE user_messages SET flags = flags | ?'), false);
  assert.equal(mayWriteAccounts('update "users" set "role" = ? where "id" = ?'), true);
  assert.equal(mayWriteAccounts('delete from "realms" where "id" = ?'), true);
  assert.equal(mayWriteAccounts('WITH x AS (SELECT 1) UPDATE channels SET name = ?'), true);
  assert.equal(mayWriteAccounts('CREATE TABLE t (x)'), true);
  assert.equal(
    mayWriteAccounts('update "realms" set "event_seq" = "event_seq" + ? where "id" = ?'),
    true,
    'only the exact sequence statement is exempt',
  );
});

test('PostgreSQL reports no version: every request reads the rows', async (t) => {
  const url = process.env.PARLEY_TEST_DATABASE_URL;
  if (!url) return t.skip('PARLEY_TEST_DATABASE_URL is not set');
  const { openPostgres } = await import('../../src/store/db.ts');
  const store = openPostgres({ url, max: 1 });
  try {
    assert.equal(store.accountsVersion(), null);
  } finally {
    await store.close();
  }
});
