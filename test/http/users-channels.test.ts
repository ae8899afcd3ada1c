// What account changes do to channels: subscriber lists follow deactivation and
// reactivation, and a role change shows or hides private channels.
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { captureNotices, ids, type NoticeLog, type Sent } from '../support/notices.ts';

let t: TestApp;
let bus: NoticeLog;
beforeEach(async () => {
  t = await buildTestApp();
  bus = captureNotices(t);
});
afterEach(async () => {
  await t.close();
});

/** The channel a subscription or stream event is about. */
const streamOf = (s: Sent): number =>
  (s.event as unknown as { stream_ids: number[] }).stream_ids[0];

const channelEvents = async () =>
  (await bus.take()).filter((s) => s.event.type === 'subscription' || s.event.type === 'stream');

test('deactivating a user removes them from the subscriber lists of their channels, and reactivating restores them', async () => {
  const { admin, owner, moderator, member, member2, guest, bot } = t.fx;
  const { general, design } = t.fx.channels;
  const res = await t.as(admin).delete(`/users/${member2.id}`);
  assert.deepEqual(res.body, { result: 'success', msg: '' });
  const peerRemove = (streamId: number, users: number[]) => ({
    event: {
      type: 'subscription',
      op: 'peer_remove',
      stream_ids: [streamId],
      user_ids: [member2.id],
    },
    users,
  });
  const removed = await channelEvents();
  // general is seen by every active member (the guest is subscribed); secret only by its
  // remaining subscriber and the administrators; announce by every member but the guest.
  assert.deepEqual(
    removed.map((s) => streamOf(s)).sort((a, b) => a - b),
    [general.id, t.fx.channels.secret.id, t.fx.channels.announce.id].sort((a, b) => a - b),
  );
  assert.deepEqual(
    removed.find((s) => streamOf(s) === general.id),
    peerRemove(general.id, ids(owner, admin, moderator, member, guest, bot)),
  );
  assert.deepEqual(
    removed.find((s) => streamOf(s) === t.fx.channels.secret.id),
    peerRemove(t.fx.channels.secret.id, ids(owner, admin, moderator)),
  );
  assert.ok(!removed.some((s) => streamOf(s) === design.id));

  const back = await t.as(admin).post(`/users/${member2.id}/reactivate`);
  assert.deepEqual(back.body, { result: 'success', msg: '' });
  const added = await channelEvents();
  assert.deepEqual(
    added.find((s) => streamOf(s) === general.id),
    {
      event: {
        type: 'subscription',
        op: 'peer_add',
        stream_ids: [general.id],
        user_ids: [member2.id],
      },
      users: ids(owner, admin, moderator, member, guest, bot),
    },
  );
  const members = await t.as(member).get(`/streams/${general.id}/members`);
  assert.ok((members.body.subscribers as number[]).includes(member2.id));
});

test('promoting a member to administrator shows them the private channels they could not see', async () => {
  const { owner, member2 } = t.fx;
  const res = await t.as(owner).patch(`/users/${member2.id}`, { role: 200 });
  assert.deepEqual(res.body, { result: 'success', msg: '' });
  const created = (await channelEvents()).filter(
    (s) => s.event.type === 'stream' && s.event.op === 'create',
  );
  assert.equal(created.length, 1);
  assert.deepEqual(created[0].users, [member2.id]);
  assert.deepEqual(
    (created[0].event as unknown as { streams: Array<{ stream_id: number }> }).streams.map(
      (c) => c.stream_id,
    ),
    [t.fx.channels.private.id],
  );
});
