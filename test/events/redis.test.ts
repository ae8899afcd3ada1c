// Two server processes on one database and one Redis bus: an action on either reaches
// the queues the other holds. Runs when PARLEY_TEST_REDIS_URL is set (CI sets it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { LocalBus } from '../../src/events/bus.ts';
import { buildTestApp, TEST_REDIS_URL } from '../support/app.ts';
import { createNewcomer, getEvents, registerQueue, withoutIds } from '../support/events.ts';

const skip = TEST_REDIS_URL ? false : 'PARLEY_TEST_REDIS_URL is not set: no Redis to test with';

test('the Redis bus delivers events between two app instances', { skip }, async () => {
  const a = await buildTestApp();
  const b = await buildTestApp({ shareStoreWith: a });
  try {
    assert.notEqual(a.ctx.config.nodeId, b.ctx.config.nodeId);
    const onB = await registerQueue(b.as(b.fx.member), { event_types: ['user_settings'] });
    const onA = await registerQueue(a.as(a.fx.member2), { event_types: ['realm_user'] });
    assert.ok(onB.queue_id.startsWith(`${b.ctx.config.nodeId}:`));
    assert.ok(onA.queue_id.startsWith(`${a.ctx.config.nodeId}:`));

    const res = await a.as(a.fx.member).patch('/settings', { enter_sends: true });
    assert.equal(res.status, 200);
    assert.deepEqual(withoutIds(await getEvents(b.as(b.fx.member), onB.queue_id, -1)), [
      { type: 'user_settings', op: 'update', property: 'enter_sends', value: true },
    ]);

    const rename = await b.as(b.fx.member).patch('/settings', { full_name: 'Across Nodes' });
    assert.equal(rename.status, 200);
    assert.deepEqual(withoutIds(await getEvents(a.as(a.fx.member2), onA.queue_id, -1)), [
      {
        type: 'realm_user',
        op: 'update',
        person: { user_id: a.fx.member.id, full_name: 'Across Nodes' },
      },
    ]);

    // Each process holds only its own queues; the queue id tells a proxy where to go.
    const wrongNode = await a
      .as(a.fx.member)
      .get('/events', { queue_id: onB.queue_id, last_event_id: -1, dont_block: true });
    assert.equal(wrongNode.status, 400);
    assert.equal(wrongNode.body.code, 'BAD_EVENT_QUEUE_ID');
  } finally {
    await b.close();
    await a.close();
  }
});

test(
  'after the Redis subscription breaks, changes committed meanwhile drop the queues that missed them',
  { skip },
  async () => {
    const a = await buildTestApp();
    // Commits whose notices a never hears of, as if published while its subscription was down.
    const elsewhere = await buildTestApp({ shareStoreWith: a, bus: new LocalBus() });
    const admin = new Redis(TEST_REDIS_URL!);
    try {
      const member = a.as(a.fx.member);
      const { queue_id, last_event_id } = await registerQueue(member, {
        event_types: ['realm_user'],
      });
      await createNewcomer(elsewhere.as(a.fx.owner));
      const parked = member.get('/events', { queue_id, last_event_id, dont_block: false });
      // Break this app's subscription alone: other test files share the Redis server.
      const clients = (await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub')) as string;
      const name = `parley-sub:${a.ctx.config.redisChannel}`;
      const ids = clients
        .split('\n')
        .filter((line) => line.includes(` name=${name} `))
        .map((line) => /^id=(\d+) /.exec(line)![1]);
      assert.equal(ids.length, 1, clients);
      assert.equal(await admin.call('CLIENT', 'KILL', 'ID', ids[0]), 1);
      // Subscribed again, a compares what it saw with the database's sequence; the change's
      // notice does not come within the wait, so the queue is dropped and the poll told.
      const res = await parked;
      assert.deepEqual(
        { status: res.status, body: res.body },
        {
          status: 400,
          body: {
            result: 'error',
            msg: `Bad event queue ID: ${queue_id}`,
            code: 'BAD_EVENT_QUEUE_ID',
            queue_id,
          },
        },
      );
      // The bus works again: a new queue hears of the next change.
      const again = await registerQueue(member, { event_types: ['realm_user'] });
      const rename = await a.as(a.fx.member2).patch('/settings', { full_name: 'After The Break' });
      assert.equal(rename.status, 200);
      assert.deepEqual(withoutIds(await getEvents(member, again.queue_id, -1)), [
        {
          type: 'realm_user',
          op: 'update',
          person: { user_id: a.fx.member2.id, full_name: 'After The Break' },
        },
      ]);
    } finally {
      admin.disconnect();
      await elsewhere.close();
      await a.close();
    }
  },
);
