// Group commit (src/actions/group-commit.ts): concurrent changes on SQLite share one
// transaction, each in its own savepoint, and are answered only after the shared commit.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { GroupCommit } from '../../src/actions/group-commit.ts';
import type { Tx } from '../../src/store/db.ts';
import { keepForLife } from '../../src/store/sqlite-lifetime.ts';
import { buildTestApp, type TestApp } from '../support/app.ts';

let t: TestApp;
let gc: GroupCommit;
let begun: number;
let commits: number;
let savepoints: number;
let restoreRun: () => void = () => undefined;
beforeEach(async () => {
  t = await buildTestApp();
  await sql`create table gc_probe (id integer primary key, v text not null unique)`.execute(
    t.ctx.db,
  );
  gc = new GroupCommit(t.ctx.db);
  // Count the transactions the committer starts, and what SQLite is asked to do.
  begun = 0;
  const start = t.ctx.db.startTransaction.bind(t.ctx.db);
  t.ctx.db.startTransaction = () => {
    begun += 1;
    return start();
  };
  commits = 0;
  savepoints = 0;
  // Statements are prepared once and kept, so count their runs: COMMIT and SAVEPOINT are
  // run through better-sqlite3's Statement#run.
  const statement = Object.getPrototypeOf(keepForLife(t.ctx.store.sqlite!.prepare('select 1'))) as {
    run: (...args: unknown[]) => unknown;
  };
  const run = statement.run;
  statement.run = function (this: { source: string }, ...args: unknown[]) {
    if (/^\s*commit\b/i.test(this.source)) commits += 1;
    if (/^\s*savepoint\b/i.test(this.source)) savepoints += 1;
    return run.apply(this, args);
  };
  restoreRun = () => (statement.run = run);
});
afterEach(async () => {
  restoreRun();
  await t.close();
});

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

const insert = (v: string) => async (trx: Tx) => {
  await sql`insert into gc_probe (v) values (${v})`.execute(trx);
  return v;
};
const stored = async () =>
  (await sql<{ v: string }>`select v from gc_probe order by id`.execute(t.ctx.db)).rows.map(
    (r) => r.v,
  );

/** A change that holds the writer until released: the others queue behind it. */
function blocker(): { body: (trx: Tx) => Promise<string>; release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  return {
    release,
    body: async (trx) => {
      await gate;
      return insert('first')(trx);
    },
  };
}

describe(
  'group commit',
  { skip: process.env.PARLEY_TEST_DATABASE_URL ? 'SQLite only' : false },
  () => {
    test('changes that queue behind a commit share the next one, in order', async () => {
      const first = blocker();
      const a = gc.run(first.body);
      // The first change starts at the end of this turn; the rest arrive while it runs.
      await nextTurn();
      const rest = ['b', 'c', 'd'].map((v) => gc.run(insert(v)));
      first.release();
      assert.deepEqual(await Promise.all([a, ...rest]), ['first', 'b', 'c', 'd']);
      assert.deepEqual(await stored(), ['first', 'b', 'c', 'd']);
      // The first ran alone; the three that waited for it were committed together.
      assert.equal(begun, 2);
      assert.equal(commits, 2);
    });

    test('changes that arrive in one turn of the event loop share one commit', async () => {
      const answers = await Promise.all(['a', 'b', 'c'].map((v) => gc.run(insert(v))));
      assert.deepEqual(answers, ['a', 'b', 'c']);
      assert.deepEqual(await stored(), ['a', 'b', 'c']);
      assert.equal(begun, 1);
      assert.equal(commits, 1);
    });

    test('a change alone in its turn commits alone, without savepoints', async () => {
      assert.equal(await gc.run(insert('a')), 'a');
      await nextTurn();
      assert.equal(await gc.run(insert('b')), 'b');
      assert.deepEqual(await stored(), ['a', 'b']);
      assert.equal(begun, 2);
      assert.equal(commits, 2);
      assert.equal(savepoints, 0);
    });

    test('a failing change rolls back alone; the others of its batch are committed', async () => {
      const first = blocker();
      const a = gc.run(first.body);
      const b = gc.run(insert('b'));
      const failing = gc.run(async (trx) => {
        await insert('half-done')(trx);
        throw new Error('refused after a write');
      });
      const duplicate = gc.run(insert('b'));
      const d = gc.run(insert('d'));
      first.release();
      assert.equal(await a, 'first');
      assert.equal(await b, 'b');
      await assert.rejects(failing, /refused after a write/);
      await assert.rejects(duplicate, /UNIQUE constraint failed/);
      assert.equal(await d, 'd');
      assert.deepEqual(await stored(), ['first', 'b', 'd']);
    });

    /** Let the database grow by at most `pages` more pages: then writes fail with SQLITE_FULL. */
    const capDatabase = (pages: number | null) => {
      const sqlite = t.ctx.store.sqlite!;
      const count = keepForLife(sqlite.prepare('PRAGMA page_count')).pluck().get() as number;
      sqlite.exec(`PRAGMA max_page_count = ${pages === null ? 1_000_000_000 : count + pages}`);
    };
    const big = (v: string) => async (trx: Tx) => {
      await sql`insert into gc_probe (v) values (${v + 'x'.repeat(200_000)})`.execute(trx);
      return v;
    };

    test('a change that fills the database fails with that error, and stores nothing', async () => {
      capDatabase(5);
      // SQLite rolls the transaction back itself; the ROLLBACK after it finds none open.
      await assert.rejects(gc.run(big('big')), { code: 'SQLITE_FULL' });
      assert.equal(t.ctx.store.sqlite!.inTransaction, false);
      assert.deepEqual(await stored(), []);
      capDatabase(null);
      assert.equal(await gc.run(insert('after')), 'after');
      assert.deepEqual(await stored(), ['after']);
    });

    test('a batch whose transaction SQLite rolled back fails whole, with the cause', async () => {
      await gc.run(insert('before'));
      capDatabase(5);
      const first = blocker();
      const a = gc.run(first.body);
      await nextTurn();
      // b's savepoint was released before c filled the database, taking the transaction with it.
      const rest = [gc.run(insert('b')), gc.run(big('c')), gc.run(insert('d'))];
      first.release();
      assert.equal(await a, 'first');
      for (const change of rest) await assert.rejects(change, { code: 'SQLITE_FULL' });
      assert.deepEqual(await stored(), ['before', 'first']);
      capDatabase(null);
      const again = await Promise.all([gc.run(insert('b')), gc.run(insert('d'))]);
      assert.deepEqual(again, ['b', 'd']);
      assert.deepEqual(await stored(), ['before', 'first', 'b', 'd']);
    });

    test('no change of a batch is answered before its commit', async () => {
      const first = blocker();
      const a = gc.run(first.body);
      let openAtAnswer: boolean | null = null;
      const b = gc.run(insert('b')).then((v) => {
        openAtAnswer = t.ctx.store.sqlite!.inTransaction;
        return v;
      });
      const c = gc.run(insert('c'));
      first.release();
      await Promise.all([a, b, c]);
      // The shared transaction was closed (committed) before b was answered.
      assert.equal(openAtAnswer, false);
    });

    test('concurrent sends through HTTP all land, with their per-user rows', async () => {
      const sends = Array.from({ length: 20 }, (_, i) =>
        t.as(t.fx.member).post('/messages', {
          type: 'stream',
          to: t.fx.channels.general.id,
          topic: 'load',
          content: `message ${i}`,
        }),
      );
      const answers = await Promise.all(sends);
      const ids = answers.map((r) => {
        assert.equal(r.status, 200, r.text);
        return r.body.id as number;
      });
      assert.equal(new Set(ids).size, 20);
      const rows = await t.ctx.db
        .selectFrom('user_messages')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('message_id', 'in', ids)
        .executeTakeFirstOrThrow();
      // general has seven subscribers: the fixture's active users but the deactivated one.
      assert.equal(Number(rows.n), 20 * 7);
    });
  },
);
