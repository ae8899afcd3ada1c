// Heartbeats fall on each queue's own phase of the heartbeat period, whenever its polls
// were parked, and the polls due at once are answered in chunks like any other event.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EventsReply, QueueEnv } from '../../src/events/queues.ts';
import { client, env, EventQueues, flat, flatReply, open, park, parkCosting } from './queue-kit.ts';
import { nextTurn } from '../../src/actions/transaction.ts';

/** Queue phases in creation order (ms into the heartbeat period). */
function phased(config: Partial<QueueEnv['config']>, phases: number[]): QueueEnv {
  return { ...env(config), heartbeatPhase: () => phases.shift() ?? 0 };
}

test('polls parked together get their heartbeats at their own phases, not together', async () => {
  // A 1 s interval without jitter: a 900 ms period; the phases are half a period apart.
  const q = new EventQueues(phased({ heartbeatMinMs: 1000, heartbeatJitterMs: 0 }, [0, 450]));
  const a = open(q, client(), 1);
  const b = open(q, client(), 2);
  const replies = new Map<string, EventsReply>();
  const first = await Promise.race([
    park(q, a, 1).then((r) => replies.set(a, r) && a),
    park(q, b, 2).then((r) => replies.set(b, r) && b),
  ]);
  const other = first === a ? b : a;
  // Timers due together would all have run by the next macrotask.
  await nextTurn();
  assert.equal(q.inspect(other)?.parked, true);
  assert.deepEqual(flatReply(replies.get(first)), {
    events: [{ type: 'heartbeat', id: 0 }],
    queue_id: first,
  });
  await new Promise<void>((resolve) => {
    const check = () => (replies.has(other) ? resolve() : setTimeout(check, 20));
    check();
  });
  assert.deepEqual(flatReply(replies.get(other)), {
    events: [{ type: 'heartbeat', id: 0 }],
    queue_id: other,
  });
  await q.shutdown();
});

test('heartbeats due at once are answered in slices of 5 ms like any event', async () => {
  const clock = { now: 0 };
  const q = new EventQueues({
    ...phased({ heartbeatMinMs: 30, heartbeatJitterMs: 0 }, []),
    sliceClock: () => clock.now,
  });
  const answered: EventsReply[] = [];
  const polls: Array<[string, number]> = [];
  for (let user = 1000; user < 1020; user++) polls.push([open(q, client(), user), user]);
  // Answers of 2 ms: 3 a macrotask (the third passes 5 ms).
  parkCosting(q, polls, clock, 2, answered);
  while (answered.length === 0) await nextTurn();
  const counts = [answered.length];
  while (answered.length < polls.length) {
    await nextTurn();
    counts.push(answered.length);
  }
  assert.deepEqual(counts, [3, 6, 9, 12, 15, 18, 20]);
  assert.deepEqual(flat(answered[0].events), [{ type: 'heartbeat', id: 0 }]);
  await q.shutdown();
});
