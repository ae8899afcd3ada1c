// commitOnPostgres: a PostgreSQL transaction whose last statement travels with its COMMIT.
// What it must keep from an ordinary transaction: the body and the last statement commit
// together or not at all, and the connection goes back to the pool usable either way.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { sql } from 'kysely';
import { commitOnPostgres, type Tx } from '../../src/store/db.ts';
import { advanceEventSeqStatement, currentEventSeq, eventSeqOf } from '../../src/store/realms.ts';
import { buildTestApp, POSTGRES_SKIP, type TestApp } from '../support/app.ts';

describe('commitOnPostgres', { skip: POSTGRES_SKIP }, () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp();
  });
  afterEach(async () => {
    await t.close();
  });
  const db = () => t.ctx.store.db;
  const realmId = () => t.fx.realm.id;
  const realmName = async () =>
    (
      await db()
        .selectFrom('realms')
        .select('name')
        .where('id', '=', realmId())
        .executeTakeFirstOrThrow()
    ).name;
  const rename = (trx: Tx, name: string) =>
    trx.updateTable('realms').set({ name }).where('id', '=', realmId()).execute();

  test('the last statement answers with its rows, and it and the body are committed', async () => {
    const before = await currentEventSeq(db(), realmId());
    const done = await commitOnPostgres(
      db(),
      async (trx) => {
        await rename(trx, 'Renamed in the body');
        return 'the body’s value';
      },
      () => advanceEventSeqStatement(realmId()),
    );
    assert.equal(done.value, 'the body’s value');
    assert.equal(eventSeqOf(done.rows, realmId()), before + 1);
    assert.equal(await currentEventSeq(db(), realmId()), before + 1);
    assert.equal(await realmName(), 'Renamed in the body');
  });

  test('without a last statement it commits the body and answers no rows', async () => {
    const before = await currentEventSeq(db(), realmId());
    const done = await commitOnPostgres(
      db(),
      (trx) => rename(trx, 'Plain commit'),
      () => null,
    );
    assert.deepEqual(done.rows, []);
    assert.equal(await realmName(), 'Plain commit');
    assert.equal(await currentEventSeq(db(), realmId()), before);
  });

  test('a failing body leaves nothing behind and the last statement is not sent', async () => {
    const name = await realmName();
    const before = await currentEventSeq(db(), realmId());
    let asked = false;
    await assert.rejects(
      commitOnPostgres(
        db(),
        async (trx) => {
          await rename(trx, 'Never committed');
          throw new Error('the body failed');
        },
        () => {
          asked = true;
          return advanceEventSeqStatement(realmId());
        },
      ),
      /the body failed/,
    );
    assert.equal(asked, false);
    assert.equal(await realmName(), name);
    assert.equal(await currentEventSeq(db(), realmId()), before);
  });

  test('a failing last statement rolls the body back; every connection stays usable', async () => {
    const name = await realmName();
    // More attempts at once than the pool has connections, so every connection fails one;
    // then as many queries at once as the pool holds, each on its own connection.
    const attempts = await Promise.allSettled(
      Array.from({ length: 12 }, () =>
        commitOnPostgres(
          db(),
          (trx) => rename(trx, 'Never committed'),
          () => 'select no_such_column from "realms"',
        ),
      ),
    );
    for (const a of attempts) {
      assert.equal(a.status, 'rejected');
      assert.match(String((a as PromiseRejectedResult).reason), /no_such_column/);
    }
    assert.equal(await realmName(), name);
    const after = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        sql<{ n: number }>`select ${i}::int as n, pg_sleep(0.05)::text as slept`.execute(db()),
      ),
    );
    assert.deepEqual(
      after.map((r) => r.rows[0].n),
      [0, 1, 2, 3, 4],
    );
  });
});

// The statement is text with the id written into it: only a whole number may be.
test('a realm id that is not an integer is refused before any SQL is made of it', () => {
  assert.throws(() => advanceEventSeqStatement(1.5), /not a realm id: 1.5/);
  assert.throws(() => advanceEventSeqStatement(Number.NaN), /not a realm id: NaN/);
  assert.equal(
    advanceEventSeqStatement(7),
    'insert into "realm_event_seqs" ("realm_id", "event_seq") values (7, 1) on conflict ("realm_id") do update set "event_seq" = "realm_event_seqs"."event_seq" + 1 returning "event_seq"',
  );
});
