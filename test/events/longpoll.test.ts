// Long-polling over real sockets: a parked GET /events wakes on an event, gets a
// heartbeat, is finished by a newer poll, and frees its queue's waiter when the client
// disconnects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestAppOptions } from '../support/app.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { waitFor, withServer, type Live } from '../support/live.ts';

async function register(live: Live, who: FixtureUser): Promise<string> {
  const res = await live.call(who, 'POST', '/register', { event_types: ['user_settings'] });
  assert.equal(res.status, 200);
  return String(res.body.queue_id);
}

/** Rate limits on, so answers carry their headers. */
const RATE_LIMITED: TestAppOptions = { config: { rateLimit: { max: 200, windowSeconds: 60 } } };

const parkedOn = (live: Live, queueId: string) => () =>
  live.t.ctx.queues.inspect(queueId)?.parked === true;

test('a parked poll wakes on an event', () =>
  withServer(async (live) => {
    const { member } = live.t.fx;
    const queueId = await register(live, member);
    const poll = live.call(member, 'GET', '/events', { queue_id: queueId, last_event_id: -1 });
    await waitFor(parkedOn(live, queueId));
    const change = await live.call(member, 'PATCH', '/settings', { enter_sends: true });
    assert.equal(change.status, 200);
    const res = await poll;
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      result: 'success',
      msg: '',
      events: [
        { type: 'user_settings', op: 'update', property: 'enter_sends', value: true, id: 0 },
      ],
      queue_id: queueId,
    });
    // Written by the direct listener on the raw response, with the usual headers.
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(res.headers.get('content-length'), String(Buffer.byteLength(res.text)));
    assert.equal(res.headers.get('x-ratelimit-limit'), '200');
  }, RATE_LIMITED));

test('a parked poll gets a message of any characters whole: its length is counted in bytes', () =>
  withServer(async (live) => {
    const { member, admin, channels } = live.t.fx;
    const res0 = await live.call(member, 'POST', '/register', { event_types: ['message'] });
    const queueId = String(res0.body.queue_id);
    const poll = live.call(member, 'GET', '/events', { queue_id: queueId, last_event_id: -1 });
    await waitFor(parkedOn(live, queueId));
    const content = 'grüße, 日本語 🎉 — naïve';
    const sent = await live.call(admin, 'POST', '/messages', {
      type: 'stream',
      to: channels.design.name,
      topic: 'café ☕',
      content,
    });
    assert.equal(sent.status, 200);
    const res = await poll;
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-length'), String(Buffer.byteLength(res.text)));
    const events = res.body.events as Array<{ type: string; message: Record<string, unknown> }>;
    assert.deepEqual(
      events.map((e) => [e.type, e.message.id, e.message.subject, e.message.content]),
      [['message', sent.body.id, 'café ☕', content]],
    );
  }));

test('dont_block answers at once; a heartbeat ends a quiet poll', () =>
  withServer(
    async (live) => {
      const { member } = live.t.fx;
      const queueId = await register(live, member);
      const quick = await live.call(member, 'GET', '/events', {
        queue_id: queueId,
        last_event_id: -1,
        dont_block: true,
      });
      assert.deepEqual(quick.body, { result: 'success', msg: '', events: [] });
      const slow = await live.call(member, 'GET', '/events', {
        queue_id: queueId,
        last_event_id: -1,
      });
      assert.deepEqual(slow.body, {
        result: 'success',
        msg: '',
        events: [{ type: 'heartbeat', id: 0 }],
        queue_id: queueId,
      });
    },
    { config: { heartbeatMinMs: 20, heartbeatJitterMs: 20 } },
  ));

test('acknowledged events are not sent again', () =>
  withServer(async (live) => {
    const { member } = live.t.fx;
    const queueId = await register(live, member);
    for (const value of [true, false]) {
      await live.call(member, 'PATCH', '/settings', { enter_sends: value });
    }
    const first = await live.call(member, 'GET', '/events', {
      queue_id: queueId,
      last_event_id: -1,
    });
    assert.deepEqual(
      (first.body.events as Array<{ id: number }>).map((e) => e.id),
      [0, 1],
    );
    const next = live.call(member, 'GET', '/events', { queue_id: queueId, last_event_id: 1 });
    await waitFor(parkedOn(live, queueId));
    await live.call(member, 'PATCH', '/settings', { enter_sends: true });
    assert.deepEqual(
      ((await next).body.events as Array<{ id: number }>).map((e) => e.id),
      [2],
    );
  }));

test('a second poll finishes the first', () =>
  withServer(async (live) => {
    const { member } = live.t.fx;
    const queueId = await register(live, member);
    const first = live.call(member, 'GET', '/events', { queue_id: queueId, last_event_id: -1 });
    await waitFor(parkedOn(live, queueId));
    const second = live.call(member, 'GET', '/events', { queue_id: queueId, last_event_id: -1 });
    assert.deepEqual((await first).body, {
      result: 'success',
      msg: '',
      events: [],
      queue_id: queueId,
    });
    await waitFor(parkedOn(live, queueId));
    await live.call(member, 'PATCH', '/settings', { enter_sends: true });
    assert.equal(((await second).body.events as unknown[]).length, 1);
  }));

test('a client disconnecting mid-poll frees its waiter; its events wait for the next poll', () =>
  withServer(async (live) => {
    const { member } = live.t.fx;
    const queueId = await register(live, member);
    const abort = new AbortController();
    const poll = live.call(
      member,
      'GET',
      '/events',
      { queue_id: queueId, last_event_id: -1 },
      abort.signal,
    );
    await waitFor(parkedOn(live, queueId));
    abort.abort();
    await assert.rejects(poll, { name: 'AbortError' });
    await waitFor(() => live.t.ctx.queues.inspect(queueId)?.parked === false);
    await live.call(member, 'PATCH', '/settings', { enter_sends: true });
    const next = await live.call(member, 'GET', '/events', {
      queue_id: queueId,
      last_event_id: -1,
    });
    assert.deepEqual(
      (next.body.events as Array<{ property: string }>).map((e) => e.property),
      ['enter_sends'],
    );
  }));

test('closing the server answers parked polls instead of waiting for them', () =>
  withServer(async (live) => {
    const { member } = live.t.fx;
    const queueId = await register(live, member);
    const poll = live.call(member, 'GET', '/events', { queue_id: queueId, last_event_id: -1 });
    await waitFor(parkedOn(live, queueId));
    await live.t.app.close();
    assert.deepEqual((await poll).body, {
      result: 'success',
      msg: '',
      events: [],
      queue_id: queueId,
    });
  }));
