// The queue layer driven directly (no HTTP): a queue environment with fixed time and long
// timers, client descriptors, and helpers to open a queue and read it without acknowledging.
import assert from 'node:assert/strict';
import pino from 'pino';
import {
  EventQueues,
  ParkedPoll,
  type EventsReply,
  type PollSink,
  type QueueEnv,
} from '../../src/events/queues.ts';
import type { Notice, ParleyEvent } from '../../src/events/types.ts';
import { systemRandom } from '../../src/infra/random.ts';
import {
  CLIENT_CAPABILITIES,
  readCapabilities,
  type ClientDescriptor,
} from '../../src/lib/event-client.ts';

export { EventQueues };

export const REALM = 1;
export const ALICE = 10;
export const BOB = 11;

export function env(overrides: Partial<QueueEnv['config']> = {}): QueueEnv {
  return {
    config: {
      heartbeatMinMs: 3_600_000,
      heartbeatJitterMs: 0,
      queueIdleTimeoutSecs: 600,
      queueGcIntervalMs: 3_600_000,
      eventGapWaitMs: 3_600_000,
      eventSeqCheckMs: 3_600_000,
      maxEventsPerQueue: 1000,
      nodeId: 'unit',
      ...overrides,
    },
    clock: { nowMs: () => 1_000_000 },
    random: systemRandom,
    log: pino({ level: 'silent' }),
  };
}

export const ALL = Object.fromEntries(CLIENT_CAPABILITIES.map((c) => [c, true]));

export function client(
  overrides: Partial<ClientDescriptor> = {},
  caps: Record<string, boolean> = {},
) {
  return {
    eventTypes: null,
    narrow: [],
    allPublicStreams: false,
    applyMarkdown: false,
    clientGravatar: true,
    slimPresence: false,
    includeSubscribers: false,
    capabilities: readCapabilities(caps),
    idleTimeoutSecs: 600,
    ...overrides,
  } satisfies ClientDescriptor;
}

/** A queue that already has its snapshot (at sequence 0). */
export function open(
  queues: EventQueues,
  c: ClientDescriptor,
  userId = ALICE,
  emptyTopicDisplayName: unknown = 'general chat',
): string {
  const id = queues.create({ userId, realmId: REALM, readsPublicChannels: true }, c, {
    awaitSnapshot: true,
    emptyTopicDisplayName,
  });
  assert.equal(queues.setSnapshot(id, 0, { emptyTopicDisplayName }), 'set');
  return id;
}

/** A sink for polls that must not park. */
export const noSink: PollSink = {
  answer: () => assert.fail('a poll that should not park was answered later'),
  fail: () => assert.fail('a poll that should not park failed later'),
};

export function take(queues: EventQueues, id: string, userId = ALICE): Record<string, unknown>[] {
  return flat(takeNumbered(queues, id, userId));
}

/** The queued events as a reply holds them: the (shared) event objects with their ids. */
export function takeNumbered(
  queues: EventQueues,
  id: string,
  userId = ALICE,
): EventsReply['events'] {
  const start = queues.poll(id, userId, { dontBlock: true }, noSink);
  assert.ok(!(start instanceof ParkedPoll));
  return start.events;
}

/** A reply as its JSON shows it. */
export function flatReply(reply: EventsReply | undefined): Record<string, unknown> | undefined {
  if (!reply) return undefined;
  // The JSON of the queue id that an answer may carry is checked here, and left out.
  const { queueIdJson, ...rest } = reply;
  if (queueIdJson !== undefined) {
    assert.deepEqual(queueIdJson, {
      text: JSON.stringify(reply.queue_id),
      bytes: Buffer.byteLength(JSON.stringify(reply.queue_id)),
    });
  }
  return { ...rest, events: flat(reply.events) };
}

/** A reply's events as its JSON shows them: each event's fields with its id. */
export function flat(events: EventsReply['events']): Record<string, unknown>[] {
  return events.map(({ id, event }) => ({ ...event, id }));
}

/** Poll without dont_block; the poll must park. Its answer (or failure) settles the promise. */
export function park(
  queues: EventQueues,
  id: string,
  userId = ALICE,
  lastEventId?: number,
): Promise<EventsReply> {
  return new Promise((answer, fail) => {
    const start = queues.poll(id, userId, { lastEventId, dontBlock: false }, { answer, fail });
    assert.ok(start instanceof ParkedPoll);
  });
}

/**
 * Park polls that take costMs each to answer on a clock the test holds, which the queues
 * read as their slice clock; each answer lands in answered when it is written.
 */
export function parkCosting(
  queues: EventQueues,
  ids: Array<[id: string, userId: number]>,
  clock: { now: number },
  /** Each answer's cost, or the cost of the nth answer (from 0) of these polls. */
  costMs: number | ((n: number) => number),
  answered: EventsReply[],
): void {
  const before = answered.length;
  const sink: PollSink = {
    answer: (reply) => {
      clock.now += typeof costMs === 'number' ? costMs : costMs(answered.length - before);
      answered.push(reply);
    },
    fail: (err) => assert.fail(err),
  };
  for (const [id, userId] of ids) {
    assert.ok(queues.poll(id, userId, { dontBlock: false }, sink) instanceof ParkedPoll);
  }
}

export const notice = (
  event: ParleyEvent,
  users = [ALICE],
  extra: Partial<Notice> = {},
): Notice => ({
  event,
  users,
  ...extra,
});
