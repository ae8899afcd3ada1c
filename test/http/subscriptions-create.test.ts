// Creating channels through POST /users/me/subscriptions: the new channel's settings, who
// may create which kind of channel, the checks on names and parameters, and the events.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { SUCCESS } from '../support/client.ts';
import { captureNotices, ids, type NoticeLog } from '../support/notices.ts';
import {
  assertError,
  channelRow,
  expectedChannel,
  subscriptionRow,
  systemGroups,
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

const subscribe = (who: keyof typeof t.fx, params: Record<string, unknown>) =>
  t.as(t.fx[who] as never).post('/users/me/subscriptions', params);

/** Every active non-guest user: who sees a new public channel. */
const nonGuests = () =>
  ids(t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member, t.fx.member2, t.fx.bot);

async function channelIdByName(name: string): Promise<number> {
  const row = await t.ctx.db
    .selectFrom('channels')
    .select('id')
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  return row.id;
}

describe('POST /users/me/subscriptions: creating channels', () => {
  test('a new public channel: created, announced to every member, creator subscribed', async () => {
    const res = await subscribe('member', {
      subscriptions: [{ name: ' ideas ', description: 'Half-baked\n**ideas**' }],
    });
    assert.deepEqual(res.body, {
      ...SUCCESS,
      subscribed: { [t.fx.member.id]: ['ideas'] },
      already_subscribed: {},
    });
    const id = await channelIdByName('ideas');
    const g = await systemGroups(t);
    const channel = {
      stream_id: id,
      name: 'ideas',
      description: 'Half-baked **ideas**',
      rendered_description: '<p>Half-baked <strong>ideas</strong></p>',
      date_created: (await channelRow(t, id)).date_created,
      creator_id: t.fx.member.id,
      invite_only: false,
      is_archived: false,
      is_web_public: false,
      stream_post_policy: 1,
      is_announcement_only: false,
      message_retention_days: null,
      history_public_to_subscribers: true,
      first_message_id: null,
      is_recently_active: true,
      topics_policy: 'inherit',
      folder_id: null,
      stream_weekly_traffic: null,
      subscriber_count: 0,
      can_add_subscribers_group: g['role:nobody'],
      can_administer_channel_group: { direct_members: [t.fx.member.id], direct_subgroups: [] },
      can_remove_subscribers_group: g['role:administrators'],
      can_send_message_group: g['role:everyone'],
      can_subscribe_group: g['role:nobody'],
      can_delete_any_message_group: g['role:nobody'],
      can_delete_own_message_group: g['role:nobody'],
      can_move_messages_out_of_channel_group: g['role:nobody'],
      can_move_messages_within_channel_group: g['role:nobody'],
      can_resolve_topics_group: g['role:nobody'],
    };
    const color = (await subscriptionRow(t, t.fx.member.id, id))!.color;
    assert.deepEqual(await bus.take(), [
      { event: { type: 'stream', op: 'create', streams: [channel] }, users: nonGuests() },
      {
        event: {
          type: 'subscription',
          op: 'add',
          subscriptions: [
            {
              ...channel,
              subscriber_count: 1,
              color,
              pin_to_top: false,
              is_muted: false,
              in_home_view: true,
              desktop_notifications: null,
              audible_notifications: null,
              push_notifications: null,
              email_notifications: null,
              wildcard_mentions_notify: null,
              subscribers: [t.fx.member.id],
            },
          ],
        },
        users: [t.fx.member.id],
      },
      {
        event: {
          type: 'subscription',
          op: 'peer_add',
          stream_ids: [id],
          user_ids: [t.fx.member.id],
        },
        users: ids(t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member2, t.fx.bot),
      },
    ]);
    const got = await t.as(t.fx.member2).get(`/streams/${id}`);
    assert.deepEqual(got.body.stream, { ...channel, subscriber_count: 1 });
  });

  test('a new private channel: administrators and the creator see it; history protected', async () => {
    const res = await subscribe('member', {
      subscriptions: [{ name: 'plans' }],
      invite_only: true,
      principals: [t.fx.member2.id],
    });
    assert.deepEqual(res.body.subscribed, { [t.fx.member2.id]: ['plans'] });
    const id = await channelIdByName('plans');
    const row = await channelRow(t, id);
    assert.equal(row.invite_only, 1);
    assert.equal(row.history_public_to_subscribers, 0);
    const events = await bus.take();
    assert.deepEqual(
      events.map((e) => [e.event.type, e.event.op, e.users]),
      [
        // The creator administers the channel, so sees it without being subscribed.
        ['stream', 'create', ids(t.fx.owner, t.fx.admin, t.fx.member)],
        ['stream', 'create', [t.fx.member2.id]],
        ['subscription', 'add', [t.fx.member2.id]],
        ['subscription', 'peer_add', ids(t.fx.owner, t.fx.admin, t.fx.member)],
      ],
    );
  });

  test('settings of the new channel: history, retention, topics policy, groups', async () => {
    const g = await systemGroups(t);
    const res = await subscribe('owner', {
      subscriptions: [{ name: 'vault' }, { name: 'general' }],
      invite_only: true,
      history_public_to_subscribers: true,
      message_retention_days: 90,
      topics_policy: '"disable_empty_topic"',
      can_send_message_group: g['role:administrators'],
      can_remove_subscribers_group: { direct_members: [t.fx.member.id], direct_subgroups: [] },
    });
    assert.deepEqual(res.body, {
      ...SUCCESS,
      subscribed: { [t.fx.owner.id]: ['vault'] },
      already_subscribed: { [t.fx.owner.id]: ['general'] },
    });
    const got = await t.as(t.fx.owner).get(`/streams/${await channelIdByName('vault')}`);
    const s = got.body.stream as Record<string, unknown>;
    assert.deepEqual(
      [
        s.invite_only,
        s.history_public_to_subscribers,
        s.message_retention_days,
        s.topics_policy,
        s.can_send_message_group,
        s.stream_post_policy,
        s.can_remove_subscribers_group,
      ],
      [
        true,
        true,
        90,
        'disable_empty_topic',
        g['role:administrators'],
        2,
        { direct_members: [t.fx.member.id], direct_subgroups: [] },
      ],
    );
    // Settings for new channels leave existing ones alone.
    assert.deepEqual(
      (await t.as(t.fx.owner).get(`/streams/${t.fx.channels.general.id}`)).body.stream,
      await expectedChannel(t, 'general'),
    );
  });

  test('is_default_stream makes new channels default (administrators only)', async () => {
    const res = await subscribe('admin', {
      subscriptions: [{ name: 'welcome' }],
      is_default_stream: true,
    });
    assert.equal(res.status, 200, res.text);
    const id = await channelIdByName('welcome');
    const events = await bus.take();
    assert.deepEqual(events[1], {
      event: { type: 'default_streams', default_streams: [id] },
      users: ids(
        t.fx.owner,
        t.fx.admin,
        t.fx.moderator,
        t.fx.member,
        t.fx.member2,
        t.fx.guest,
        t.fx.bot,
      ),
    });
    assertError(
      await subscribe('member', { subscriptions: [{ name: 'mine' }], is_default_stream: true }),
      'Insufficient permission',
    );
    assertError(
      await subscribe('admin', {
        subscriptions: [{ name: 'mine' }],
        is_default_stream: true,
        invite_only: true,
      }),
      'A default channel cannot be private.',
    );
  });

  test('creating needs the organization’s channel-creation permissions', async () => {
    const g = await systemGroups(t);
    await t.as(t.fx.owner).patch('/realm', {
      can_create_public_channel_group: { new: g['role:administrators'] },
      can_create_private_channel_group: { new: g['role:owners'] },
    });
    assertError(
      await subscribe('member', { subscriptions: [{ name: 'new' }] }),
      'Insufficient permission',
    );
    assertError(
      await subscribe('admin', { subscriptions: [{ name: 'new' }], invite_only: true }),
      'Insufficient permission',
    );
    assert.equal((await subscribe('admin', { subscriptions: [{ name: 'new' }] })).status, 200);
    // Existing channels need no creation right.
    assert.equal((await subscribe('member2', { subscriptions: [{ name: 'design' }] })).status, 200);
  });

  test('retention needs an owner; web-public needs spectators and the permission', async () => {
    assertError(
      await subscribe('admin', { subscriptions: [{ name: 'x' }], message_retention_days: 30 }),
      'Must be an organization owner',
      'UNAUTHORIZED_PRINCIPAL',
    );
    assertError(
      await subscribe('owner', { subscriptions: [{ name: 'x' }], message_retention_days: 0 }),
      "Bad value for 'message_retention_days': 0",
      'REQUEST_VARIABLE_INVALID',
      { var_name: 'message_retention_days', bad_value: 0 },
    );
    assertError(
      await subscribe('owner', { subscriptions: [{ name: 'x' }], is_web_public: true }),
      'Web-public channels are not enabled.',
    );
    await t.as(t.fx.owner).patch('/realm', { enable_spectator_access: true });
    assertError(
      await subscribe('admin', { subscriptions: [{ name: 'x' }], is_web_public: true }),
      'Insufficient permission',
    );
    await bus.take();
    assert.equal(
      (await subscribe('owner', { subscriptions: [{ name: 'x' }], is_web_public: true })).status,
      200,
    );
    // Everyone, guests included, sees a new web-public channel.
    const [create] = await bus.take();
    assert.deepEqual(
      create.users,
      ids(t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member, t.fx.member2, t.fx.guest, t.fx.bot),
    );
  });

  test('names, descriptions and other parameters are checked', async () => {
    assertError(
      await subscribe('member', { subscriptions: [{ name: '  ' }] }),
      "Channel name can't be empty.",
    );
    assertError(
      await subscribe('member', { subscriptions: [{ name: 'n'.repeat(61) }] }),
      'Channel name too long (limit: 60 characters).',
    );
    assertError(
      await subscribe('member', {
        subscriptions: [{ name: 'new', description: 'd'.repeat(1025) }],
      }),
      'subscriptions[0]["description"] is too long (limit: 1024 characters)',
    );
    assertError(
      await subscribe('member', { subscriptions: [{ description: 'no name' }] }),
      'subscriptions[0]["name"] field is missing',
    );
    assertError(
      await subscribe('member', { subscriptions: [{ name: 'new' }], folder_id: 1 }),
      'Invalid channel folder ID',
    );
    assertError(
      await subscribe('member', { subscriptions: [{ name: 'new' }], topics_policy: 'never' }),
      'Invalid topics_policy',
    );
    assertError(
      await subscribe('member', {}),
      "Missing 'subscriptions' argument",
      'REQUEST_VARIABLE_MISSING',
      { var_name: 'subscriptions' },
    );
    const g = await systemGroups(t);
    assertError(
      await subscribe('member', {
        subscriptions: [{ name: 'new' }],
        can_administer_channel_group: g['role:everyone'],
      }),
      "'can_administer_channel_group' setting cannot be set to 'role:everyone' group.",
    );
    // Nothing was created by any of these.
    const names = (await t.ctx.db.selectFrom('channels').select('name').execute()).map(
      (c) => c.name,
    );
    assert.ok(!names.includes('new'));
    assert.deepEqual(await bus.take(), []);
  });
});
