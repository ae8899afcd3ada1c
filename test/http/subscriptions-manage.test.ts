// Leaving channels and subscription settings: DELETE /users/me/subscriptions, POST
// /users/me/subscriptions/properties, PATCH /users/me/subscriptions/{id} and GET
// /users/{id}/subscriptions/{stream_id}, with permissions, errors and exact events.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { SUCCESS } from '../support/client.ts';
import { captureNotices, ids, type NoticeLog } from '../support/notices.ts';
import { assertError, subscriptionRow, systemGroups } from '../support/channels.ts';

let t: TestApp;
let bus: NoticeLog;
beforeEach(async () => {
  t = await buildTestApp();
  bus = captureNotices(t);
});
afterEach(async () => {
  await t.close();
});

const unsubscribe = (who: keyof typeof t.fx, params: Record<string, unknown>) =>
  t.as(t.fx[who] as never).delete('/users/me/subscriptions', params);

const setProperties = (who: keyof typeof t.fx, data: unknown[]) =>
  t.as(t.fx[who] as never).post('/users/me/subscriptions/properties', { subscription_data: data });

describe('DELETE /users/me/subscriptions', () => {
  test('leaving a public channel: remove to the user, peer_remove to the others', async () => {
    const res = await unsubscribe('member', { subscriptions: ['design'] });
    assert.deepEqual(res.body, { ...SUCCESS, removed: ['design'], not_removed: [] });
    const id = t.fx.channels.design.id;
    assert.deepEqual(await bus.take(), [
      {
        event: {
          type: 'subscription',
          op: 'remove',
          subscriptions: [{ name: 'design', stream_id: id }],
        },
        users: [t.fx.member.id],
      },
      {
        event: {
          type: 'subscription',
          op: 'peer_remove',
          stream_ids: [id],
          user_ids: [t.fx.member.id],
        },
        users: ids(t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member2, t.fx.bot),
      },
    ]);
    assert.equal((await subscriptionRow(t, t.fx.member.id, id))!.active, 0);
  });

  test('leaving a private channel: the channel vanishes for the user', async () => {
    const res = await unsubscribe('member', { subscriptions: ['private', 'general'] });
    assert.deepEqual(res.body, { ...SUCCESS, removed: ['private', 'general'], not_removed: [] });
    const p = t.fx.channels.private.id;
    const g = t.fx.channels.general.id;
    assert.deepEqual(await bus.take(), [
      {
        event: {
          type: 'subscription',
          op: 'remove',
          subscriptions: [
            { name: 'private', stream_id: p },
            { name: 'general', stream_id: g },
          ],
        },
        users: [t.fx.member.id],
      },
      {
        event: { type: 'stream', op: 'delete', streams: [{ stream_id: p }], stream_ids: [p] },
        users: [t.fx.member.id],
      },
      {
        event: {
          type: 'subscription',
          op: 'peer_remove',
          stream_ids: [p],
          user_ids: [t.fx.member.id],
        },
        users: ids(t.fx.owner, t.fx.admin),
      },
      {
        event: {
          type: 'subscription',
          op: 'peer_remove',
          stream_ids: [g],
          user_ids: [t.fx.member.id],
        },
        users: ids(t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member2, t.fx.guest, t.fx.bot),
      },
    ]);
  });

  test('an administrator leaving a private channel still sees it', async () => {
    await unsubscribe('owner', { subscriptions: ['private'] });
    const events = await bus.take();
    assert.deepEqual(
      events.map((e) => [e.event.op, e.users]),
      [
        ['remove', [t.fx.owner.id]],
        ['peer_remove', ids(t.fx.admin, t.fx.member)],
      ],
    );
  });

  test('channels the user is not in are reported, names are case-insensitive', async () => {
    const res = await unsubscribe('member2', { subscriptions: ['DESIGN', 'general'] });
    assert.deepEqual(res.body, { ...SUCCESS, removed: ['general'], not_removed: ['design'] });
  });

  test('unknown channels are an error; nothing changes', async () => {
    assertError(
      await unsubscribe('member', { subscriptions: ['design', 'nope', 'nada'] }),
      'Channel(s) (nope, nada) do not exist',
    );
    assert.equal((await subscriptionRow(t, t.fx.member.id, t.fx.channels.design.id))!.active, 1);
    assert.deepEqual(await bus.take(), []);
    assertError(
      await unsubscribe('member', { subscriptions: [' '] }),
      "Channel name can't be empty.",
    );
  });

  test('guests and bots may leave channels', async () => {
    assert.deepEqual((await unsubscribe('guest', { subscriptions: ['general'] })).body, {
      ...SUCCESS,
      removed: ['general'],
      not_removed: [],
    });
    assert.deepEqual((await unsubscribe('bot', { subscriptions: ['general'] })).body.removed, [
      'general',
    ]);
  });

  test('removing others takes the channel’s remove-subscribers group or administration', async () => {
    assertError(
      await unsubscribe('member', { subscriptions: ['announce'], principals: [t.fx.member2.id] }),
      'Insufficient permission',
    );
    // Administrators may.
    assert.deepEqual(
      (await unsubscribe('admin', { subscriptions: ['announce'], principals: [t.fx.member2.id] }))
        .body.removed,
      ['announce'],
    );
    // A user's own bot is theirs to remove.
    assert.deepEqual(
      (await unsubscribe('member', { subscriptions: ['general'], principals: [t.fx.bot.email] }))
        .body.removed,
      ['general'],
    );
    // The channel's remove-subscribers group.
    const g = await systemGroups(t);
    await t.as(t.fx.owner).patch(`/streams/${t.fx.channels.general.id}`, {
      can_remove_subscribers_group: { new: g['role:members'] },
    });
    assert.deepEqual(
      (await unsubscribe('member', { subscriptions: ['general'], principals: [t.fx.member2.id] }))
        .body.removed,
      ['general'],
    );
    // The channel's administer group: the moderator created secret.
    assert.deepEqual(
      (await unsubscribe('moderator', { subscriptions: ['secret'], principals: [t.fx.member2.id] }))
        .body.removed,
      ['secret'],
    );
    // A private channel one cannot see is not one to manage.
    await t.as(t.fx.owner).patch(`/streams/${t.fx.channels.private.id}`, {
      can_remove_subscribers_group: { new: g['role:members'] },
    });
    assertError(
      await unsubscribe('member2', { subscriptions: ['private'], principals: [t.fx.member.id] }),
      'Insufficient permission',
    );
  });

  test('principals are checked', async () => {
    assertError(
      await unsubscribe('admin', { subscriptions: ['general'], principals: [99999] }),
      'No such user',
    );
    assertError(
      await unsubscribe('admin', { subscriptions: ['general'], principals: [t.fx.deactivated.id] }),
      'User is deactivated',
    );
    assertError(
      await unsubscribe('admin', {}),
      "Missing 'subscriptions' argument",
      'REQUEST_VARIABLE_MISSING',
      { var_name: 'subscriptions' },
    );
  });

  test('archived channels can still be left', async () => {
    await t.as(t.fx.admin).delete(`/streams/${t.fx.channels.design.id}`);
    assert.deepEqual((await unsubscribe('member', { subscriptions: ['design'] })).body.removed, [
      'design',
    ]);
  });

  test('401 without valid credentials', async () => {
    assert.equal((await unsubscribe('deactivated', { subscriptions: ['general'] })).status, 401);
    assert.equal(
      (await t.as(null).delete('/users/me/subscriptions', { subscriptions: ['general'] })).status,
      401,
    );
  });
});

describe('subscription properties', () => {
  const update = (streamId: number, property: string, value: unknown) => ({
    type: 'subscription',
    op: 'update',
    property,
    value,
    stream_id: streamId,
  });

  test('each property changes and is sent to the user only', async () => {
    const id = t.fx.channels.design.id;
    const res = await setProperties('member', [
      { stream_id: id, property: 'color', value: '#aabbcc' },
      { stream_id: id, property: 'pin_to_top', value: true },
      { stream_id: id, property: 'desktop_notifications', value: true },
      { stream_id: id, property: 'audible_notifications', value: false },
      { stream_id: id, property: 'push_notifications', value: true },
      { stream_id: id, property: 'email_notifications', value: false },
      { stream_id: id, property: 'wildcard_mentions_notify', value: true },
    ]);
    assert.deepEqual(res.body, SUCCESS, res.text);
    assert.deepEqual(await bus.take(), [
      { event: update(id, 'color', '#aabbcc'), users: [t.fx.member.id] },
      { event: update(id, 'pin_to_top', true), users: [t.fx.member.id] },
      { event: update(id, 'desktop_notifications', true), users: [t.fx.member.id] },
      { event: update(id, 'audible_notifications', false), users: [t.fx.member.id] },
      { event: update(id, 'push_notifications', true), users: [t.fx.member.id] },
      { event: update(id, 'email_notifications', false), users: [t.fx.member.id] },
      { event: update(id, 'wildcard_mentions_notify', true), users: [t.fx.member.id] },
    ]);
    const subs = await t.as(t.fx.member).get('/users/me/subscriptions');
    const design = (subs.body.subscriptions as Array<Record<string, unknown>>).find(
      (s) => s.stream_id === id,
    )!;
    assert.deepEqual(
      [
        design.color,
        design.pin_to_top,
        design.desktop_notifications,
        design.audible_notifications,
        design.push_notifications,
        design.email_notifications,
        design.wildcard_mentions_notify,
      ],
      ['#aabbcc', true, true, false, true, false, true],
    );
  });

  test('is_muted and its legacy inverse in_home_view: both events, either way', async () => {
    const id = t.fx.channels.general.id;
    await setProperties('member', [{ stream_id: id, property: 'is_muted', value: true }]);
    assert.deepEqual(await bus.take(), [
      { event: update(id, 'in_home_view', false), users: [t.fx.member.id] },
      { event: update(id, 'is_muted', true), users: [t.fx.member.id] },
    ]);
    await setProperties('member', [{ stream_id: id, property: 'in_home_view', value: true }]);
    assert.deepEqual(await bus.take(), [
      { event: update(id, 'in_home_view', true), users: [t.fx.member.id] },
      { event: update(id, 'is_muted', false), users: [t.fx.member.id] },
    ]);
    assert.equal((await subscriptionRow(t, t.fx.member.id, id))!.is_muted, 0);
  });

  test('PATCH /users/me/subscriptions/{id}: one property', async () => {
    const id = t.fx.channels.general.id;
    const res = await t
      .as(t.fx.guest)
      .patch(`/users/me/subscriptions/${id}`, { property: 'color', value: '#010203' });
    assert.deepEqual(res.body, SUCCESS, res.text);
    const mute = await t
      .as(t.fx.guest)
      .patch(`/users/me/subscriptions/${id}`, { property: 'is_muted', value: true });
    assert.deepEqual(mute.body, SUCCESS, mute.text);
    assert.deepEqual(await bus.take(), [
      { event: update(id, 'color', '#010203'), users: [t.fx.guest.id] },
      { event: update(id, 'in_home_view', false), users: [t.fx.guest.id] },
      { event: update(id, 'is_muted', true), users: [t.fx.guest.id] },
    ]);
    assertError(
      await t.as(t.fx.guest).patch(`/users/me/subscriptions/${t.fx.channels.design.id}`, {
        property: 'is_muted',
        value: true,
      }),
      'Invalid channel ID',
    );
  });

  test('bad properties and values; nothing applies when one change is bad', async () => {
    const id = t.fx.channels.design.id;
    assertError(
      await setProperties('member', [{ stream_id: id, property: 'volume', value: true }]),
      'Unknown subscription property: volume',
    );
    assertError(
      await setProperties('member', [{ stream_id: id, property: 'color', value: 'blue' }]),
      'color is not a valid hex color code',
    );
    assertError(
      await setProperties('member', [{ stream_id: id, property: 'color', value: true }]),
      'color is not a string',
    );
    assertError(
      await setProperties('member', [{ stream_id: id, property: 'is_muted', value: 'yes' }]),
      'is_muted is not a boolean',
    );
    assertError(
      await setProperties('member', [
        { stream_id: id, property: 'pin_to_top', value: true },
        { stream_id: t.fx.channels.secret.id, property: 'pin_to_top', value: true },
      ]),
      'Invalid channel ID',
    );
    assertError(
      await setProperties('member2', [{ stream_id: id, property: 'pin_to_top', value: true }]),
      `Not subscribed to channel ID ${id}`,
    );
    assertError(
      await setProperties('member', [{ stream_id: id, property: 'pin_to_top' }]),
      'subscription_data[0]["value"] field is missing',
    );
    assert.equal((await subscriptionRow(t, t.fx.member.id, id))!.pin_to_top, 0);
    assert.deepEqual(await bus.take(), []);
  });
});

describe('GET /users/{user_id}/subscriptions/{stream_id}', () => {
  test('whether a user is subscribed', async () => {
    const yes = await t
      .as(t.fx.member2)
      .get(`/users/${t.fx.member.id}/subscriptions/${t.fx.channels.design.id}`);
    assert.deepEqual(yes.body, { ...SUCCESS, is_subscribed: true });
    const no = await t
      .as(t.fx.member)
      .get(`/users/${t.fx.member2.id}/subscriptions/${t.fx.channels.design.id}`);
    assert.deepEqual(no.body, { ...SUCCESS, is_subscribed: false });
  });

  test('channels the caller cannot see and unknown users', async () => {
    assertError(
      await t
        .as(t.fx.member)
        .get(`/users/${t.fx.member2.id}/subscriptions/${t.fx.channels.secret.id}`),
      'Invalid channel ID',
    );
    assertError(
      await t.as(t.fx.member).get(`/users/99999/subscriptions/${t.fx.channels.design.id}`),
      'No such user',
    );
  });
});
