// The queue layer through its own API: the snapshot sequence filter, chunked answers,
// overflow, dropped users and persistence. (Per-client shaping is in shaping.test.ts, HTTP
// behaviour in the other files of this folder.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventsReply } from '../../src/events/queues.ts';
import type { ParleyEvent } from '../../src/events/types.ts';
import { SERVER_GENERATION, SVC_FEATURE_LEVEL, SVC_VERSION } from '../../src/version.ts';
import {
  ALICE,
  BOB,
  client,
  env,
  EventQueues,
  flat,
  flatReply,
  noSink,
  notice,
  open,
  park,
  parkCosting,
  REALM,
  take,
} from './queue-kit.ts';
import { nextTurn } from '../../src/actions/transaction.ts';

test('queue ids name their process; event ids increase from 0', () => {
  const q = new EventQueues(env());
  const id = open(q, client());
  assert.match(id, /^unit:[A-Za-z0-9_-]{16}$/);
  q.deliver([notice({ type: 'alert_words', alert_words: ['a'] })]);
  q.deliver([notice({ type: 'alert_words', alert_words: ['b'] })]);
  assert.deepEqual(take(q, id), [
    { type: 'alert_words', alert_words: ['a'], id: 0 },
    { type: 'alert_words', alert_words: ['b'], id: 1 },
  ]);
});

test('register consistency: notices the snapshot already reflects are dropped, even late', () => {
  const q = new EventQueues(env());
  const id = q.create({ userId: ALICE, realmId: REALM, readsPublicChannels: true }, client(), {
    awaitSnapshot: true,
    emptyTopicDisplayName: '',
  });
  const at = (seq: number | undefined, n: number, realmId = REALM) =>
    notice({ type: 'alert_words', alert_words: [String(n)] }, [ALICE], { realmId, seq });
  // Arrived while register read its snapshot (at sequence 5).
  q.deliver([at(4, 1), at(6, 2), { event: { type: 'heartbeat' }, users: [ALICE] }, at(5, 3)]);
  assert.equal(q.setSnapshot(id, 5, { emptyTopicDisplayName: '' }), 'set');
  // Arrived after it: a late one from before the snapshot, a new one, another realm's.
  q.deliver([at(3, 4), at(7, 5), at(1, 6, 99)]);
  assert.deepEqual(take(q, id), [
    { type: 'alert_words', alert_words: ['2'], id: 1 },
    { type: 'heartbeat', id: 2 },
    { type: 'alert_words', alert_words: ['5'], id: 4 },
    { type: 'alert_words', alert_words: ['6'], id: 5 },
  ]);
});

test('queues emptied by their snapshot or by acknowledgement each keep their own events', () => {
  // Every queue without events starts from one empty list (events/queue.ts): an event
  // offered to one queue must never show up in another.
  const q = new EventQueues(env());
  const words = (word: string, users: number[], seq?: number) =>
    notice({ type: 'alert_words', alert_words: [word] }, users, { realmId: REALM, seq });
  const alice = q.create({ userId: ALICE, realmId: REALM, readsPublicChannels: true }, client(), {
    awaitSnapshot: true,
    emptyTopicDisplayName: '',
  });
  const bob = open(q, client(), BOB);
  q.deliver([words('in the snapshot', [ALICE], 1)]);
  assert.equal(q.setSnapshot(alice, 1, { emptyTopicDisplayName: '' }), 'set');
  q.deliver([words('for bob', [BOB])]);
  assert.deepEqual(take(q, alice), []);
  q.deliver([words('for alice', [ALICE])]);
  assert.deepEqual(take(q, alice), [{ type: 'alert_words', alert_words: ['for alice'], id: 1 }]);
  assert.deepEqual(q.poll(bob, BOB, { lastEventId: 0, dontBlock: true }, noSink), { events: [] });
  const carol = open(q, client(), 3);
  q.deliver([words('for bob again', [BOB])]);
  assert.deepEqual(take(q, carol, 3), []);
  assert.deepEqual(take(q, alice), [{ type: 'alert_words', alert_words: ['for alice'], id: 1 }]);
  assert.deepEqual(take(q, bob, BOB), [
    { type: 'alert_words', alert_words: ['for bob again'], id: 1 },
  ]);
});

/** How many of 20 parked polls are answered after each macrotask, when each takes costMs. */
async function answeredPerMacrotask(costMs: number): Promise<number[]> {
  const clock = { now: 0 };
  const q = new EventQueues({ ...env(), sliceClock: () => clock.now });
  const answered: EventsReply[] = [];
  const users = Array.from({ length: 20 }, (_, i) => 1000 + i);
  const polls = users.map((user): [string, number] => [open(q, client(), user), user]);
  parkCosting(q, polls, clock, costMs, answered);
  q.deliver([notice({ type: 'alert_words', alert_words: [] }, users)]);
  assert.equal(answered.length, 0);
  const counts = [];
  while (answered.length < users.length) {
    await nextTurn();
    counts.push(answered.length);
  }
  assert.deepEqual(flat(answered[19].events), [{ type: 'alert_words', alert_words: [], id: 0 }]);
  await q.shutdown();
  return counts;
}

test('parked polls are answered in slices of 5 ms, however many answers that is', async () => {
  assert.deepEqual(await answeredPerMacrotask(1), [5, 10, 15, 20]);
  // The answer that reaches 5 ms ends its slice.
  assert.deepEqual(await answeredPerMacrotask(3), [2, 4, 6, 8, 10, 12, 14, 16, 18, 20]);
  assert.deepEqual(await answeredPerMacrotask(0.2), [20]);
  // An answer longer than a slice still goes, one a macrotask.
  assert.deepEqual(
    await answeredPerMacrotask(20),
    Array.from({ length: 20 }, (_, i) => i + 1),
  );
});

/**
 * Queues for userCount users, answered on a clock the answers move, and their fan-outs: each
 * parks a new poll for each of the first n users, sends them one event, and counts the
 * answers after each macrotask.
 */
function fanOuts(userCount: number): {
  q: EventQueues;
  fanOut: (n: number, costMs: number | ((i: number) => number)) => Promise<number[]>;
} {
  const clock = { now: 0 };
  const q = new EventQueues({ ...env(), sliceClock: () => clock.now });
  const users = Array.from({ length: userCount }, (_, i) => 1000 + i);
  const fanOut = async (n: number, costMs: number | ((i: number) => number)) => {
    const answered: EventsReply[] = [];
    const polls = users
      .slice(0, n)
      .map((user): [string, number] => [open(q, client(), user), user]);
    parkCosting(q, polls, clock, costMs, answered);
    q.deliver([notice({ type: 'alert_words', alert_words: [] }, users.slice(0, n))]);
    const counts = [];
    while (answered.length < n) {
      await nextTurn();
      counts.push(answered.length);
    }
    return counts;
  };
  return { q, fanOut };
}

test('a fan-out the recent pace fits in 20 ms is answered in one macrotask; a larger one in slices', async () => {
  const { q, fanOut } = fanOuts(300);
  // No pace known yet: slices of 5 ms, 40 answers each, which set the pace (0.125 ms).
  assert.deepEqual(await fanOut(100, 0.125), [40, 80, 100]);
  // 100 answers at that pace take 12.5 ms: one macrotask.
  assert.deepEqual(await fanOut(100, 0.125), [100]);
  // 300 would take 37.5 ms: slices, the last ones too, though 100 fit by then.
  assert.deepEqual(await fanOut(300, 0.125), [40, 80, 120, 160, 200, 240, 280, 300]);
  await q.shutdown();
});

test('a fan-out slowed by a pause (a collection) leaves the next one answered in one macrotask', async () => {
  const { q, fanOut } = fanOuts(150);
  // Slices of 40 set the pace: 0.125 ms an answer.
  assert.deepEqual(await fanOut(100, 0.125), [40, 80, 100]);
  // 150 at that pace fit in 18.75 ms, but the 41st answer meets a 14 ms pause: the macrotask
  // stops at 20 ms, after 49 answers (0.41 ms each), and slices answer the rest.
  assert.deepEqual(await fanOut(150, (i) => (i === 40 ? 14 : 0.125)), [49, 89, 129, 150]);
  // The pause is not the pace: the next 150 go in one macrotask.
  assert.deepEqual(await fanOut(150, 0.125), [150]);
  await q.shutdown();
});

test('a queue over its cap is dropped; its parked poll fails with BAD_EVENT_QUEUE_ID', async () => {
  const q = new EventQueues(env({ maxEventsPerQueue: 3 }));
  const id = open(q, client());
  const parked = park(q, id);
  const events = [1, 2, 3, 4].map((n) => notice({ type: 'alert_words', alert_words: [String(n)] }));
  q.deliver(events);
  await assert.rejects(parked, {
    code: 'BAD_EVENT_QUEUE_ID',
    message: `Bad event queue ID: ${id}`,
    extra: { queue_id: id },
  });
  assert.equal(q.inspect(id), undefined);
  assert.throws(() => q.poll(id, ALICE, { dontBlock: true }, noSink), {
    code: 'BAD_EVENT_QUEUE_ID',
  });
});

test('dropping a user’s queues answers their parked poll with what is queued', async () => {
  const q = new EventQueues(env());
  const id = open(q, client());
  const parked = park(q, id);
  q.deliver([
    notice({ type: 'realm_user', op: 'update', person: { user_id: ALICE, is_active: false } }),
  ]);
  q.dropUserQueues(ALICE);
  assert.deepEqual(flatReply(await parked), {
    events: [
      { type: 'realm_user', op: 'update', person: { user_id: ALICE, is_active: false }, id: 0 },
    ],
    queue_id: id,
  });
  assert.equal(q.size, 0);
});

test('a deactivated user’s queues go once they hold the deactivation', async () => {
  const q = new EventQueues(env());
  const alice = open(q, client());
  const bob = open(q, client(), BOB);
  const parked = park(q, alice);
  const deactivation: ParleyEvent = {
    type: 'realm_user',
    op: 'update',
    person: { user_id: ALICE, is_active: false },
  };
  q.deliver([notice(deactivation, [ALICE, BOB])]);
  assert.deepEqual(flatReply(await parked), {
    events: [{ ...deactivation, id: 0 }],
    queue_id: alice,
  });
  assert.equal(q.inspect(alice), undefined);
  assert.deepEqual(take(q, bob, BOB), [{ ...deactivation, id: 0 }]);
});

test('saveTo and restoreFrom keep ids, pending events and acknowledgements, then add restart', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'parley-queues-'));
  const file = join(dir, 'queues.json');
  const before = new EventQueues(env());
  const id = open(before, client());
  const quiet = open(before, client({ eventTypes: ['alert_words'] }), BOB);
  before.deliver([1, 2, 3].map((n) => notice({ type: 'alert_words', alert_words: [String(n)] })));
  assert.equal(take(before, id).length, 3);
  before.poll(id, ALICE, { lastEventId: 0, dontBlock: true }, noSink);
  await before.saveTo(file);
  await before.shutdown();

  const after = new EventQueues(env());
  assert.equal(await after.restoreFrom(file), 2);
  assert.deepEqual(take(after, id), [
    { type: 'alert_words', alert_words: ['2'], id: 1 },
    { type: 'alert_words', alert_words: ['3'], id: 2 },
    {
      type: 'restart',
      svc_version: SVC_VERSION,
      svc_merge_base: SVC_VERSION,
      svc_feature_level: SVC_FEATURE_LEVEL,
      zulip_version: SVC_VERSION,
      zulip_merge_base: SVC_VERSION,
      zulip_feature_level: SVC_FEATURE_LEVEL,
      server_generation: SERVER_GENERATION,
      id: 3,
    },
  ]);
  assert.throws(() => after.poll(id, ALICE, { lastEventId: -1, dontBlock: true }, noSink), {
    message: 'An event newer than -1 has already been pruned!',
  });
  // Its client asked for alert_words only: no restart event.
  assert.deepEqual(take(after, quiet, BOB), []);
  assert.match(await readFile(file, 'utf8'), /"format":1/);
  await after.shutdown();
});

test('restoreFrom refuses a file that is not a saved queue file', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'parley-queues-'));
  const file = join(dir, 'queues.json');
  await writeFile(file, '{"hello": 1}');
  await assert.rejects(new EventQueues(env()).restoreFrom(file), /not a saved event-queue file/);
  await writeFile(file, 'not json');
  await assert.rejects(new EventQueues(env()).restoreFrom(file), SyntaxError);
});

test('a commit whose notice never comes drops the queues whose snapshot is older', async () => {
  const q = new EventQueues(env({ eventGapWaitMs: 20 }));
  const alert = (seq: number) =>
    notice({ type: 'alert_words', alert_words: [String(seq)] }, [ALICE, BOB], {
      realmId: REALM,
      seq,
    });
  const older = open(q, client());
  const newer = q.create({ userId: BOB, realmId: REALM, readsPublicChannels: true }, client(), {
    awaitSnapshot: true,
    emptyTopicDisplayName: '',
  });
  // Register read the newer one's snapshot after the second commit.
  assert.equal(q.setSnapshot(newer, 2, { emptyTopicDisplayName: '' }), 'set');
  q.deliver([alert(1)]);
  q.deliver([alert(3)]);
  assert.deepEqual(take(q, older), [
    { type: 'alert_words', alert_words: ['1'], id: 0 },
    { type: 'alert_words', alert_words: ['3'], id: 1 },
  ]);
  const parked = park(q, older, ALICE, 1);
  // The notice of commit 2 is not coming: the older queue's client must register again.
  await assert.rejects(parked, {
    message: `Bad event queue ID: ${older}`,
    code: 'BAD_EVENT_QUEUE_ID',
  });
  assert.throws(() => q.poll(older, ALICE, { dontBlock: true }, noSink), {
    code: 'BAD_EVENT_QUEUE_ID',
  });
  assert.deepEqual(take(q, newer, BOB), [{ type: 'alert_words', alert_words: ['3'], id: 0 }]);
});

test('a notice that comes after a later one, within the wait, drops nothing', async () => {
  const q = new EventQueues(env({ eventGapWaitMs: 20 }));
  const alert = (seq: number) =>
    notice({ type: 'alert_words', alert_words: [String(seq)] }, [ALICE], { realmId: REALM, seq });
  const id = open(q, client());
  // Two processes published commits 1 and 2 in the other order.
  q.deliver([alert(2)]);
  q.deliver([alert(1)]);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.deepEqual(take(q, id), [
    { type: 'alert_words', alert_words: ['2'], id: 0 },
    { type: 'alert_words', alert_words: ['1'], id: 1 },
  ]);
});

test('a number still missing at saveTo is saved as not seen, so the next process drops those queues', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'parley-queues-'));
  const file = join(dir, 'queues.json');
  const before = new EventQueues(env());
  open(before, client());
  const alert = (seq: number) =>
    notice({ type: 'alert_words', alert_words: [String(seq)] }, [ALICE], { realmId: REALM, seq });
  before.deliver([alert(1), alert(3)]);
  await before.saveTo(file);
  await before.shutdown();
  const saved = JSON.parse(await readFile(file, 'utf8')) as { seen_seq: unknown };
  assert.deepEqual(saved.seen_seq, [{ realm_id: REALM, seq: 1 }]);
  // The next process compares it with the database's, 3, and restores none of the realm's
  // queues (persistence.test.ts).
});

test('a commit whose publication failed drops the older queues unless its notice comes in the wait', async () => {
  const q = new EventQueues(env({ eventGapWaitMs: 20 }));
  const alert = (seq: number) =>
    notice({ type: 'alert_words', alert_words: [String(seq)] }, [ALICE], { realmId: REALM, seq });
  const late = open(q, client());
  const lost = open(q, client());
  q.deliver([alert(1)]);
  // Commit 2's publication failed, and no later commit follows to show the gap. This time
  // it still comes (a publish that reached Redis although its reply did not).
  q.expectNotices([alert(2)]);
  q.deliver([alert(2)]);
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.deepEqual(take(q, late), [
    { type: 'alert_words', alert_words: ['1'], id: 0 },
    { type: 'alert_words', alert_words: ['2'], id: 1 },
  ]);
  // Commit 3's never comes.
  q.expectNotices([alert(3)]);
  await new Promise((resolve) => setTimeout(resolve, 60));
  for (const id of [late, lost]) {
    assert.throws(() => q.poll(id, ALICE, { dontBlock: true }, noSink), {
      code: 'BAD_EVENT_QUEUE_ID',
    });
  }
  // A number already seen expects nothing.
  const after = q.create({ userId: ALICE, realmId: REALM, readsPublicChannels: true }, client(), {
    awaitSnapshot: true,
    emptyTopicDisplayName: '',
  });
  assert.equal(q.setSnapshot(after, 3, { emptyTopicDisplayName: '' }), 'set');
  q.expectNotices([alert(3)]);
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.deepEqual(take(q, after), []);
});

test('a snapshot read while an older notice was declared lost is refused, and a newer one set', async () => {
  const q = new EventQueues(env({ eventGapWaitMs: 20 }));
  const alert = (seq: number) =>
    notice({ type: 'alert_words', alert_words: [String(seq)] }, [ALICE], { realmId: REALM, seq });
  open(q, client());
  // A register reads its snapshot at commit 1 while commit 2's notice is lost.
  const registering = q.create(
    { userId: ALICE, realmId: REALM, readsPublicChannels: true },
    client(),
    {
      awaitSnapshot: true,
      emptyTopicDisplayName: '',
    },
  );
  q.deliver([alert(1), alert(3)]);
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.equal(q.setSnapshot(registering, 1, { emptyTopicDisplayName: '' }), 'missed');
  // Read again, the snapshot reflects commit 3; the notice kept meanwhile is dropped with it.
  assert.equal(q.setSnapshot(registering, 3, { emptyTopicDisplayName: '' }), 'set');
  q.deliver([alert(4)]);
  assert.deepEqual(take(q, registering), [{ type: 'alert_words', alert_words: ['4'], id: 2 }]);
  q.discard(registering);
  assert.equal(q.setSnapshot(registering, 4, { emptyTopicDisplayName: '' }), 'gone');
});
