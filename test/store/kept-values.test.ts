// Kept values (store/kept-values.ts) are given again while no table their work read has been
// written, by this connection or another; the tables are gathered from the statements run
// during the work and from the cached reads it reused.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { cachedQuery } from '../../src/store/compiled.ts';
import { openPostgres, openSqlite, type Q, type Store } from '../../src/store/db.ts';
import { KeptValues } from '../../src/store/kept-values.ts';
import { POSTGRES_SKIP, TEST_DATABASE_URL } from '../support/app.ts';

const dir = mkdtempSync(join(tmpdir(), 'parley-kept-values-'));
after(() => rmSync(dir, { recursive: true, force: true }));

type Loose = Kysely<Record<string, Record<string, unknown>>>;

/** One name of table a by id; a cached read. */
const nameInA = cachedQuery<[number], { name: string }>(
  1,
  (db: Q, id: number) =>
    (db as unknown as Loose).selectFrom('a').select('name').where('id', '=', id) as never,
);

async function withTables(store: Store): Promise<void> {
  for (const table of ['a', 'b', 'c', 'mine'])
    await sql`CREATE TABLE ${sql.raw(table)} (id INTEGER PRIMARY KEY, name TEXT NOT NULL)`.execute(
      store.db,
    );
  for (const table of ['a', 'b', 'c', 'mine'])
    await sql`INSERT INTO ${sql.raw(table)} (id, name) VALUES (1, ${table})`.execute(store.db);
}

/** A value worked out from a (a cached read) and b (a statement), counting the work's runs. */
function counted(store: Store) {
  let runs = 0;
  const work = async (): Promise<string> => {
    runs++;
    const a = await nameInA.first(store.db, 1);
    const b = await sql<{ name: string }>`SELECT name FROM b WHERE id = 1`.execute(store.db);
    return `${a?.name}+${b.rows[0].name}`;
  };
  return { work, runs: () => runs };
}

const always = () => true;
const limits = { entries: 100, weight: 1000, weigh: (_key: string, value: string) => value.length };

async function valueOf(
  kept: KeptValues<string, string>,
  store: Store,
  work: () => Promise<string>,
): Promise<string> {
  return kept.get(store.db, 'k') ?? kept.work(store.db, 'k', work, always);
}

test('a kept value is given again until a table its work read is written', async () => {
  const store = openSqlite({ source: ':memory:' });
  try {
    await withTables(store);
    const kept = new KeptValues<string, string>(['mine'], limits);
    const { work, runs } = counted(store);
    // The cached read is warm before the work, so the work reuses it without a statement.
    assert.deepEqual(await nameInA.first(store.db, 1), { name: 'a' });

    assert.equal(await valueOf(kept, store, work), 'a+b');
    assert.equal(await valueOf(kept, store, work), 'a+b');
    assert.equal(runs(), 1, 'given again');

    await sql`UPDATE c SET name = 'c2'`.execute(store.db);
    assert.equal(await valueOf(kept, store, work), 'a+b');
    assert.equal(runs(), 1, 'a table the work did not read leaves it');

    await sql`UPDATE a SET name = 'a2'`.execute(store.db);
    assert.equal(await valueOf(kept, store, work), 'a2+b', 'a table read through a cached read');
    assert.equal(runs(), 2);

    await sql`UPDATE b SET name = 'b2'`.execute(store.db);
    assert.equal(await valueOf(kept, store, work), 'a2+b2', 'a table read by a statement');
    assert.equal(runs(), 3);

    await sql`UPDATE mine SET name = 'm2'`.execute(store.db);
    assert.equal(await valueOf(kept, store, work), 'a2+b2');
    assert.equal(runs(), 4, 'a table the caller named');

    assert.equal(kept.get(store.db, 'another key'), undefined, 'kept by key');
  } finally {
    await store.close();
  }
});

test('nothing is kept when a read table changes during the work, or the tables are unknown', async () => {
  const store = openSqlite({ source: ':memory:' });
  try {
    await withTables(store);
    const kept = new KeptValues<string, string>([], limits);
    const { work } = counted(store);

    const changing = async (): Promise<string> => {
      const value = await work();
      await sql`UPDATE b SET name = 'during'`.execute(store.db);
      return value;
    };
    assert.equal(await kept.work(store.db, 'k', changing, always), 'a+b');
    assert.equal(kept.get(store.db, 'k'), undefined, 'written while the work ran');

    const commaJoined = async (): Promise<string> => {
      await sql`SELECT a.name FROM a, b WHERE a.id = b.id`.execute(store.db);
      return 'x';
    };
    assert.equal(await kept.work(store.db, 'k', commaJoined, always), 'x');
    assert.equal(kept.get(store.db, 'k'), undefined, 'tables after a comma are not told');

    await assert.rejects(
      kept.work(store.db, 'k', () => Promise.reject(new Error('failed')), always),
      /failed/,
    );
    assert.equal(kept.get(store.db, 'k'), undefined, 'a failed work');

    assert.equal(await kept.work(store.db, 'k', work, () => false), 'a+during');
    assert.equal(kept.get(store.db, 'k'), undefined, 'refused by the caller');
  } finally {
    await store.close();
  }
});

test('past its count or its weight every kept value goes', async () => {
  const store = openSqlite({ source: ':memory:' });
  try {
    await withTables(store);
    const kept = new KeptValues<number, string>([], {
      entries: 3,
      weight: 10,
      weigh: (_key, value) => value.length,
    });
    const keep = (key: number, value: string) =>
      kept.work(store.db, key, async () => value, always);
    const all = () => [1, 2, 3, 4].map((key) => kept.get(store.db, key));
    await keep(1, 'aaa');
    await keep(2, 'bbb');
    await keep(2, 'ccc');
    assert.deepEqual(all(), ['aaa', 'ccc', undefined, undefined], 'a value kept again replaces');
    await keep(3, 'dddd');
    assert.deepEqual(all(), ['aaa', 'ccc', 'dddd', undefined], 'weight 10 of 10');
    await keep(4, 'e');
    assert.deepEqual(all(), [undefined, undefined, undefined, 'e'], 'past the weight');
    await keep(1, 'x'.repeat(11));
    assert.deepEqual(all(), [undefined, undefined, undefined, 'e'], 'heavier than all alone');
    await keep(1, 'a');
    await keep(2, 'b');
    await keep(3, 'c');
    assert.deepEqual(all(), [undefined, undefined, 'c', undefined], 'past the count');

    const byKey = new KeptValues<string, string>([], {
      entries: 3,
      weight: 10,
      weigh: (key, value) => key.length + value.length,
    });
    const long = 'k'.repeat(10);
    await byKey.work(store.db, long, async () => 'v', always);
    assert.equal(byKey.get(store.db, long), undefined, 'a long key weighs with its value');
    await byKey.work(store.db, 'k', async () => 'v', always);
    assert.equal(byKey.get(store.db, 'k'), 'v');
  } finally {
    await store.close();
  }
});

test("another connection's commit is seen at the next turn of the event loop", async () => {
  const file = join(dir, 'two-connections.sqlite3');
  const server = openSqlite({ source: file });
  const cli = openSqlite({ source: file });
  try {
    await withTables(server);
    const kept = new KeptValues<string, string>([], limits);
    const { work, runs } = counted(server);
    assert.equal(await valueOf(kept, server, work), 'a+b');
    await sql`UPDATE c SET name = 'elsewhere'`.execute(cli.db);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(await valueOf(kept, server, work), 'a+b');
    assert.equal(runs(), 2, 'any commit of another connection, whatever its table');
  } finally {
    await cli.close();
    await server.close();
  }
});

test('on PostgreSQL the work runs each time', { skip: POSTGRES_SKIP }, async () => {
  const store = openPostgres({ url: TEST_DATABASE_URL ?? '', max: 1 });
  try {
    const kept = new KeptValues<string, number>([], { ...limits, weigh: () => 1 });
    let runs = 0;
    const work = async (): Promise<number> => {
      runs++;
      await sql`SELECT 1`.execute(store.db);
      return runs;
    };
    assert.equal(await kept.work(store.db, 'k', work, always), 1);
    assert.equal(kept.get(store.db, 'k'), undefined);
    assert.equal(await kept.work(store.db, 'k', work, always), 2);
  } finally {
    await store.close();
  }
});
