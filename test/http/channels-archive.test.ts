// Archiving and unarchiving channels: DELETE /streams/{id} and PATCH /streams/{id} with
// is_archived=false, with permissions, errors and the exact events and recipients.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { SUCCESS } from '../support/client.ts';
import { captureNotices, ids, type NoticeLog } from '../support/notices.ts';
import {
  assertError,
  channelRow,
  expectedChannel,
  expectedSubscription,
  subscribersOf,
} from '../support/channels.ts';

let t: TestApp;
let bus: NoticeLog;
beforeEach(async () => {
  t = await buildTestApp();
  bus = captureNotices(t);
});
afterEach(async () => {
  await t.close();
});

const streamUpdate = (channel: { id: number; name: string }, fields: Record<string, unknown>) => ({
  type: 'stream',
  op: 'update',
  stream_id: channel.id,
  name: channel.name,
  ...fields,
});

/** Everyone who can see a public channel: every active user but a guest who is not in it. */
const seesDesign = () =>
  ids(t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member, t.fx.member2, t.fx.bot);
const seesGeneral = () =>
  ids(t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member, t.fx.member2, t.fx.guest, t.fx.bot);

async function patch(who: keyof typeof t.fx, channelId: number, params: Record<string, unknown>) {
  return t.as(t.fx[who] as never).patch(`/streams/${channelId}`, params);
}

describe('DELETE /streams/{id}: archiving', () => {
  test('archive: flag update and deletion to everyone who saw it; defaults cleaned up', async () => {
    const id = t.fx.channels.design.id;
    const group = await t.as(t.fx.admin).post('/default_stream_groups/create', {
      group_name: 'starters',
      description: '',
      stream_names: ['design', 'general'],
    });
    assert.deepEqual(group.body, SUCCESS, group.text);
    await t.as(t.fx.admin).post('/default_streams', { stream_id: id });
    await t.as(t.fx.admin).patch('/realm', { new_stream_announcements_stream_id: id });
    await bus.take();
    const res = await t.as(t.fx.admin).delete(`/streams/${id}`);
    assert.deepEqual(res.body, SUCCESS, res.text);
    const groupId = (
      await t.ctx.db.selectFrom('default_channel_groups').select('id').executeTakeFirstOrThrow()
    ).id;
    assert.deepEqual(await bus.take(), [
      {
        event: {
          type: 'realm',
          op: 'update_dict',
          property: 'default',
          data: { new_stream_announcements_stream_id: -1 },
        },
        users: seesGeneral(),
      },
      { event: { type: 'default_streams', default_streams: [] }, users: seesGeneral() },
      {
        event: {
          type: 'default_stream_groups',
          default_stream_groups: [
            { name: 'starters', description: '', id: groupId, streams: [t.fx.channels.general.id] },
          ],
        },
        users: seesGeneral(),
      },
      {
        event: streamUpdate(t.fx.channels.design, { property: 'is_archived', value: true }),
        users: seesDesign(),
      },
      {
        event: {
          type: 'stream',
          op: 'delete',
          streams: [{ stream_id: id }],
          stream_ids: [id],
          __for_archiving: true,
        },
        users: seesDesign(),
      },
    ]);
    assert.equal((await channelRow(t, id)).is_archived, 1);
    // Subscriptions stay.
    const members = await t.ctx.db
      .selectFrom('subscriptions')
      .select('user_id')
      .where('channel_id', '=', id)
      .where('active', '=', 1)
      .execute();
    assert.deepEqual(members.map((m) => m.user_id).sort(), subscribersOf(t, 'design'));
    assertError(await t.as(t.fx.admin).delete(`/streams/${id}`), 'Channel is already deactivated');
  });

  test('who may archive', async () => {
    assertError(
      await t.as(t.fx.member).delete(`/streams/${t.fx.channels.general.id}`),
      'You do not have permission to administer this channel.',
      'CANNOT_ADMINISTER_CHANNEL',
    );
    assertError(
      await t.as(t.fx.member).delete(`/streams/${t.fx.channels.secret.id}`),
      'Invalid channel ID',
    );
    assertError(
      await t.as(t.fx.guest).delete(`/streams/${t.fx.channels.design.id}`),
      'Invalid channel ID',
    );
    assertError(await t.as(t.fx.admin).delete('/streams/99999'), 'Invalid channel ID');
    // A channel's creator administers it.
    assert.deepEqual(
      (await t.as(t.fx.moderator).delete(`/streams/${t.fx.channels.secret.id}`)).body,
      SUCCESS,
    );
  });

  test('archived channels take no new subscribers and vanish from lists', async () => {
    const id = t.fx.channels.design.id;
    await t.as(t.fx.admin).delete(`/streams/${id}`);
    assertError(
      await t
        .as(t.fx.member2)
        .post('/users/me/subscriptions', { subscriptions: [{ name: 'design' }] }),
      'Unable to access channel (design).',
    );
    const subs = await t.as(t.fx.member).get('/users/me/subscriptions');
    assert.ok(
      !(subs.body.subscriptions as Array<{ name: string }>).some((s) => s.name === 'design'),
    );
  });

  test('unarchive: the flag for new clients, a creation for old ones', async () => {
    const id = t.fx.channels.design.id;
    await t.as(t.fx.admin).delete(`/streams/${id}`);
    await bus.take();
    const res = await patch('admin', id, { is_archived: false });
    assert.deepEqual(res.body, SUCCESS, res.text);
    assert.deepEqual(await bus.take(), [
      {
        event: streamUpdate(t.fx.channels.design, { property: 'is_archived', value: false }),
        users: seesDesign(),
      },
      {
        event: {
          type: 'stream',
          op: 'create',
          streams: [await expectedChannel(t, 'design')],
          __for_unarchiving: true,
        },
        users: seesDesign(),
      },
      ...(await Promise.all(
        [t.fx.admin, t.fx.member].map(async (u) => ({
          event: {
            type: 'subscription',
            op: 'add',
            subscriptions: [
              await expectedSubscription(t, u.id, 'design', {
                subscribers: subscribersOf(t, 'design'),
              }),
            ],
            __for_unarchiving: true,
          },
          users: [u.id],
        })),
      )),
    ]);
    // is_archived=true is not a way to archive.
    assert.deepEqual((await patch('admin', id, { is_archived: true })).body, SUCCESS);
    assert.equal((await channelRow(t, id)).is_archived, 0);
  });

  test('a private channel without subscribers cannot be unarchived', async () => {
    const id = t.fx.channels.secret.id;
    await t.as(t.fx.moderator).delete(`/streams/${id}`);
    await t.ctx.db
      .updateTable('subscriptions')
      .set({ active: 0 })
      .where('channel_id', '=', id)
      .execute();
    assertError(
      await patch('admin', id, { is_archived: false }),
      'Channel is private and have no subscribers',
    );
  });
});
