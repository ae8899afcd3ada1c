// Event-queue helpers over HTTP, for every area's tests: register a queue, read its
// events, and wait until everything published so far has reached the queues (the Redis
// bus delivers asynchronously).
import assert from 'node:assert/strict';
import type { AppContext } from '../../src/context.ts';
import type { Client, Params } from './client.ts';

export type Event = Record<string, unknown> & { id: number; type: string };

export interface Registered {
  queue_id: string;
  last_event_id: number;
  [key: string]: unknown;
}

/** POST /register; fails the test unless it succeeds. */
export async function registerQueue(client: Client, params: Params = {}): Promise<Registered> {
  const res = await client.post('/register', params);
  assert.equal(res.status, 200, `register failed: ${res.text}`);
  return res.body as unknown as Registered;
}

/** GET /events; fails the test unless it succeeds. Blocks unless dontBlock. */
export async function getEvents(
  client: Client,
  queueId: string,
  lastEventId: number,
  opts: { dontBlock?: boolean } = {},
): Promise<Event[]> {
  const res = await client.get('/events', {
    queue_id: queueId,
    last_event_id: lastEventId,
    dont_block: opts.dontBlock ?? false,
  });
  assert.equal(res.status, 200, `GET /events failed: ${res.text}`);
  return res.body.events as Event[];
}

/** Resolves once every notice published before the call has been delivered to the queues. */
export async function settleBus(ctx: AppContext): Promise<void> {
  const marker = `settle-${process.hrtime.bigint()}-${Math.random()}`;
  await new Promise<void>((resolve, reject) => {
    ctx.bus.subscribe((notices) => {
      if (notices.some((n) => n.event.type === 'test_marker' && n.event.marker === marker)) {
        resolve();
      }
    });
    ctx.bus.publish([{ event: { type: 'test_marker', marker }, users: [] }]).catch(reject);
  });
}

/** The events queued so far (after settling the bus), without acknowledging any. */
export async function drainEvents(
  ctx: AppContext,
  client: Client,
  queueId: string,
  lastEventId: number,
): Promise<Event[]> {
  await settleBus(ctx);
  return getEvents(client, queueId, lastEventId, { dontBlock: true });
}

/** The events without their ids, for exact comparisons. */
export function withoutIds(events: Event[]): Record<string, unknown>[] {
  return events.map(({ id: _id, ...rest }) => rest);
}

/**
 * Create a user through client, on a process whose events may never reach the queues under
 * test (an app on a bus of its own, as a command-line action is): a commit without notice.
 */
export async function createNewcomer(client: Client): Promise<void> {
  const created = await client.post('/users', {
    email: 'newcomer@parley.test',
    password: 'a long enough password 1',
    full_name: 'New Comer',
  });
  assert.equal(created.status, 200, created.text);
}
