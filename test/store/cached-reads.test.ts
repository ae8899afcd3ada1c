// Cached reads (store/compiled.ts cachedQuery) give the same rows again while no table they
// read has been written, by this connection or another, and read afresh after any write
// that may have changed them: a write to one of their tables, an unrecognised write, a
// rollback, a cascade, or another connection's commit.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, beforeEach, describe, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { CACHED_READ_LIMITS, cachedQuery, compiledQuery } from '../../src/store/compiled.ts';
import { getChannel } from '../../src/store/channels.ts';
import { openPostgres, openSqlite, type Q, type Store } from '../../src/store/db.ts';
import { migrateToLatest } from '../../src/store/migrations/index.ts';
import { keepForLife } from '../../src/store/sqlite-lifetime.ts';
import { CASCADES, tablesRead } from '../../src/store/table-writes.ts';
import { withReadSnapshot, withTransaction } from '../../src/actions/transaction.ts';
import { buildTestApp, POSTGRES_SKIP, TEST_DATABASE_URL, type TestApp } from '../support/app.ts';

const dir = mkdtempSync(join(tmpdir(), 'parley-cached-reads-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// Tables of the test's own: the queries are built on an untyped view of the database.
type Loose = Kysely<Record<string, Record<string, unknown>>>;

const namesOf = cachedQuery<[string], { name: string }>(
  1,
  (db: Q, kind: string) =>
    (db as unknown as Loose)
      .selectFrom('t')
      .innerJoin('k', 'k.id', 't.kind')
      .select('t.name')
      .where('k.name', '=', kind)
      .orderBy('t.id') as never,
);
const rename = compiledQuery(2, (db: Q, id: number, name: string) =>
  db
    .updateTable('t' as never)
    .set({ name } as never)
    .where('id' as never, '=', id as never),
);

async function withTables(store: Store): Promise<void> {
  await sql`CREATE TABLE k (id INTEGER PRIMARY KEY, name TEXT NOT NULL)`.execute(store.db);
  await sql`CREATE TABLE t (id INTEGER PRIMARY KEY, kind INTEGER NOT NULL, name TEXT NOT NULL)`.execute(
    store.db,
  );
  await sql`CREATE TABLE other (id INTEGER PRIMARY KEY)`.execute(store.db);
  await sql`INSERT INTO k (id, name) VALUES (1, 'a')`.execute(store.db);
  await sql`INSERT INTO t (id, kind, name) VALUES (1, 1, 'one'), (2, 1, 'two')`.execute(store.db);
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

test('a cached read is reused until a table it reads is written', async () => {
  const store = openSqlite({ source: ':memory:' });
  try {
    await withTables(store);
    const first = await namesOf.all(store.db, 'a');
    assert.deepEqual(first, [{ name: 'one' }, { name: 'two' }]);
    assert.ok(Object.isFrozen(first) && Object.isFrozen(first[0]), 'shared rows are frozen');
    assert.equal(await namesOf.all(store.db, 'a'), first, 'the same rows again');
    assert.deepEqual(await namesOf.all(store.db, 'b'), [], 'kept by argument');

    await sql`INSERT INTO other (id) VALUES (1)`.execute(store.db);
    await sql`SELECT * FROM t`.execute(store.db);
    assert.equal(await namesOf.all(store.db, 'a'), first, 'other tables and reads leave it');

    await rename.all(store.db, 1, 'uno');
    const renamed = await namesOf.all(store.db, 'a');
    assert.deepEqual(renamed, [{ name: 'uno' }, { name: 'two' }], 'a compiled write');

    await store.db
      .updateTable('k' as never)
      .set({ name: 'b' } as never)
      .execute();
    assert.deepEqual(await namesOf.all(store.db, 'a'), [], 'a write to the joined table');
    assert.deepEqual(await namesOf.all(store.db, 'b'), [{ name: 'uno' }, { name: 'two' }]);

    await sql`REPLACE INTO t (id, kind, name) VALUES (2, 1, 'dos')`.execute(store.db);
    assert.deepEqual(
      await namesOf.all(store.db, 'b'),
      [{ name: 'uno' }, { name: 'dos' }],
      'a write whose table is not recognised',
    );
  } finally {
    await store.close();
  }
});

test('a read inside a transaction sees its writes, and a rollback drops what it kept', async () => {
  const store = openSqlite({ source: ':memory:' });
  try {
    await withTables(store);
    const before = await namesOf.all(store.db, 'a');
    await assert.rejects(
      store.db.transaction().execute(async (trx) => {
        await rename.all(trx, 1, 'uncommitted');
        assert.deepEqual(await namesOf.all(trx, 'a'), [{ name: 'uncommitted' }, { name: 'two' }]);
        throw new Error('roll back');
      }),
      /roll back/,
    );
    assert.deepEqual(await namesOf.all(store.db, 'a'), before);

    // A change of a group commit that fails rolls back to its savepoint alone.
    const trx = await store.db.startTransaction().execute();
    const sp = await trx.savepoint('change').execute();
    await rename.all(sp, 2, 'undone');
    assert.deepEqual(await namesOf.all(sp, 'a'), [{ name: 'one' }, { name: 'undone' }]);
    await sp.rollbackToSavepoint('change').execute();
    await sp.releaseSavepoint('change').execute();
    assert.deepEqual(await namesOf.all(trx, 'a'), before);
    await trx.commit().execute();
    assert.deepEqual(await namesOf.all(store.db, 'a'), before);
  } finally {
    await store.close();
  }
});

test('kept reads are bounded by their rows as well as by their number', async () => {
  const store = openSqlite({ source: ':memory:' });
  const limits = { ...CACHED_READ_LIMITS };
  try {
    await withTables(store);
    await sql`INSERT INTO k (id, name) VALUES (2, 'b'), (3, 'c')`.execute(store.db);
    await sql`INSERT INTO t (id, kind, name) VALUES (3, 2, 'three'), (4, 3, 'four'), (5, 3, 'five'), (6, 3, 'six')`.execute(
      store.db,
    );
    CACHED_READ_LIMITS.rows = 3;
    const a = await namesOf.all(store.db, 'a');
    const b = await namesOf.all(store.db, 'b');
    assert.equal(await namesOf.all(store.db, 'a'), a, 'three rows in all are kept');
    assert.equal(await namesOf.all(store.db, 'b'), b);

    const c = await namesOf.all(store.db, 'c');
    assert.deepEqual(c, [{ name: 'four' }, { name: 'five' }, { name: 'six' }]);
    assert.notEqual(await namesOf.all(store.db, 'a'), a, 'past the bound, all were dropped');
    const again = await namesOf.all(store.db, 'a');
    assert.equal(await namesOf.all(store.db, 'a'), again, 'and are kept afresh');

    CACHED_READ_LIMITS.rows = 2;
    const large = await namesOf.all(store.db, 'c');
    assert.deepEqual(large, c, 'a read larger than the bound is given');
    assert.notEqual(await namesOf.all(store.db, 'c'), large, 'but not kept');
    assert.equal(await namesOf.all(store.db, 'a'), again, 'nor does it drop the others');

    CACHED_READ_LIMITS.rows = limits.rows;
    CACHED_READ_LIMITS.reads = 2;
    const kept = await namesOf.all(store.db, 'c');
    assert.equal(await namesOf.all(store.db, 'c'), kept);
    await namesOf.all(store.db, 'b');
    assert.notEqual(await namesOf.all(store.db, 'c'), kept, 'past two reads, all were dropped');
  } finally {
    Object.assign(CACHED_READ_LIMITS, limits);
    await store.close();
  }
});

test("another connection's commit is seen at the next turn of the event loop", async () => {
  const file = join(dir, 'two-connections.sqlite3');
  const server = openSqlite({ source: file });
  const cli = openSqlite({ source: file });
  try {
    await withTables(server);
    const before = await namesOf.all(server.db, 'a');
    await rename.all(cli.db, 1, 'from the command line');
    await nextTurn();
    assert.deepEqual(await namesOf.all(server.db, 'a'), [
      { name: 'from the command line' },
      { name: 'two' },
    ]);
    assert.notEqual(before[0].name, 'from the command line');
  } finally {
    await cli.close();
    await server.close();
  }
});

test('the tables a read names are found, and a read that lists them with a comma is refused', async () => {
  assert.deepEqual(
    tablesRead(
      'with recursive "g" as (select "group_id" as "id" from "members" union select "s"."group_id" from "subgroups" as "s" inner join "g" on "g"."id" = "s"."subgroup_id") select "id" from "g"',
    ),
    ['members', 'subgroups'],
  );
  assert.deepEqual(
    tablesRead(
      'select "t"."name", "k"."name" from "t" inner join "k" on "k"."id" = "t"."kind" order by "t"."id", "k"."id"',
    ),
    ['t', 'k'],
  );
  for (const sql of [
    'select * from "t", "k"',
    'select * from "t" as "x" , "k"',
    'select * from t x, k',
  ]) {
    assert.throws(() => tablesRead(sql), /not a comma/, sql);
  }
  const store = openSqlite({ source: ':memory:' });
  try {
    await withTables(store);
    const commaJoined = cachedQuery(
      1,
      (db: Q, kind: string) =>
        (db as unknown as Loose)
          .selectFrom(['t', 'k'])
          .select('t.name')
          .whereRef('k.id', '=', 't.kind')
          .where('k.name', '=', kind) as never,
    );
    await assert.rejects(commaJoined.all(store.db, 'a'), /not a comma/);
  } finally {
    await store.close();
  }
});

test('every foreign key that acts on another table is listed in CASCADES', async () => {
  const store = openSqlite({ source: ':memory:' });
  try {
    await migrateToLatest(store.db as never, 'sqlite');
    const raw = store.sqlite!;
    const tables = keepForLife(
      raw.prepare(
        `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`,
      ),
    )
      .pluck()
      .all() as string[];
    const acting: Record<string, string[]> = {};
    for (const table of tables) {
      const keys = keepForLife(raw.prepare(`PRAGMA foreign_key_list("${table}")`)).all() as Array<{
        table: string;
        on_update: string;
        on_delete: string;
      }>;
      for (const key of keys) {
        if (key.on_delete === 'NO ACTION' && key.on_update === 'NO ACTION') continue;
        (acting[key.table] ??= []).push(table);
      }
    }
    assert.deepEqual(acting, CASCADES);
    const triggers = raw.prepare(`SELECT name FROM sqlite_master WHERE type = 'trigger'`).all();
    assert.deepEqual(triggers, [], 'no trigger writes behind a statement');
  } finally {
    await store.close();
  }
});

test('a cascade drops the reads of the tables it reaches', async () => {
  const store = openSqlite({ source: ':memory:' });
  try {
    await sql`PRAGMA foreign_keys = ON`.execute(store.db);
    await sql`CREATE TABLE custom_profile_fields (id INTEGER PRIMARY KEY)`.execute(store.db);
    await sql`CREATE TABLE custom_profile_field_values (field_id INTEGER NOT NULL REFERENCES custom_profile_fields (id) ON DELETE CASCADE, value TEXT)`.execute(
      store.db,
    );
    await sql`INSERT INTO custom_profile_fields (id) VALUES (1)`.execute(store.db);
    await sql`INSERT INTO custom_profile_field_values (field_id, value) VALUES (1, 'x')`.execute(
      store.db,
    );
    const values = cachedQuery(1, (db: Q, fieldId: number) =>
      db
        .selectFrom('custom_profile_field_values' as never)
        .select('value' as never)
        .where('field_id' as never, '=', fieldId as never),
    );
    assert.deepEqual(await values.all(store.db, 1), [{ value: 'x' }]);
    await sql`DELETE FROM custom_profile_fields WHERE id = 1`.execute(store.db);
    assert.deepEqual(await values.all(store.db, 1), []);
  } finally {
    await store.close();
  }
});

// On PostgreSQL a cached read is kept under the counter of migrations 0011 and 0012, read
// once per turn, and while no transaction of this process that wrote its tables is open.
describe('cached reads on PostgreSQL', { skip: POSTGRES_SKIP }, () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp();
  });
  afterEach(async () => {
    await t.close();
  });
  const db = () => t.ctx.store.db;
  const channelId = () => t.fx.channels.general.id;
  // A request reads the counter first (authentication); the reads after it rely on that.
  const request = async () => {
    await nextTurn();
    await t.ctx.store.accountsVersion();
  };
  const read = () => getChannel(db(), t.fx.realm.id, channelId());
  const describeChannel = (q: Q, description: string) =>
    q.updateTable('channels').set({ description }).where('id', '=', channelId()).execute();

  test('kept while nothing changes; a write by this process or another shows next', async () => {
    await request();
    const first = await read();
    assert.equal(await read(), first, 'the same row again');
    await describeChannel(db(), 'by this process');
    assert.equal((await read())!.description, 'by this process', 'at once');

    const other = openPostgres({ url: TEST_DATABASE_URL!, schema: t.ctx.store.schema, max: 1 });
    try {
      await request();
      const kept = await read();
      assert.equal(await read(), kept);
      await describeChannel(other.db, 'by another process');
      await request();
      assert.equal((await read())!.description, 'by another process', 'from the next request');
    } finally {
      await other.close();
    }
  });

  test('an open transaction keeps its writes to itself; a rollback leaves the old rows', async () => {
    await request();
    const before = await read();
    await db()
      .transaction()
      .execute(async (trx) => {
        await describeChannel(trx, 'not committed');
        assert.equal(
          (await getChannel(trx, t.fx.realm.id, channelId()))!.description,
          'not committed',
        );
        const outside = await read();
        assert.equal(outside!.description, before!.description, 'outside: the committed row');
      });
    await request();
    assert.equal((await read())!.description, 'not committed');

    await db()
      .transaction()
      .execute(async (trx) => {
        await describeChannel(trx, 'rolled back');
        await getChannel(trx, t.fx.realm.id, channelId());
        throw new Error('roll back');
      })
      .catch(() => undefined);
    await request();
    assert.equal((await read())!.description, 'not committed');
  });

  // Another process's commit a moment ago is not yet in this process's counter (it is read
  // once a turn and trusted for 100 ms). A change that waited for its realm's turn, and a
  // register snapshot, read the counter themselves.
  test("a change that takes the realm's turn, and a snapshot, see another process's commit at once", async () => {
    const other = openPostgres({ url: TEST_DATABASE_URL!, schema: t.ctx.store.schema, max: 1 });
    try {
      await request();
      await read();
      await describeChannel(other.db, 'before the change');
      const inChange = await withTransaction(t.ctx, t.fx.realm.id, async (work) =>
        getChannel(work.db, t.fx.realm.id, channelId()),
      );
      assert.equal(inChange!.description, 'before the change');

      await request();
      await read();
      await describeChannel(other.db, 'before the snapshot');
      const { value: inSnapshot } = await withReadSnapshot(t.ctx, t.fx.realm.id, (q) =>
        getChannel(q, t.fx.realm.id, channelId()),
      );
      assert.equal(inSnapshot!.description, 'before the snapshot');
    } finally {
      await other.close();
    }
  });
});
