// The store's accounts version: authentication reuses users and realms rows while it
// stays the same, so it must change with every write that can change those rows, from this
// connection or any other, and may stay put for writes elsewhere.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, beforeEach, describe, test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { openPostgres, openSqlite, type Q, type Store } from '../../src/store/db.ts';
import { mayWriteAccounts } from '../../src/store/sqlite-statements.ts';
import { READ_VERSION_TABLES } from '../../src/store/migrations/0012_read_versions.ts';
import { GROUP_READ_VERSION_TABLES } from '../../src/store/migrations/0015_group_read_version.ts';
import { nextEventSeq } from '../../src/store/realms.ts';
import { buildTestApp, POSTGRES_SKIP, TEST_DATABASE_URL, type TestApp } from '../support/app.ts';

const dir = mkdtempSync(join(tmpdir(), 'parley-accounts-version-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function withTables(store: Store): Promise<void> {
  await sql`CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)`.execute(store.db);
  await sql`CREATE TABLE realms (id INTEGER PRIMARY KEY, name TEXT)`.execute(store.db);
  await sql`CREATE TABLE realm_event_seqs (realm_id INTEGER PRIMARY KEY, event_seq INTEGER)`.execute(
    store.db,
  );
  await sql`CREATE TABLE user_messages (id INTEGER PRIMARY KEY)`.execute(store.db);
  await sql`INSERT INTO realms (id, name) VALUES (1, 'r')`.execute(store.db);
}

test('writes to users and realms change the version; other tables and reads do not', async () => {
  const store = openSqlite({ source: ':memory:' });
  try {
    await withTables(store);
    const v0 = store.accountsVersion();
    assert.equal(typeof v0, 'number');
    await sql`INSERT INTO user_messages (id) VALUES (1)`.execute(store.db);
    await sql`SELECT * FROM users`.execute(store.db);
    assert.equal(await nextEventSeq(store.db, 1), 1);
    assert.equal(await nextEventSeq(store.db, 1), 2);
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
  assert.equal(mayWriteAccounts('update "realms" set "name" = ? where "id" = ?'), true);
  assert.equal(
    mayWriteAccounts(
      'insert into "realm_event_seqs" ("realm_id", "event_seq") values (?, ?) on conflict ("realm_id") do update set "event_seq" = "realm_event_seqs"."event_seq" + ? returning "event_seq"',
    ),
    false,
    'the commit sequence is not in the realms row',
  );
});

// On PostgreSQL the version is a counter that triggers advance once per writing transaction
// (migration 0011), read once per turn; on a migrated schema with the test organization.
describe('the PostgreSQL accounts version', { skip: POSTGRES_SKIP }, () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp();
  });
  afterEach(async () => {
    await t.close();
  });
  const db = () => t.ctx.store.db;
  const version = async () => {
    await nextTurn();
    const v = await t.ctx.store.accountsVersion();
    assert.equal(typeof v, 'number');
    return v;
  };
  const renameUser = (q: Q, name: string) =>
    q.updateTable('users').set({ full_name: name }).where('id', '=', t.fx.member.id).execute();

  test('users and realms writes change it; other tables and the event sequence do not', async () => {
    const v0 = await version();
    const turn = t.ctx.store.accountsVersion();
    assert.equal(t.ctx.store.accountsVersion(), turn, 'one read shared by a turn');
    await db()
      .updateTable('recipients')
      .set({ direct_key: null })
      .where('channel_id', 'is not', null)
      .execute();
    await sql`SELECT * FROM users`.execute(db());
    await db()
      .transaction()
      .execute((trx) => nextEventSeq(trx, t.fx.realm.id));
    assert.equal(await version(), v0, 'unrelated writes and the event sequence');
    await renameUser(db(), 'Renamed');
    const v1 = await version();
    assert.notEqual(v1, v0);
    await db()
      .updateTable('realms')
      .set({ name: 'Renamed' })
      .where('id', '=', t.fx.realm.id)
      .execute();
    const v2 = await version();
    assert.notEqual(v2, v1);
    // Another column, with the sequence advanced in the same transaction, counts.
    await db()
      .transaction()
      .execute(async (trx) => {
        await nextEventSeq(trx, t.fx.realm.id);
        await trx
          .updateTable('realms')
          .set({ description: 'and the sequence' })
          .where('id', '=', t.fx.realm.id)
          .execute();
      });
    const v3 = await version();
    assert.notEqual(v3, v2);
    // A copy of the realm row under another id and subdomain, inserted and then deleted.
    await sql`
      INSERT INTO realms
      SELECT (jsonb_populate_record(NULL::realms,
        to_jsonb(r) || '{"id": 999999, "string_id": "copy"}')).*
      FROM realms r WHERE id = ${t.fx.realm.id}`.execute(db());
    const v4 = await version();
    assert.notEqual(v4, v3);
    await db().deleteFrom('realms').where('id', '=', 999999).execute();
    assert.notEqual(await version(), v4);
  });

  test('every table that cached reads count on has its triggers; a user_groups write counts', async () => {
    const { rows } = await sql<{ tgname: string }>`
      SELECT t.tgname FROM pg_trigger t
      JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = ${t.ctx.store.schema} AND NOT t.tgisinternal`.execute(db());
    const names = new Set(rows.map((r) => r.tgname));
    for (const table of [...READ_VERSION_TABLES, ...GROUP_READ_VERSION_TABLES]) {
      assert.ok(names.has(`${table}_accounts_version`), table);
      assert.ok(names.has(`${table}_truncate_accounts_version`), table);
    }
    const v0 = await version();
    await db()
      .updateTable('user_groups')
      .set({ description: 'changed' })
      .where('realm_id', '=', t.fx.realm.id)
      .where('name', '=', 'role:members')
      .execute();
    assert.notEqual(await version(), v0);
  });

  test('a transaction advances it once, however many rows it writes', async () => {
    const v0 = (await version())!;
    await db()
      .transaction()
      .execute(async (trx) => {
        await trx.updateTable('users').set({ full_name: 'Everyone renamed' }).execute();
        await trx.updateTable('realms').set({ description: 'and the realm' }).execute();
      });
    assert.equal(await version(), v0 + 1);
    await renameUser(db(), 'Once more');
    assert.equal(await version(), v0 + 2, 'the next transaction advances it again');
  });

  test('an open transaction leaves it until it commits; a rolled-back one leaves it', async () => {
    const v0 = await version();
    await db()
      .transaction()
      .execute(async (trx) => {
        await renameUser(trx, 'Not yet committed');
        assert.equal(await version(), v0, 'read on another connection before the commit');
      });
    const v1 = await version();
    assert.notEqual(v1, v0);
    await db()
      .transaction()
      .execute(async (trx) => {
        await renameUser(trx, 'Rolled back');
        throw new Error('roll back');
      })
      .catch(() => undefined);
    assert.equal(await version(), v1);
  });

  // The counter is advanced at commit (deferred triggers): advanced at each write, its row
  // lock would be held from a transaction's first users write to its commit, and every
  // other transaction writing a users row would wait for it, or deadlock with it.
  test('two open transactions writing users rows go on, each holding the counter at commit only', async () => {
    const connect = async () => {
      const client = new pg.Client({
        connectionString: TEST_DATABASE_URL!,
        options: `-c search_path=${t.ctx.store.schema} -c lock_timeout=2s`,
      });
      await client.connect();
      return client;
    };
    const rename = 'UPDATE users SET full_name = $1 WHERE id = $2';
    const [one, two] = [await connect(), await connect()];
    try {
      const v0 = await version();
      await one.query('BEGIN');
      await two.query('BEGIN');
      await one.query(rename, ['by one', t.fx.member.id]);
      await two.query(rename, ['by two', t.fx.member2.id]);
      const oneWaitsForTwo = one.query(rename, ['by one', t.fx.member2.id]);
      await two.query('COMMIT');
      await oneWaitsForTwo;
      await one.query('COMMIT');
      const names = await db()
        .selectFrom('users')
        .select('full_name')
        .where('id', 'in', [t.fx.member.id, t.fx.member2.id])
        .orderBy('id')
        .execute();
      assert.deepEqual(
        names.map((u) => u.full_name),
        ['by one', 'by one'],
      );
      assert.notEqual(await version(), v0);
    } finally {
      await one.end();
      await two.end();
    }
  });

  test('a commit by another process changes it, and so does one naming the schema', async () => {
    const schema = t.ctx.store.schema!;
    const other = openPostgres({ url: TEST_DATABASE_URL!, schema, max: 1 });
    // A session on the default search path, as an operator's psql would be.
    const operator = openPostgres({ url: TEST_DATABASE_URL!, max: 1 });
    try {
      const v0 = await version();
      await renameUser(other.db, 'Renamed by another process');
      const v1 = await version();
      assert.notEqual(v1, v0);
      await sql`UPDATE ${sql.table(`${schema}.users`)} SET full_name = 'By the operator'`.execute(
        operator.db,
      );
      assert.notEqual(await version(), v1);
    } finally {
      await other.close();
      await operator.close();
    }
  });

  test('without the counter row there is no version, and nothing is kept', async () => {
    await db()
      .deleteFrom('accounts_version' as never)
      .execute();
    try {
      await nextTurn();
      assert.equal(await t.ctx.store.accountsVersion(), null);
      // Authentication still works, reading the rows every time: a change shows at once.
      const me = () => t.as(t.fx.member).get('/users/me');
      assert.equal((await me()).status, 200);
      await db()
        .updateTable('users')
        .set({ is_active: 0 })
        .where('id', '=', t.fx.member.id)
        .execute();
      assert.equal((await me()).body.msg, 'Account is deactivated');
    } finally {
      await sql`INSERT INTO accounts_version (n) VALUES (0)`.execute(db());
    }
  });
});
