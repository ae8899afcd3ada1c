// Which statements a PostgreSQL pool connection counts as writes, and when their tables stop
// being pending: at the end of the transaction, or of a statement outside one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PostgresTransactionWrites } from '../../src/store/db.ts';
import { TableWrites } from '../../src/store/table-writes.ts';

function connection() {
  const writes = new TableWrites();
  const tx = new PostgresTransactionWrites(writes);
  /** Sends a statement; its answer arrives at once. */
  const run = (text: string) => {
    if (tx.starting(text)) tx.ended();
  };
  return { writes, tx, run };
}

test('reads and transaction control are not writes', () => {
  const { writes, run } = connection();
  const at = writes.now();
  for (const text of [
    'select * from "channels" where "id" = $1',
    'with recursive "g" as (select 1) select "id" from "g"',
    'begin',
    'savepoint "change"',
    'release "change"',
    'commit',
    "set local statement_timeout = '1s'",
  ])
    run(text);
  assert.ok(writes.unchangedSince(at, ['channels', 'subscriptions']));
});

test('a transaction’s writes are pending until it ends, then count as written', () => {
  const { writes, tx, run } = connection();
  run('begin');
  const before = writes.now();
  run('update "channels" set "description" = $1 where "id" = $2');
  const during = writes.now();
  assert.ok(!writes.unchangedSince(during, ['channels']), 'pending while open');
  assert.ok(writes.unchangedSince(during, ['subscriptions']), 'other tables are not');
  assert.equal(
    tx.starting('update "realms" set "event_seq" = "event_seq" + 1 where "id" = 1; commit'),
    true,
  );
  assert.ok(!writes.unchangedSince(during, ['realms']), 'the statement sent with the commit');
  tx.ended();
  const after = writes.now();
  assert.ok(!writes.unchangedSince(before, ['channels']), 'the commit counts as a write');
  assert.ok(writes.unchangedSince(after, ['channels', 'realms']), 'and nothing is pending');
});

test('a statement outside a transaction is pending until its answer', () => {
  const { writes, tx } = connection();
  const at = writes.now();
  assert.equal(tx.starting('insert into "alert_words" ("user_id", "word") values ($1, $2)'), true);
  assert.ok(!writes.unchangedSince(writes.now(), ['alert_words']));
  tx.ended();
  assert.ok(!writes.unchangedSince(at, ['alert_words']));
  assert.ok(writes.unchangedSince(writes.now(), ['alert_words']));
});

test('writes whose table is not recognised make every table pending', () => {
  for (const text of [
    'with "x" as (select 1) update "channels" set "name" = $1',
    'truncate "subscriptions"',
    'lock table "users"',
  ]) {
    const { writes, run, tx } = connection();
    run('begin');
    tx.starting(text);
    assert.ok(!writes.unchangedSince(writes.now(), ['muted_users']), text);
    run('rollback');
    assert.ok(writes.unchangedSince(writes.now(), ['muted_users']), `${text}: ended`);
  }
});

test('a rollback to a savepoint makes what was read before it stale', () => {
  const { writes, run } = connection();
  run('begin');
  const at = writes.now();
  run('rollback to "change"');
  assert.ok(!writes.unchangedSince(at, ['channels']));
});
