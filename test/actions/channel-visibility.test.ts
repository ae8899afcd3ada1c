// The channel events other areas send when a user's role or activity changes which channels
// they see or which subscriber counts include them (actions/channels.ts helpers).
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  doAnnounceChannelVisibility,
  doAnnounceSubscriberActivation,
  visibleChannelIds,
} from '../../src/actions/channels.ts';
import { withTransaction } from '../../src/actions/transaction.ts';
import { ROLE } from '../../src/lib/roles.ts';
import { getRealmById } from '../../src/store/realms.ts';
import { getUserById } from '../../src/store/users.ts';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { expectedChannel, subscribersOf } from '../support/channels.ts';
import { captureNotices, ids, type NoticeLog } from '../support/notices.ts';

let t: TestApp;
let bus: NoticeLog;
beforeEach(async () => {
  t = await buildTestApp();
  bus = captureNotices(t);
});
afterEach(async () => {
  await t.close();
});

async function load(userId: number) {
  const realm = (await getRealmById(t.ctx.db, t.fx.realm.id))!;
  const user = (await getUserById(t.ctx.db, realm.id, userId))!;
  return { realm, user };
}

test('a guest who becomes a member sees the public channels', async () => {
  const { realm, user } = await load(t.fx.guest.id);
  const before = await visibleChannelIds(t.ctx.db, realm, user);
  assert.deepEqual([...before].sort(), [t.fx.channels.general.id, t.fx.channels.web.id]);
  await withTransaction(t.ctx, realm.id, async (work) => {
    await work.db
      .updateTable('users')
      .set({ role: ROLE.member })
      .where('id', '=', user.id)
      .execute();
    await doAnnounceChannelVisibility(work, realm, user, before);
  });
  const c = t.fx.channels;
  assert.deepEqual(await bus.take(), [
    {
      event: {
        type: 'stream',
        op: 'create',
        streams: [await expectedChannel(t, 'design'), await expectedChannel(t, 'announce')],
      },
      users: [user.id],
    },
    {
      event: {
        type: 'subscription',
        op: 'peer_add',
        stream_ids: [c.design.id],
        user_ids: subscribersOf(t, 'design'),
        __only_with_subscribers: true,
      },
      users: [user.id],
    },
    {
      event: {
        type: 'subscription',
        op: 'peer_add',
        stream_ids: [c.announce.id],
        user_ids: subscribersOf(t, 'announce'),
        __only_with_subscribers: true,
      },
      users: [user.id],
    },
  ]);
});

test('an administrator who becomes a member loses the private channels they are not in', async () => {
  const { realm, user } = await load(t.fx.admin.id);
  const before = await visibleChannelIds(t.ctx.db, realm, user);
  await withTransaction(t.ctx, realm.id, async (work) => {
    await work.db
      .updateTable('users')
      .set({ role: ROLE.member })
      .where('id', '=', user.id)
      .execute();
    await doAnnounceChannelVisibility(work, realm, user, before);
  });
  const c = t.fx.channels;
  assert.deepEqual(await bus.take(), [
    {
      event: {
        type: 'stream',
        op: 'delete',
        streams: [{ stream_id: c.private.id }, { stream_id: c.secret.id }],
        stream_ids: [c.private.id, c.secret.id],
      },
      users: [user.id],
    },
  ]);
});

test('no change of sight, no events', async () => {
  const { realm, user } = await load(t.fx.member.id);
  const before = await visibleChannelIds(t.ctx.db, realm, user);
  await withTransaction(t.ctx, realm.id, (work) =>
    doAnnounceChannelVisibility(work, realm, user, before),
  );
  assert.deepEqual(await bus.take(), []);
});

test('deactivation and reactivation: peer events for the user’s channels', async () => {
  const { realm, user } = await load(t.fx.member2.id);
  await withTransaction(t.ctx, realm.id, async (work) => {
    await work.db.updateTable('users').set({ is_active: 0 }).where('id', '=', user.id).execute();
    await doAnnounceSubscriberActivation(work, realm, user, false);
  });
  const c = t.fx.channels;
  const everyoneBut = ids(t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member, t.fx.bot);
  const peer = (op: string, channelId: number, users: number[]) => ({
    event: { type: 'subscription', op, stream_ids: [channelId], user_ids: [user.id] },
    users,
  });
  assert.deepEqual(await bus.take(), [
    peer(
      'peer_remove',
      c.general.id,
      [...everyoneBut, t.fx.guest.id].sort((a, b) => a - b),
    ),
    peer('peer_remove', c.secret.id, ids(t.fx.owner, t.fx.admin, t.fx.moderator)),
    peer('peer_remove', c.announce.id, everyoneBut),
  ]);
  await withTransaction(t.ctx, realm.id, async (work) => {
    await work.db.updateTable('users').set({ is_active: 1 }).where('id', '=', user.id).execute();
    await doAnnounceSubscriberActivation(work, realm, user, true);
  });
  const events = await bus.take();
  assert.deepEqual(
    events.map((e) => [e.event.op, (e.event as Record<string, unknown>).stream_ids]),
    [
      ['peer_add', [c.general.id]],
      ['peer_add', [c.secret.id]],
      ['peer_add', [c.announce.id]],
    ],
  );
});
