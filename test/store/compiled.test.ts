// Compiled queries run on SQLite's connection at once when they can, and wait their turn
// when another transaction holds the connection: a read from outside never sees a write
// that is not committed, and a read inside a transaction sees the transaction's own writes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { compiledQuery } from '../../src/store/compiled.ts';
import { openSqlite, type Q } from '../../src/store/db.ts';

const nameOf = compiledQuery(1, (db: Q, id: number) =>
  db
    .selectFrom('t' as never)
    .select('name' as never)
    .where('id' as never, '=', id as never),
);
const rename = compiledQuery(2, (db: Q, id: number, name: string) =>
  db
    .updateTable('t' as never)
    .set({ name } as never)
    .where('id' as never, '=', id as never)
    .returning('name' as never),
);

test('a compiled read waits for an open transaction and sees only what it committed', async () => {
  const store = openSqlite({ source: ':memory:' });
  try {
    await sql`CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL)`.execute(store.db);
    await sql`INSERT INTO t (id, name) VALUES (1, 'before')`.execute(store.db);
    assert.deepEqual(await nameOf.all(store.db, 1), [{ name: 'before' }]);

    let outside: Promise<unknown> | undefined;
    const committed = store.db.transaction().execute(async (trx) => {
      assert.deepEqual(await rename.all(trx, 1, 'inside'), [{ name: 'inside' }]);
      assert.deepEqual(await nameOf.first(trx, 1), { name: 'inside' });
      outside = nameOf.first(store.db, 1);
      // Give the outside read every chance to run before the commit.
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(await rename.all(trx, 1, 'committed'), [{ name: 'committed' }]);
    });
    await committed;
    assert.deepEqual(await outside, { name: 'committed' });

    const rolledBack = store.db.transaction().execute(async (trx) => {
      await rename.all(trx, 1, 'rolled back');
      outside = nameOf.first(store.db, 1);
      await new Promise((resolve) => setImmediate(resolve));
      throw new Error('roll back');
    });
    await assert.rejects(rolledBack, /roll back/);
    assert.deepEqual(await outside, { name: 'committed' });
    assert.equal(await nameOf.first(store.db, 2), undefined);
  } finally {
    await store.close();
  }
});

// The build's arguments become the statement's parameters: as they are when the SQL carries
// them in the order given and nothing else, mapped one by one otherwise.
const inOrder = compiledQuery(3, (db: Q, id: number, kind: string, name: string) =>
  db.insertInto('u' as never).values({ id, kind, name } as never),
);
const outOfOrder = compiledQuery(2, (db: Q, name: string, kind: string) =>
  db
    .selectFrom('u' as never)
    .select('id' as never)
    .where('kind' as never, '=', kind as never)
    .where('name' as never, '=', name as never)
    .where('id' as never, '>', 1 as never),
);

test('a compiled query binds its arguments where its SQL puts them, with its own constants', async () => {
  const store = openSqlite({ source: ':memory:' });
  try {
    await sql`CREATE TABLE u (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL)`.execute(
      store.db,
    );
    await inOrder.all(store.db, 1, 'bot', 'ann');
    await inOrder.all(store.db, 2, 'bot', 'ann');
    await inOrder.all(store.db, 3, 'ann', 'bot');
    assert.deepEqual((await sql`SELECT id, kind, name FROM u ORDER BY id`.execute(store.db)).rows, [
      { id: 1, kind: 'bot', name: 'ann' },
      { id: 2, kind: 'bot', name: 'ann' },
      { id: 3, kind: 'ann', name: 'bot' },
    ]);
    // kind = 'bot' and name = 'ann' and id > 1: the arguments swapped would find row 3.
    assert.deepEqual(await outOfOrder.all(store.db, 'ann', 'bot'), [{ id: 2 }]);
    assert.deepEqual(await outOfOrder.all(store.db, 'bot', 'ann'), [{ id: 3 }]);
  } finally {
    await store.close();
  }
});
