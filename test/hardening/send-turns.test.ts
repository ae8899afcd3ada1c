// PostgreSQL plans a send before its batch's transaction (docs/architecture.md, "Actions").
// A change committed between the plan and the batch must count as it would had the send come
// after it: the batch takes its realm's turn for sends, and plans again any send read under
// another accounts counter. A hook holds each send right after its plan while a change runs,
// so every interleaving here is forced, not hoped for. SQLite reads inside the send's own
// transaction and has no plan to hold: actor-races.test.ts races the same changes there.
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { setSendHook } from '../../src/actions/messages.ts';
import { ROLE } from '../../src/lib/roles.ts';
import { buildTestApp, POSTGRES_SKIP, type TestApp } from '../support/app.ts';
import { err } from '../support/callers.ts';
import type { ApiResponse } from '../support/client.ts';
import { drainEvents, registerQueue, type Registered } from '../support/events.ts';
import type { FixtureUser } from '../support/fixture.ts';

let t: TestApp;
beforeEach(async () => {
  t = await buildTestApp();
});
afterEach(async () => {
  setSendHook(null);
  await t.close();
});

const only = { skip: POSTGRES_SKIP };

/** Send to design as sender, with change run (and committed) after the send is planned. */
async function sendAfterPlanning(
  sender: FixtureUser,
  change: () => Promise<ApiResponse>,
): Promise<ApiResponse> {
  let changed: ApiResponse | undefined;
  setSendHook(async () => {
    setSendHook(null);
    changed = await change();
  });
  const sent = await t
    .as(sender)
    .post('/messages', { type: 'stream', to: 'design', topic: 'held', content: 'planned' });
  assert.ok(changed, 'the send was not planned before its batch');
  assert.equal(changed.status, 200, changed.text);
  return sent;
}

/** Messages in design's topic "held", as the administrator (subscribed) reads them. */
async function heldMessageIds(): Promise<number[]> {
  const res = await t.as(t.fx.admin).get('/messages', {
    anchor: 'newest',
    num_before: 10,
    num_after: 0,
    narrow: JSON.stringify([
      { operator: 'channel', operand: 'design' },
      { operator: 'topic', operand: 'held' },
    ]),
  });
  assert.equal(res.status, 200, res.text);
  return (res.body.messages as Array<{ id: number }>).map((m) => m.id);
}

/** The message events user's queue got: each message's id and the user's flags. */
async function messagesHeard(user: FixtureUser, queue: Registered): Promise<unknown[]> {
  const events = await drainEvents(t.ctx, t.as(user), queue.queue_id, queue.last_event_id);
  return events
    .filter((e) => e.type === 'message')
    .map((e) => [(e.message as { id: number }).id, e.flags]);
}

test(
  'a sender deactivated after the plan: refused as deactivated, nothing stored',
  only,
  async () => {
    const sender = t.fx.member;
    const res = await sendAfterPlanning(sender, () =>
      t.as(t.fx.admin).delete(`/users/${sender.id}`),
    );
    assert.deepEqual(res.body, err('Account is deactivated', 'UNAUTHORIZED'), res.text);
    assert.equal(res.status, 401);
    assert.deepEqual(await heldMessageIds(), []);
  },
);

test(
  'a sender made a guest after the plan: refused as a guest not in the channel',
  only,
  async () => {
    const sender = t.fx.member2;
    const res = await sendAfterPlanning(sender, () =>
      t.as(t.fx.owner).patch(`/users/${sender.id}`, { role: ROLE.guest }),
    );
    assert.deepEqual(res.body, {
      result: 'error',
      msg: "Channel 'design' does not exist",
      code: 'STREAM_DOES_NOT_EXIST',
      stream: 'design',
    });
    assert.deepEqual(await heldMessageIds(), []);
  },
);

test('the channel archived after the plan: refused, nothing stored', only, async () => {
  const res = await sendAfterPlanning(t.fx.member, () =>
    t.as(t.fx.admin).delete(`/streams/${t.fx.channels.design.id}`),
  );
  assert.deepEqual(res.body, err("Not authorized to send to channel 'design'", 'BAD_REQUEST'));
  const stored = await t.ctx.db
    .selectFrom('messages')
    .select('id')
    .where('channel_id', '=', t.fx.channels.design.id)
    .where('topic', '=', 'held')
    .execute();
  assert.deepEqual(stored, []);
});

test('a subscriber who left after the plan: the message is sent without them', only, async () => {
  const leaver = t.fx.member;
  const leaverQueue = await registerQueue(t.as(leaver), { event_types: ['message'] });
  const adminQueue = await registerQueue(t.as(t.fx.admin), { event_types: ['message'] });
  const res = await sendAfterPlanning(t.fx.admin, () =>
    t.as(leaver).delete('/users/me/subscriptions', { subscriptions: ['design'] }),
  );
  assert.equal(res.status, 200, res.text);
  const id = res.body.id as number;
  assert.deepEqual(await heldMessageIds(), [id]);
  const delivered = await t.ctx.db
    .selectFrom('user_messages')
    .select('user_id')
    .where('message_id', '=', id)
    .orderBy('user_id')
    .execute();
  assert.deepEqual(delivered, [{ user_id: t.fx.admin.id }]);
  assert.deepEqual(await messagesHeard(t.fx.admin, adminQueue), [[id, []]]);
  assert.deepEqual(await messagesHeard(leaver, leaverQueue), []);
});

test(
  'a change in another organization after the plan: the send is planned again and sent',
  only,
  async () => {
    const adminQueue = await registerQueue(t.as(t.fx.admin), { event_types: ['message'] });
    const res = await sendAfterPlanning(t.fx.member, () =>
      t
        .as({ ...t.fx.otherOwner, host: 'other.parley.test' })
        .patch('/settings', { full_name: 'Otto Renamed' }),
    );
    assert.equal(res.status, 200, res.text);
    const id = res.body.id as number;
    assert.deepEqual(await heldMessageIds(), [id]);
    assert.deepEqual(await messagesHeard(t.fx.admin, adminQueue), [[id, []]]);
  },
);
