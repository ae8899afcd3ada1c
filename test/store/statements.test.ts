// The SQLite store reuses prepared statements by SQL text: a query run again is not
// prepared again, its parameters are bound afresh, and a failed or abandoned run leaves
// the statement usable.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { openSqlite, sqliteAtOnce } from '../../src/store/db.ts';
import { FREEING_SQLITE_OBJECTS_ABORTS, freeingAborts } from '../../src/store/sqlite-lifetime.ts';

function countingPrepares(store: ReturnType<typeof openSqlite>): string[] {
  const raw = store.sqlite!;
  const prepare = raw.prepare.bind(raw);
  const seen: string[] = [];
  raw.prepare = ((text: string) => {
    seen.push(text);
    return prepare(text);
  }) as typeof raw.prepare;
  return seen;
}

test('a query run again reuses its statement with the new parameters', async () => {
  const store = openSqlite({ source: ':memory:' });
  try {
    await sql`CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL)`.execute(store.db);
    const prepared = countingPrepares(store);
    const insert = (id: number, name: string) =>
      sql`INSERT INTO t (id, name) VALUES (${id}, ${name})`.execute(store.db);
    const name = async (id: number) =>
      (await sql<{ name: string }>`SELECT name FROM t WHERE id = ${id}`.execute(store.db)).rows;
    const inserted = await insert(1, 'one');
    await insert(2, 'two');
    assert.equal(inserted.numAffectedRows, 1n);
    assert.deepEqual(await name(1), [{ name: 'one' }]);
    assert.deepEqual(await name(2), [{ name: 'two' }]);
    assert.deepEqual(await name(3), []);
    assert.deepEqual(prepared, [
      'INSERT INTO t (id, name) VALUES (?, ?)',
      'SELECT name FROM t WHERE id = ?',
    ]);
  } finally {
    await store.close();
  }
});

test('a reused statement recovers from a failed run and from a stream left early', async () => {
  const store = openSqlite({ source: ':memory:' });
  try {
    await sql`CREATE TABLE t (id INTEGER PRIMARY KEY)`.execute(store.db);
    const prepared = countingPrepares(store);
    const insert = (id: number) => store.db.insertInto('t' as never).values({ id } as never);
    await insert(1).execute();
    await assert.rejects(insert(1).execute(), /UNIQUE constraint failed/);
    await insert(2).execute();
    await insert(3).execute();
    const ids = store.db
      .selectFrom('t' as never)
      .select('id' as never)
      .orderBy('id' as never);
    for await (const row of ids.stream()) {
      assert.deepEqual(row, { id: 1 });
      break;
    }
    assert.deepEqual(await ids.execute(), [{ id: 1 }, { id: 2 }, { id: 3 }]);
    assert.equal(prepared.length, 2);
  } finally {
    await store.close();
  }
});

test('rows are objects with every column in order, whatever the values', async () => {
  const store = openSqlite({ source: ':memory:' });
  try {
    await sql`CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, score REAL, data BLOB)`.execute(
      store.db,
    );
    await sql`INSERT INTO t VALUES (1, 'one', 1.5, x'00ff'), (2, NULL, NULL, NULL)`.execute(
      store.db,
    );
    const rows = (await sql`SELECT * FROM t ORDER BY id`.execute(store.db)).rows;
    assert.deepEqual(rows, [
      { id: 1, name: 'one', score: 1.5, data: Buffer.from([0, 255]) },
      { id: 2, name: null, score: null, data: null },
    ]);
    assert.deepEqual(Object.keys(rows[0] as object), ['id', 'name', 'score', 'data']);
    // A name given twice keeps its last value, as better-sqlite3's own rows do.
    const twice = await sql`SELECT 1 AS a, 2 AS a, 3 AS b`.execute(store.db);
    assert.deepEqual(twice.rows, [{ a: 2, b: 3 }]);
    assert.deepEqual((await sql`SELECT * FROM t WHERE id = 9`.execute(store.db)).rows, []);
  } finally {
    await store.close();
  }
});

test('a query run while its statement is still being read gets another, kept for the next time', async () => {
  const store = openSqlite({ source: ':memory:' });
  try {
    await sql`CREATE TABLE t (id INTEGER PRIMARY KEY)`.execute(store.db);
    await sql`INSERT INTO t VALUES (1), (2), (3)`.execute(store.db);
    const prepared = countingPrepares(store);
    const ids = store.db
      .selectFrom('t' as never)
      .select('id' as never)
      .orderBy('id' as never);
    const text = ids.compile().sql;
    for (let round = 0; round < 2; round++) {
      for await (const row of ids.stream()) {
        assert.deepEqual(row, { id: 1 });
        // The streamed query's statement is busy until the stream ends.
        assert.deepEqual(sqliteAtOnce(store.db)!.run(text, []), [{ id: 1 }, { id: 2 }, { id: 3 }]);
        break;
      }
    }
    assert.deepEqual(prepared, [text, text]);
  } finally {
    await store.close();
  }
});

test('freeing a better-sqlite3 object aborts on Node 24.19 and later 24.x, and on 25 (unchecked)', () => {
  const affected = ['24.19.0', '24.21.0', '25.0.0'];
  const unaffected = ['20.19.0', '22.23.3', '24.18.1', '26.12.1'];
  assert.deepEqual(affected.map(freeingAborts), [true, true, true]);
  assert.deepEqual(unaffected.map(freeingAborts), [false, false, false, false]);
  assert.equal(FREEING_SQLITE_OBJECTS_ABORTS, freeingAborts(process.versions.node));
});

test('parameters bind alike however many a statement has, past the spread limit as well', async () => {
  const store = openSqlite({ source: ':memory:' });
  try {
    await sql`CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, data BLOB, big INTEGER)`.execute(
      store.db,
    );
    const rows = [
      { id: 1, name: 'één', data: Buffer.from([0, 1, 2]), big: 2n ** 40n },
      { id: 2, name: null, data: null, big: -7 },
      { id: 3, name: '', data: Buffer.alloc(0), big: 0 },
    ];
    await store.db
      .insertInto('t' as never)
      .values(rows as never)
      .execute();
    const read = await sql<{
      id: number;
    }>`SELECT id, name, data, big FROM t ORDER BY id`.execute(store.db);
    assert.deepEqual(read.rows, [
      { id: 1, name: 'één', data: Buffer.from([0, 1, 2]), big: 2 ** 40 },
      { id: 2, name: null, data: null, big: -7 },
      { id: 3, name: '', data: Buffer.alloc(0), big: 0 },
    ]);
    // An `in` list of 4,096 parameters and one of 10,000 (bound as one array), streamed too.
    for (const size of [4096, 10_000]) {
      const ids = Array.from({ length: size }, (_, i) => size - i);
      const found = store.db
        .selectFrom('t' as never)
        .select('id' as never)
        .where('id' as never, 'in', ids as never)
        .orderBy('id' as never);
      const left = size === 4096 ? [{ id: 1 }, { id: 2 }, { id: 3 }] : [{ id: 1 }];
      assert.deepEqual(await found.execute(), left, `${size}`);
      const streamed: unknown[] = [];
      for await (const row of found.stream()) streamed.push(row);
      assert.deepEqual(streamed, left, `${size} streamed`);
      const deleted = await store.db
        .deleteFrom('t' as never)
        .where('id' as never, 'in', ids.filter((id) => id !== 1) as never)
        .executeTakeFirst();
      assert.equal(deleted.numDeletedRows, size === 4096 ? 2n : 0n);
    }
  } finally {
    await store.close();
  }
});

test('a parameter that is a list or an object is refused, as SQLite cannot bind it', async () => {
  const store = openSqlite({ source: ':memory:' });
  try {
    for (const value of [[2], { a: 1 }, new Date(0)]) {
      await assert.rejects(
        sql`SELECT ${value as never} AS x, ${1} AS y`.execute(store.db),
        /can only bind numbers, strings, bigints, buffers, and null/,
        JSON.stringify(value),
      );
    }
    // A buffer binds as a blob.
    const blob = await sql<{ x: Buffer }>`SELECT ${Buffer.from([7])} AS x`.execute(store.db);
    assert.deepEqual(blob.rows, [{ x: Buffer.from([7]) }]);
  } finally {
    await store.close();
  }
});
