// GET and DELETE /events through HTTP: acknowledgement and pruning, errors, queues
// created by GET /events, heartbeats, one parked poll per queue, expiry, overflow,
// deactivation, and register consistency under a forced interleaving.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setRegisterHook } from '../../src/actions/events.ts';
import { LocalBus } from '../../src/events/bus.ts';
import { buildTestApp, type TestApp, type TestAppOptions } from '../support/app.ts';
import {
  createNewcomer,
  drainEvents,
  getEvents,
  registerQueue,
  settleBus,
  type Registered,
  withoutIds,
} from '../support/events.ts';
import type { Client, Params } from '../support/client.ts';
import { sendToChannel } from '../support/messages.ts';

async function withApp(fn: (t: TestApp) => Promise<void>, opts?: TestAppOptions): Promise<void> {
  const t = await buildTestApp(opts);
  try {
    await fn(t);
  } finally {
    await t.close();
  }
}

/** Three user_settings events for the member. */
async function threeSettings(member: Client): Promise<void> {
  for (const value of [true, false, true]) {
    const res = await member.patch('/settings', { enter_sends: value });
    assert.equal(res.status, 200, res.text);
  }
}

async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(check(), 'condition not reached');
}

const TYPES = { event_types: ['user_settings'] };
/**
 * fn with an app and a second process on its database whose bus is its own, as a command-line
 * action is: its commits advance the organization's sequence and no queue of t hears of them.
 */
function withProcessElsewhere(
  fn: (t: TestApp, elsewhere: TestApp) => Promise<void>,
  config: TestAppOptions['config'],
): Promise<void> {
  return withApp(
    async (t) => {
      const elsewhere = await buildTestApp({ shareStoreWith: t, bus: new LocalBus() });
      try {
        await fn(t, elsewhere);
      } finally {
        await elsewhere.close();
      }
    },
    { config },
  );
}

const badQueue = (id: string) => ({
  result: 'error',
  msg: `Bad event queue ID: ${id}`,
  code: 'BAD_EVENT_QUEUE_ID',
  queue_id: id,
});

test('GET /events: dont_block on an empty queue answers at once', () =>
  withApp(async (t) => {
    const member = t.as(t.fx.member);
    const { queue_id } = await registerQueue(member, TYPES);
    const res = await member.get('/events', { queue_id, last_event_id: -1, dont_block: true });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { result: 'success', msg: '', events: [] });
  }));

test('GET /events: every unacknowledged event, then acknowledgement prunes', () =>
  withApp(async (t) => {
    const member = t.as(t.fx.member);
    const { queue_id } = await registerQueue(member, TYPES);
    await threeSettings(member);
    await settleBus(t.ctx);
    const all = await getEvents(member, queue_id, -1, { dontBlock: true });
    assert.deepEqual(
      all.map((e) => [e.id, e.value]),
      [
        [0, true],
        [1, false],
        [2, true],
      ],
    );
    // Not acknowledged yet: the same events again.
    assert.deepEqual(await getEvents(member, queue_id, -1, { dontBlock: true }), all);
    assert.deepEqual(await getEvents(member, queue_id, 1, { dontBlock: true }), [all[2]]);
    assert.deepEqual(t.ctx.queues.inspect(queue_id)?.pending, [2]);
    assert.deepEqual(await getEvents(member, queue_id, 2, { dontBlock: true }), []);
    // Acknowledging the same id again is harmless.
    assert.deepEqual(await getEvents(member, queue_id, 2, { dontBlock: true }), []);
    // Without last_event_id nothing is acknowledged.
    const res = await member.get('/events', { queue_id, dont_block: true });
    assert.deepEqual(res.body, { result: 'success', msg: '', events: [] });
  }));

test('GET /events: a pruned or unknown last_event_id is a clear error', () =>
  withApp(async (t) => {
    const member = t.as(t.fx.member);
    const { queue_id } = await registerQueue(member, TYPES);
    await threeSettings(member);
    await drainEvents(t.ctx, member, queue_id, -1);
    await getEvents(member, queue_id, 1, { dontBlock: true });
    const pruned = await member.get('/events', { queue_id, last_event_id: 0, dont_block: true });
    assert.equal(pruned.status, 400);
    assert.deepEqual(pruned.body, {
      result: 'error',
      msg: 'An event newer than 0 has already been pruned!',
      code: 'BAD_REQUEST',
    });
    const unknown = await member.get('/events', { queue_id, last_event_id: 7, dont_block: true });
    assert.equal(unknown.status, 400);
    assert.deepEqual(unknown.body, {
      result: 'error',
      msg: 'Event 7 was not in this queue',
      code: 'BAD_REQUEST',
    });
  }));

test('GET and DELETE /events: unknown, foreign and deleted queues are BAD_EVENT_QUEUE_ID', () =>
  withApp(async (t) => {
    const member = t.as(t.fx.member);
    const { queue_id } = await registerQueue(member, TYPES);
    const unknown = await member.get('/events', { queue_id: 'nope', last_event_id: -1 });
    assert.equal(unknown.status, 400);
    assert.deepEqual(unknown.body, badQueue('nope'));
    const foreign = await t.as(t.fx.member2).get('/events', { queue_id, last_event_id: -1 });
    assert.equal(foreign.status, 400);
    assert.deepEqual(foreign.body, badQueue(queue_id));
    const foreignDelete = await t.as(t.fx.member2).delete('/events', { queue_id });
    assert.deepEqual(foreignDelete.body, badQueue(queue_id));

    const deleted = await member.delete('/events', { queue_id });
    assert.equal(deleted.status, 200);
    assert.deepEqual(deleted.body, { result: 'success', msg: '' });
    const after = await member.get('/events', { queue_id, last_event_id: -1, dont_block: true });
    assert.deepEqual(after.body, badQueue(queue_id));
    const again = await member.delete('/events', { queue_id });
    assert.equal(again.status, 400);
    assert.deepEqual(again.body, badQueue(queue_id));
    const missing = await member.delete('/events', {});
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body, {
      result: 'error',
      msg: "Missing 'queue_id' argument",
      code: 'REQUEST_VARIABLE_MISSING',
      var_name: 'queue_id',
    });
  }));

test('GET /events without queue_id registers a queue from the register parameters', () =>
  withApp(async (t) => {
    const member = t.as(t.fx.member);
    const res = await member.get('/events', { dont_block: true, event_types: ['realm_user'] });
    assert.equal(res.status, 200, res.text);
    const queueId = String(res.body.queue_id);
    assert.deepEqual(res.body, { result: 'success', msg: '', events: [], queue_id: queueId });
    await threeSettings(member);
    const rename = await member.patch('/settings', { full_name: 'Mark Renamed' });
    assert.equal(rename.status, 200);
    assert.deepEqual(withoutIds(await drainEvents(t.ctx, member, queueId, -1)), [
      {
        type: 'realm_user',
        op: 'update',
        person: { user_id: t.fx.member.id, full_name: 'Mark Renamed' },
      },
    ]);

    // Blocking: the reply names the new queue once an event arrives.
    const parked = member.get('/events', { event_types: ['user_settings'] });
    await waitFor(() => t.ctx.queues.size === 2);
    await threeSettings(member);
    const reply = await parked;
    assert.equal(reply.status, 200, reply.text);
    assert.match(String(reply.body.queue_id), new RegExp(`^${t.ctx.config.nodeId}:`));
    assert.equal((reply.body.events as unknown[]).length > 0, true);
  }));

test('GET /events: a heartbeat answers a poll that waited long enough', () =>
  withApp(
    async (t) => {
      const member = t.as(t.fx.member);
      const { queue_id } = await registerQueue(member, TYPES);
      const res = await member.get('/events', { queue_id, last_event_id: -1 });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, {
        result: 'success',
        msg: '',
        events: [{ type: 'heartbeat', id: 0 }],
        queue_id,
      });
      // Heartbeats are events like any other: acknowledged, then gone.
      assert.deepEqual(t.ctx.queues.inspect(queue_id)?.pending, [0]);
      assert.deepEqual(
        (await getEvents(member, queue_id, 0)).map((e) => e.type),
        ['heartbeat'],
      );
      assert.deepEqual(t.ctx.queues.inspect(queue_id)?.pending, [1]);
    },
    { config: { heartbeatMinMs: 30, heartbeatJitterMs: 20 } },
  ));

test('GET /events: a second poll on a queue finishes the first', () =>
  withApp(async (t) => {
    const member = t.as(t.fx.member);
    const { queue_id } = await registerQueue(member, TYPES);
    const first = member.get('/events', { queue_id, last_event_id: -1 });
    await waitFor(() => t.ctx.queues.inspect(queue_id)?.parked === true);
    const second = member.get('/events', { queue_id, last_event_id: -1 });
    const firstReply = await first;
    assert.deepEqual(firstReply.body, { result: 'success', msg: '', events: [], queue_id });
    await waitFor(() => t.ctx.queues.inspect(queue_id)?.parked === true);
    await threeSettings(member);
    const secondReply = await second;
    assert.equal((secondReply.body.events as unknown[]).length > 0, true);
  }));

test('queues idle past their timeout expire; a longer requested timeout keeps a queue', () =>
  withApp(
    async (t) => {
      const member = t.as(t.fx.member);
      const short = await registerQueue(member, TYPES);
      const long = await registerQueue(member, { ...TYPES, idle_queue_timeout: 3600 });
      await waitFor(() => t.ctx.queues.inspect(short.queue_id) === undefined);
      const gone = await member.get('/events', {
        queue_id: short.queue_id,
        last_event_id: -1,
        dont_block: true,
      });
      assert.equal(gone.status, 400);
      assert.deepEqual(gone.body, badQueue(short.queue_id));
      const kept = await member.get('/events', {
        queue_id: long.queue_id,
        last_event_id: -1,
        dont_block: true,
      });
      assert.equal(kept.status, 200);
    },
    { config: { queueIdleTimeoutSecs: 0.05, queueGcIntervalMs: 10 } },
  ));

test('a parked poll keeps its queue from expiring', () =>
  withApp(
    async (t) => {
      // The queues read the app's clock: hold it still until the poll is parked (however
      // slow the machine), then move it past the idle timeout while the sweeper runs.
      const start = t.ctx.clock.nowMs();
      let now = start;
      t.ctx.clock.nowMs = () => now;
      const member = t.as(t.fx.member);
      const { queue_id } = await registerQueue(member, TYPES);
      const idle = await registerQueue(t.as(t.fx.member2), TYPES);
      const parked = member.get('/events', { queue_id, last_event_id: -1 });
      await waitFor(() => t.ctx.queues.inspect(queue_id)?.parked === true);
      now = start + 3_600_000;
      // The unparked queue expiring shows the sweeper ran with the new time.
      await waitFor(() => t.ctx.queues.inspect(idle.queue_id) === undefined);
      assert.equal(t.ctx.queues.inspect(queue_id)?.parked, true);
      await threeSettings(member);
      assert.equal((await parked).status, 200);
    },
    { config: { queueIdleTimeoutSecs: 60, queueGcIntervalMs: 10 } },
  ));

test('a queue over its cap is dropped and its client registers again', () =>
  withApp(
    async (t) => {
      const member = t.as(t.fx.member);
      const { queue_id } = await registerQueue(member, TYPES);
      for (let i = 0; i < 4; i++) await threeSettings(member);
      await settleBus(t.ctx);
      const res = await member.get('/events', { queue_id, last_event_id: -1, dont_block: true });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, badQueue(queue_id));
      const again = await registerQueue(member, TYPES);
      assert.notEqual(again.queue_id, queue_id);
    },
    { config: { maxEventsPerQueue: 5 } },
  ));

// The queue layer drops a deactivated user's queues once the deactivation is delivered to
// them (events/queues.ts), in every process and with either bus.
test('deactivation: the parked poll gets the deactivation, then the queue is gone', () =>
  withApp(async (t) => {
    const member = t.as(t.fx.member);
    const { queue_id } = await registerQueue(member, { event_types: ['realm_user'] });
    const parked = member.get('/events', { queue_id, last_event_id: -1 });
    await waitFor(() => t.ctx.queues.inspect(queue_id)?.parked === true);
    const res = await t.as(t.fx.admin).delete(`/users/${t.fx.member.id}`);
    assert.equal(res.status, 200, res.text);
    const reply = await parked;
    // The member's bot is deactivated with them; the poll returns with the first of these.
    const deactivated = withoutIds(reply.body.events as never).map((e) => JSON.stringify(e));
    const of = (userId: number) =>
      JSON.stringify({
        type: 'realm_user',
        op: 'update',
        person: { user_id: userId, is_active: false },
      });
    assert.ok(
      deactivated.includes(of(t.fx.member.id)) || deactivated.includes(of(t.fx.bot.id)),
      JSON.stringify(reply.body.events),
    );
    await waitFor(() => t.ctx.queues.inspect(queue_id) === undefined);
    const after = await member.get('/events', { queue_id, last_event_id: -1, dont_block: true });
    assert.equal(after.status, 401);
  }));

test('GET /events needs authentication', () =>
  withApp(async (t) => {
    const { queue_id } = await registerQueue(t.as(t.fx.member), TYPES);
    const res = await t.as(null).get('/events', { queue_id, last_event_id: -1 });
    assert.equal(res.status, 401);
    assert.equal(res.body.code, 'UNAUTHORIZED');
    const deactivated = await t.as(t.fx.deactivated).get('/events', { queue_id });
    assert.equal(deactivated.status, 401);
  }));

test('register consistency: a change committed while the queue exists but before the snapshot is read', () =>
  withApp(async (t) => {
    const member = t.as(t.fx.member);
    const reg = await registerDuring(member, async (point) => {
      if (point !== 'queue-created') return;
      const res = await member.patch('/settings', { full_name: 'Between Both' });
      assert.equal(res.status, 200);
      await settleBus(t.ctx);
    });
    // In the snapshot, and not again as an event.
    assert.equal(reg.full_name, 'Between Both');
    assert.deepEqual(await drainEvents(t.ctx, member, reg.queue_id, -1), []);
  }));

test('register consistency: a change committed after the snapshot is read arrives as an event', () =>
  withApp(async (t) => {
    const member = t.as(t.fx.member);
    // This process already follows the organization's commits (see the next test).
    await registerQueue(t.as(t.fx.owner), {});
    const reg = await registerDuring(member, async (point) => {
      if (point !== 'snapshot-read') return;
      const res = await member.patch('/settings', { full_name: 'Just After' });
      assert.equal(res.status, 200);
      await settleBus(t.ctx);
    });
    assert.equal(reg.full_name, 'Mark Member');
    assert.deepEqual(withoutIds(await drainEvents(t.ctx, member, reg.queue_id, -1)), [
      {
        type: 'realm_user',
        op: 'update',
        person: { user_id: t.fx.member.id, full_name: 'Just After' },
      },
    ]);
  }));

test('the first register of an organization in a process reads again when a commit lands during its read', () =>
  withApp(async (t) => {
    const member = t.as(t.fx.member);
    let reads = 0;
    const reg = await registerDuring(member, async (point) => {
      if (point !== 'snapshot-read' || ++reads > 1) return;
      const res = await member.patch('/settings', { full_name: 'Just After' });
      assert.equal(res.status, 200);
      await settleBus(t.ctx);
    });
    // The process began to follow the organization at that commit: nothing says the notices
    // before it came, so the snapshot is read again, and holds the change.
    assert.equal(reads, 2);
    assert.equal(reg.full_name, 'Just After');
    assert.deepEqual(await drainEvents(t.ctx, member, reg.queue_id, -1), []);
  }));

test('a change whose events never reach this process drops the queues that missed them', () =>
  withProcessElsewhere(
    async (t, elsewhere) => {
      const member = t.as(t.fx.member);
      const { queue_id, last_event_id } = await registerQueue(member, {
        event_types: ['realm_user', 'message'],
      });
      await createNewcomer(elsewhere.as(t.fx.owner));
      // The next change that does reach the queue shows that one never came: its event is
      // delivered, and the poll after it learns that the queue is gone.
      await sendToChannel(t, t.fx.owner, 'general', 'gap', 'after the lost one');
      const events = await drainEvents(t.ctx, member, queue_id, last_event_id);
      assert.deepEqual(messageContents(events), [['message', 'after the lost one']]);
      const res = await member.get('/events', {
        queue_id,
        last_event_id: events[0].id,
        dont_block: false,
      });
      assert.deepEqual(
        { status: res.status, body: res.body },
        { status: 400, body: badQueue(queue_id) },
      );
      // Registering again gives a snapshot with the change in it.
      const again = await registerQueue(member, { fetch_event_types: ['realm_user'] });
      assert.ok(userNames(again).includes('New Comer'), userNames(again).join(', '));
    },
    { eventGapWaitMs: 50 },
  ));

test('a register whose snapshot misses a change declared lost meanwhile reads it again', () =>
  withProcessElsewhere(
    async (t, elsewhere) => {
      const member = t.as(t.fx.member);
      // This process already follows the organization's commits.
      const earlier = await registerQueue(t.as(t.fx.owner), {});
      let reads = 0;
      const reg = await registerDuring(
        member,
        async (point) => {
          if (point !== 'snapshot-read' || ++reads > 1) return;
          // After the snapshot is read: a change whose notice is lost, then one that shows it.
          await createNewcomer(elsewhere.as(t.fx.owner));
          await sendToChannel(t, t.fx.owner, 'general', 'gap', 'after the lost one');
          await new Promise((resolve) => setTimeout(resolve, 200));
        },
        {
          fetch_event_types: ['realm_user'],
          event_types: ['realm_user', 'message'],
        },
      );
      assert.equal(reads, 2);
      const gone = await t.as(t.fx.owner).get('/events', {
        queue_id: earlier.queue_id,
        dont_block: true,
      });
      assert.deepEqual(
        { status: gone.status, body: gone.body },
        { status: 400, body: badQueue(earlier.queue_id) },
      );
      assert.ok(userNames(reg).includes('New Comer'), userNames(reg).join(', '));
      // The queue holds what follows the second snapshot, which already has both changes.
      assert.deepEqual(await drainEvents(t.ctx, member, reg.queue_id, -1), []);
      await sendToChannel(t, t.fx.owner, 'general', 'gap', 'later');
      const events = await drainEvents(t.ctx, member, reg.queue_id, -1);
      assert.deepEqual(messageContents(events), [['message', 'later']]);
    },
    { eventGapWaitMs: 50 },
  ));

test('a change whose events never come drops the queues that missed it even when nothing follows', () =>
  withProcessElsewhere(
    async (t, elsewhere) => {
      const member = t.as(t.fx.member);
      const { queue_id, last_event_id } = await registerQueue(member, {
        event_types: ['realm_user'],
      });
      await createNewcomer(elsewhere.as(t.fx.owner));
      // No other change: the process finds the commit in the database's sequence.
      const res = await member.get('/events', { queue_id, last_event_id, dont_block: false });
      assert.deepEqual(
        { status: res.status, body: res.body },
        { status: 400, body: badQueue(queue_id) },
      );
    },
    { eventGapWaitMs: 50, eventSeqCheckMs: 100 },
  ));

/** Register with hook called at each of register's points (actions/events.ts). */
async function registerDuring(
  client: Client,
  hook: Parameters<typeof setRegisterHook>[0],
  params: Params = {},
): Promise<Registered> {
  setRegisterHook(hook);
  try {
    return await registerQueue(client, params);
  } finally {
    setRegisterHook(null);
  }
}

/** Each event's type with its message's content, if any. */
function messageContents(events: Array<Record<string, unknown>>): unknown[][] {
  return events.map((e) => [e.type, (e.message as { content?: string } | undefined)?.content]);
}

/** The full names in a register's realm_users. */
function userNames(registered: Record<string, unknown>): string[] {
  return (registered.realm_users as Array<{ full_name: string }>).map((u) => u.full_name);
}
