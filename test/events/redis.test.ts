// Two server processes on one database and one Redis bus: an action on either reaches
// the queues the other holds. Runs when PARLEY_TEST_REDIS_URL is set (CI sets it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, TEST_REDIS_URL } from '../support/app.ts';
import { getEvents, registerQueue, withoutIds } from '../support/events.ts';

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
