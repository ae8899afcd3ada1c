// One notice for thousands of queues is offered 2,000 queues per macrotask: each
// queue still gets its events in commit order, snapshots still filter what they reflect,
// and shutdown delivers whatever is left before the queues are saved.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { client, env, EventQueues, notice, open, REALM, take } from './queue-kit.ts';
import { nextTurn } from '../../src/actions/transaction.ts';

const USERS = Array.from({ length: 5000 }, (_, i) => 1000 + i);
const words = (w: string) => ({ type: 'alert_words' as const, alert_words: [w] });

function openAll(q: EventQueues): string[] {
  return USERS.map((user) => open(q, client(), user));
}

const pending = (q: EventQueues, ids: string[]) => ids.map((id) => q.inspect(id)!.pending.length);

test('a large fan-out is delivered in chunks, each queue in commit order', async () => {
  const q = new EventQueues(env());
  const ids = openAll(q);
  const last = USERS.at(-1)!;
  q.deliver([notice(words('a'), USERS), notice(words('b'), USERS)]);
  // Behind the fan-out, a notice for one queue waits its turn.
  q.deliver([notice(words('c'), [last])]);
  const first = pending(q, ids);
  assert.deepEqual(first.slice(0, 2000), Array(2000).fill(1));
  assert.deepEqual(first.slice(2000), Array(3000).fill(0));
  for (let i = 0; i < 10; i++) await nextTurn();
  assert.deepEqual(pending(q, ids.slice(0, -1)), Array(4999).fill(2));
  assert.deepEqual(take(q, ids.at(-1)!, last), [
    { ...words('a'), id: 0 },
    { ...words('b'), id: 1 },
    { ...words('c'), id: 2 },
  ]);
});

test('a snapshot taken between chunks filters the notices it reflects', async () => {
  const q = new EventQueues(env());
  const ids = openAll(q);
  const late = USERS.at(-1)!;
  const lateId = q.create({ userId: late, realmId: REALM, readsPublicChannels: true }, client(), {
    awaitSnapshot: true,
    emptyTopicDisplayName: '',
  });
  const at = (seq: number, w: string) => notice(words(w), USERS, { realmId: REALM, seq });
  q.deliver([at(1, 'one'), at(2, 'two')]);
  // Register read its snapshot at sequence 1 before either notice reached this queue.
  assert.deepEqual(q.inspect(lateId)?.pending, []);
  assert.equal(q.setSnapshot(lateId, 1, { emptyTopicDisplayName: '' }), 'set');
  for (let i = 0; i < 10; i++) await nextTurn();
  assert.deepEqual(take(q, lateId, late), [{ ...words('two'), id: 0 }]);
  assert.deepEqual(pending(q, ids), Array(5000).fill(2));
});

test('shutdown delivers what is left before the queues are saved', async () => {
  const q = new EventQueues(env());
  const ids = openAll(q);
  q.deliver([notice(words('a'), USERS)]);
  await q.shutdown();
  assert.deepEqual(pending(q, ids), Array(5000).fill(1));
  const file = join(await mkdtemp(join(tmpdir(), 'parley-fanout-')), 'queues.json');
  q.deliver([notice(words('b'), USERS)]);
  await q.saveTo(file);
  const saved = JSON.parse(await readFile(file, 'utf8')) as { queues: { events: unknown[] }[] };
  assert.deepEqual(
    saved.queues.map((s) => s.events.length),
    Array(5000).fill(2),
  );
});
