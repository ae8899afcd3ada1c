// Subscribing: GET /users/me/subscriptions and POST /users/me/subscriptions for existing
// channels (oneself or others), with permissions, errors and exact events (creating
// channels: subscriptions-create.test.ts).
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { SUCCESS } from '../support/client.ts';
import { captureNotices, ids, type NoticeLog } from '../support/notices.ts';
import {
  assertError,
  expectedChannel,
  expectedSubscription,
  namesOf,
  subscribersOf,
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

const MEMBER_DEFAULTS = {
  desktop_notifications: false,
  audible_notifications: false,
  push_notifications: false,
  email_notifications: false,
  wildcard_mentions_notify: true,
};

const subscribe = (who: keyof typeof t.fx, params: Record<string, unknown>) =>
  t.as(t.fx[who] as never).post('/users/me/subscriptions', params);

describe('GET /users/me/subscriptions', () => {
  test("the caller's subscriptions by name, with settings that inherit as null", async () => {
    const res = await t.as(t.fx.member).get('/users/me/subscriptions');
    assert.deepEqual(res.body, {
      ...SUCCESS,
      subscriptions: [
        await expectedSubscription(t, t.fx.member.id, 'announce'),
        await expectedSubscription(t, t.fx.member.id, 'design'),
        await expectedSubscription(t, t.fx.member.id, 'general'),
        await expectedSubscription(t, t.fx.member.id, 'private'),
      ],
    });
  });

  test('include_subscribers adds the subscriber lists', async () => {
    for (const flag of [true, 'partial']) {
      const res = await t.as(t.fx.member2).get('/users/me/subscriptions', {
        include_subscribers: flag,
      });
      assert.deepEqual(res.body, {
        ...SUCCESS,
        subscriptions: [
          {
            ...(await expectedSubscription(t, t.fx.member2.id, 'announce')),
            subscribers: subscribersOf(t, 'announce'),
          },
          {
            ...(await expectedSubscription(t, t.fx.member2.id, 'general')),
            subscribers: subscribersOf(t, 'general'),
          },
          {
            ...(await expectedSubscription(t, t.fx.member2.id, 'secret')),
            subscribers: subscribersOf(t, 'secret'),
          },
        ],
      });
    }
  });

  test('include_subscribers=partial: large channels get partial_subscribers', async () => {
    const template = await t.ctx.db
      .selectFrom('users')
      .selectAll()
      .where('id', '=', t.fx.member.id)
      .executeTakeFirstOrThrow();
    const rows = Array.from({ length: 250 }, (_, i) => {
      const { id: _id, ...rest } = template;
      return {
        ...rest,
        email: `crowd${i}@parley.test`,
        delivery_email: `crowd${i}@parley.test`,
        api_key: `crowd${i}`.padEnd(32, 'x'),
      };
    });
    await t.ctx.db.insertInto('users').values(rows).execute();
    const crowd = await t.ctx.db
      .selectFrom('users')
      .select('id')
      .where('email', 'like', 'crowd%')
      .execute();
    await t.ctx.db
      .insertInto('subscriptions')
      .values(
        crowd.map((u) => ({
          user_id: u.id,
          channel_id: t.fx.channels.design.id,
          active: 1,
          is_muted: 0,
          pin_to_top: 0,
          color: '#76ce90',
        })),
      )
      .execute();
    const res = await t.as(t.fx.member).get('/users/me/subscriptions', {
      include_subscribers: 'partial',
    });
    const design = (res.body.subscriptions as Array<Record<string, unknown>>).find(
      (s) => s.name === 'design',
    )!;
    assert.equal('subscribers' in design, false);
    assert.equal((design.partial_subscribers as number[]).length, 252);
    assert.equal(design.subscriber_count, 252);
    const general = (res.body.subscriptions as Array<Record<string, unknown>>).find(
      (s) => s.name === 'general',
    )!;
    assert.deepEqual(general.subscribers, subscribersOf(t, 'general'));
  });

  test('guests and bots see their own', async () => {
    const guest = await t.as(t.fx.guest).get('/users/me/subscriptions');
    assert.deepEqual(namesOf(guest.body.subscriptions), ['general']);
    const bot = await t.as(t.fx.bot).get('/users/me/subscriptions');
    assert.deepEqual(namesOf(bot.body.subscriptions), ['general']);
  });

  test('archived channels are left out', async () => {
    await t.as(t.fx.admin).delete(`/streams/${t.fx.channels.design.id}`);
    const res = await t.as(t.fx.member).get('/users/me/subscriptions');
    assert.deepEqual(namesOf(res.body.subscriptions), ['announce', 'general', 'private']);
  });

  test('deactivated users and missing credentials get 401', async () => {
    const res = await t.as(t.fx.deactivated).get('/users/me/subscriptions');
    assert.equal(res.status, 401);
    const none = await t.as(null).get('/users/me/subscriptions');
    assert.equal(none.status, 401);
    const post = await t.as(null).post('/users/me/subscriptions', { subscriptions: [] });
    assert.equal(post.status, 401);
  });
});

describe('POST /users/me/subscriptions: existing channels', () => {
  test('subscribing oneself: add to the user, peer_add to the others who see the channel', async () => {
    const res = await subscribe('member2', { subscriptions: [{ name: 'design' }] });
    assert.deepEqual(res.body, {
      ...SUCCESS,
      subscribed: { [t.fx.member2.id]: ['design'] },
      already_subscribed: {},
    });
    const id = t.fx.channels.design.id;
    const subscribers = ids(t.fx.admin, t.fx.member, t.fx.member2);
    const [add, peers] = await bus.takeRaw();
    assert.deepEqual(add.event, {
      type: 'subscription',
      op: 'add',
      subscriptions: [
        await expectedSubscription(t, t.fx.member2.id, 'design', {
          subscribers,
          subscriber_count: 3,
          color: '#e79ab5',
        }),
      ],
    });
    assert.deepEqual(add.users, [t.fx.member2.id]);
    assert.deepEqual(add.perUser, {
      [t.fx.member2.id]: { __notification_defaults: MEMBER_DEFAULTS },
    });
    assert.deepEqual(peers.event, {
      type: 'subscription',
      op: 'peer_add',
      stream_ids: [id],
      user_ids: [t.fx.member2.id],
    });
    assert.deepEqual(
      [...peers.users].sort((a, b) => a - b),
      ids(t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member, t.fx.bot),
    );
  });

  test('already subscribed: reported, nothing sent', async () => {
    const res = await subscribe('member', {
      subscriptions: [{ name: 'Design' }, { name: 'general' }],
    });
    assert.deepEqual(res.body, {
      ...SUCCESS,
      subscribed: {},
      already_subscribed: { [t.fx.member.id]: ['design', 'general'] },
    });
    assert.deepEqual(await bus.take(), []);
  });

  test('a requested color is used; a former subscription keeps its settings', async () => {
    await subscribe('member2', { subscriptions: [{ name: 'design', color: '#123456' }] });
    assert.equal(
      (await subscriptionRow(t, t.fx.member2.id, t.fx.channels.design.id))!.color,
      '#123456',
    );
    await t.as(t.fx.member2).delete('/users/me/subscriptions', { subscriptions: ['design'] });
    await subscribe('member2', { subscriptions: [{ name: 'design', color: '#abcdef' }] });
    const row = (await subscriptionRow(t, t.fx.member2.id, t.fx.channels.design.id))!;
    assert.equal(row.active, 1);
    assert.equal(row.color, '#123456');
    assertError(
      await subscribe('member2', { subscriptions: [{ name: 'general', color: 'red' }] }),
      'add.color is not a valid hex color code',
    );
  });

  test('private channels: only with access to their messages', async () => {
    assertError(
      await subscribe('member2', { subscriptions: [{ name: 'private' }] }),
      'Unable to access channel (private).',
    );
    // Administrators see a private channel exist but cannot join it on their own.
    assertError(
      await subscribe('admin', { subscriptions: [{ name: 'secret' }] }),
      'Unable to access channel (secret).',
    );
    const res = await subscribe('member2', {
      subscriptions: [{ name: 'private' }, { name: 'design' }],
      authorization_errors_fatal: false,
    });
    assert.deepEqual(res.body, {
      ...SUCCESS,
      subscribed: { [t.fx.member2.id]: ['design'] },
      already_subscribed: {},
      unauthorized: ['private'],
    });
  });

  test("a private channel's can_subscribe_group lets its members join", async () => {
    const value = { direct_members: [t.fx.member2.id], direct_subgroups: [] };
    await t.as(t.fx.owner).patch(`/streams/${t.fx.channels.private.id}`, {
      can_subscribe_group: { new: value },
    });
    await bus.take();
    const res = await subscribe('member2', { subscriptions: [{ name: 'private' }] });
    assert.deepEqual(res.body.subscribed, { [t.fx.member2.id]: ['private'] });
    const events = await bus.take();
    // member2 already saw the channel through the group: no stream create.
    assert.deepEqual(
      events.map((e) => [e.event.type, e.event.op]),
      [
        ['subscription', 'add'],
        ['subscription', 'peer_add'],
      ],
    );
    assert.deepEqual(events[1].users, ids(t.fx.owner, t.fx.admin, t.fx.member));
  });

  test('guests may not use this endpoint', async () => {
    assertError(
      await subscribe('guest', { subscriptions: [{ name: 'general' }] }),
      'Not allowed for guest users',
    );
  });

  test('bots subscribe like members', async () => {
    const res = await subscribe('bot', { subscriptions: [{ name: 'design' }] });
    assert.deepEqual(res.body.subscribed, { [t.fx.bot.id]: ['design'] });
  });
});

describe('POST /users/me/subscriptions: principals', () => {
  test('subscribing others, by id and by email', async () => {
    const res = await subscribe('member', {
      subscriptions: [{ name: 'design' }],
      principals: [t.fx.member2.id, t.fx.moderator.id],
    });
    assert.deepEqual(res.body, {
      ...SUCCESS,
      subscribed: { [t.fx.member2.id]: ['design'], [t.fx.moderator.id]: ['design'] },
      already_subscribed: {},
    });
    const byEmail = await subscribe('member', {
      subscriptions: [{ name: 'design' }],
      principals: [t.fx.member2.email, t.fx.member.email],
    });
    assert.deepEqual(byEmail.body.already_subscribed, {
      [t.fx.member2.id]: ['design'],
      [t.fx.member.id]: ['design'],
    });
  });

  test('a guest subscribed to a public channel first learns it exists', async () => {
    await subscribe('admin', { subscriptions: [{ name: 'design' }], principals: [t.fx.guest.id] });
    const events = await bus.take();
    assert.deepEqual(events[0], {
      event: {
        type: 'stream',
        op: 'create',
        streams: [await expectedChannel(t, 'design', { subscriber_count: 3 })],
      },
      users: [t.fx.guest.id],
    });
    assert.deepEqual(
      events.slice(1).map((e) => [e.event.op, e.users]),
      [
        ['add', [t.fx.guest.id]],
        [
          'peer_add',
          ids(t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member, t.fx.member2, t.fx.bot),
        ],
      ],
    );
  });

  test('who may subscribe others', async () => {
    const g = await systemGroups(t);
    await t.as(t.fx.owner).patch('/realm', {
      can_add_subscribers_group: { new: g['role:administrators'] },
    });
    assertError(
      await subscribe('member', {
        subscriptions: [{ name: 'design' }],
        principals: [t.fx.member2.id],
      }),
      'Insufficient permission',
    );
    // Subscribing only oneself needs no such right.
    assert.equal(
      (
        await subscribe('member2', {
          subscriptions: [{ name: 'design' }],
          principals: [t.fx.member2.id],
        })
      ).status,
      200,
    );
    // The channel's own add-subscribers group, or administering the channel, is enough.
    await t.as(t.fx.admin).patch(`/streams/${t.fx.channels.general.id}`, {
      can_add_subscribers_group: {
        new: { direct_members: [t.fx.member.id], direct_subgroups: [] },
      },
    });
    await t.as(t.fx.member).delete('/users/me/subscriptions', {
      subscriptions: ['general'],
      principals: [t.fx.bot.id],
    });
    assert.equal(
      (
        await subscribe('member', {
          subscriptions: [{ name: 'general' }],
          principals: [t.fx.bot.id],
        })
      ).status,
      200,
    );
    assert.equal(
      (
        await subscribe('admin', {
          subscriptions: [{ name: 'design' }],
          principals: [t.fx.moderator.id],
        })
      ).status,
      200,
    );
  });

  test('unknown and deactivated principals', async () => {
    assertError(
      await subscribe('member', { subscriptions: [{ name: 'design' }], principals: [99999] }),
      'No such user',
    );
    assertError(
      await subscribe('member', {
        subscriptions: [{ name: 'design' }],
        principals: ['nobody@parley.test'],
      }),
      'No such user',
    );
    assertError(
      await subscribe('member', {
        subscriptions: [{ name: 'design' }],
        principals: [t.fx.deactivated.id],
      }),
      'User is deactivated',
    );
    assertError(
      await subscribe('member', { subscriptions: [{ name: 'design' }], principals: [1, 'a'] }),
      'Invalid principals',
    );
  });
});
