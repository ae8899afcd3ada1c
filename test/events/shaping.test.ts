// Per-client shaping through the queue API: each client gets the form of an event its
// capabilities and register flags ask for, or nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ParleyEvent } from '../../src/events/types.ts';
import {
  ALICE,
  ALL,
  BOB,
  client,
  env,
  EventQueues,
  notice,
  open,
  REALM,
  take,
} from './queue-kit.ts';

test('delete_message: one bulk event with sorted ids, or one event per message', () => {
  const q = new EventQueues(env());
  const bulk = open(q, client({}, { bulk_message_deletion: true, empty_topic_name: true }));
  const single = open(q, client({}, { empty_topic_name: true }));
  q.deliver([
    notice({
      type: 'delete_message',
      message_ids: [9, 3],
      message_type: 'stream',
      stream_id: 5,
      topic: 'lunch',
    }),
  ]);
  assert.deepEqual(take(q, bulk), [
    {
      type: 'delete_message',
      message_ids: [3, 9],
      message_type: 'stream',
      stream_id: 5,
      topic: 'lunch',
      id: 0,
    },
  ]);
  assert.deepEqual(take(q, single), [
    {
      type: 'delete_message',
      message_id: 3,
      message_type: 'stream',
      stream_id: 5,
      topic: 'lunch',
      id: 0,
    },
    {
      type: 'delete_message',
      message_id: 9,
      message_type: 'stream',
      stream_id: 5,
      topic: 'lunch',
      id: 1,
    },
  ]);
});

test('the empty topic is shown as the realm display name to clients without empty_topic_name', () => {
  const q = new EventQueues(env());
  const modern = open(q, client({}, ALL), ALICE, 'lobby');
  const old = open(q, client(), ALICE, 'lobby');
  const events: ParleyEvent[] = [
    { type: 'delete_message', message_ids: [1], message_type: 'stream', stream_id: 5, topic: '' },
    {
      type: 'update_message',
      message_id: 1,
      message_ids: [1],
      orig_subject: '',
      subject: 'moved',
      stream_id: 5,
    },
    { type: 'user_topic', stream_id: 5, topic_name: '', last_updated: 1, visibility_policy: 1 },
    { type: 'typing', op: 'start', message_type: 'stream', stream_id: 5, topic: '' },
    {
      type: 'update_message_flags',
      op: 'remove',
      operation: 'remove',
      flag: 'read',
      messages: [1],
      all: false,
      message_details: {
        1: { type: 'stream', stream_id: 5, topic: '', unmuted_stream_msg: false },
      },
    },
    {
      type: 'message',
      message: { id: 1, type: 'stream', display_recipient: 'general', subject: '' },
      flags: [],
    },
  ];
  q.deliver(events.map((e) => notice(e)));
  const topics = (list: Record<string, unknown>[]) =>
    list.map((e) => {
      const details = e.message_details as Record<string, Record<string, unknown>> | undefined;
      const message = e.message as Record<string, unknown> | undefined;
      return e.topic ?? e.orig_subject ?? e.topic_name ?? details?.[1].topic ?? message?.subject;
    });
  assert.deepEqual(topics(take(q, modern)), ['', '', '', '', '', '']);
  const oldEvents = take(q, old);
  // No channel typing at all without stream_typing_notifications.
  assert.deepEqual(topics(oldEvents), ['lobby', 'lobby', 'lobby', 'lobby', 'lobby']);
  assert.equal((oldEvents[1] as Record<string, unknown>).subject, 'moved');
});

test('the display name follows realm updates, the newest commit winning', () => {
  const q = new EventQueues(env());
  const id = open(q, client({ eventTypes: ['delete_message'] }), ALICE, 'lobby');
  const rename = (value: string, seq: number) =>
    notice({ type: 'realm', op: 'update', property: 'empty_topic_display_name', value }, [ALICE], {
      realmId: REALM,
      seq,
    });
  const del = notice({
    type: 'delete_message',
    message_ids: [1],
    message_type: 'stream',
    stream_id: 5,
    topic: '',
  });
  q.deliver([rename('hall', 7), del, rename('stale', 6), del]);
  assert.deepEqual(
    take(q, id).map((e) => e.topic),
    ['hall', 'hall'],
  );
});

test('typing in channels only with stream_typing_notifications; direct typing always', () => {
  const q = new EventQueues(env());
  const withCap = open(q, client({}, { stream_typing_notifications: true }));
  const without = open(q, client());
  q.deliver([
    notice({ type: 'typing', op: 'start', message_type: 'stream', stream_id: 5, topic: 'a' }),
    notice({ type: 'typing', op: 'start', message_type: 'direct', recipients: [] }),
  ]);
  assert.deepEqual(
    take(q, withCap).map((e) => e.message_type),
    ['stream', 'direct'],
  );
  assert.deepEqual(
    take(q, without).map((e) => e.message_type),
    ['direct'],
  );
});

test('presence: simplified form for simplified_presence_events, legacy otherwise', () => {
  const q = new EventQueues(env());
  const simple = open(q, client({}, { simplified_presence_events: true }));
  const legacy = open(q, client());
  q.deliver([
    notice({
      type: 'presence',
      user_id: BOB,
      email: 'bob@x.test',
      server_timestamp: 5,
      presence: { website: { client: 'website', status: 'active', timestamp: 5, pushable: false } },
      presences: { [BOB]: { active_timestamp: 5, idle_timestamp: 5 } },
    }),
  ]);
  assert.deepEqual(take(q, simple), [
    { type: 'presence', presences: { [BOB]: { active_timestamp: 5, idle_timestamp: 5 } }, id: 0 },
  ]);
  assert.deepEqual(take(q, legacy), [
    {
      type: 'presence',
      user_id: BOB,
      email: 'bob@x.test',
      server_timestamp: 5,
      presence: { website: { client: 'website', status: 'active', timestamp: 5, pushable: false } },
      id: 0,
    },
  ]);
});

test('a deactivated group is removed for clients without include_deactivated_groups', () => {
  const q = new EventQueues(env());
  const modern = open(q, client({}, { include_deactivated_groups: true }));
  const old = open(q, client());
  q.deliver([
    notice({ type: 'user_group', op: 'update', group_id: 3, data: { deactivated: true } }),
  ]);
  assert.deepEqual(take(q, modern), [
    { type: 'user_group', op: 'update', group_id: 3, data: { deactivated: true }, id: 0 },
  ]);
  assert.deepEqual(take(q, old), [{ type: 'user_group', op: 'remove', group_id: 3, id: 0 }]);
});

test('legacy settings events only without user_settings_object; event_types filter', () => {
  const q = new EventQueues(env());
  const modern = open(q, client({}, { user_settings_object: true }));
  const old = open(q, client());
  const onlyTopics = open(q, client({ eventTypes: ['user_topic', 'muted_topics'] }));
  const onlyMuted = open(q, client({ eventTypes: ['muted_topics'] }));
  q.deliver([
    notice({ type: 'user_settings', op: 'update', property: 'enter_sends', value: true }),
    notice({
      type: 'update_display_settings',
      user: 'a@x.test',
      setting_name: 'emojiset',
      setting: 'text',
    }),
    notice({ type: 'muted_topics', muted_topics: [] }),
    notice({
      type: 'user_topic',
      stream_id: 1,
      topic_name: 't',
      last_updated: 1,
      visibility_policy: 1,
    }),
  ]);
  const types = (id: string) => take(q, id).map((e) => e.type);
  assert.deepEqual(types(modern), ['user_settings', 'muted_topics', 'user_topic']);
  assert.deepEqual(types(old), [
    'user_settings',
    'update_display_settings',
    'muted_topics',
    'user_topic',
  ]);
  // A client asking for both gets topic visibility once, as user_topic.
  assert.deepEqual(types(onlyTopics), ['user_topic']);
  assert.deepEqual(types(onlyMuted), ['muted_topics']);
});

test('realm_user add: client_gravatar clients compute the Gravatar of addresses they see', () => {
  const q = new EventQueues(env());
  const gravatar = open(q, client({ clientGravatar: true }));
  const urls = open(q, client({ clientGravatar: false }));
  const person = (deliveryEmail: string | null) => ({
    user_id: BOB,
    delivery_email: deliveryEmail,
    avatar_url: 'https://secure.gravatar.com/avatar/abc?d=identicon&version=1',
  });
  q.deliver([
    notice({ type: 'realm_user', op: 'add', person: person('bob@x.test') }),
    notice({ type: 'realm_user', op: 'add', person: person(null) }),
  ]);
  const avatars = (id: string) =>
    take(q, id).map((e) => (e.person as { avatar_url: unknown }).avatar_url);
  assert.deepEqual(avatars(gravatar), [null, person(null).avatar_url]);
  assert.deepEqual(avatars(urls), [person(null).avatar_url, person(null).avatar_url]);
});

test('message events: narrow, per-user flags, and realm-wide listeners', () => {
  const q = new EventQueues(env());
  const all = open(q, client(), ALICE);
  const narrowed = open(
    q,
    client({
      narrow: [
        { operator: 'channel', operand: 'General' },
        { operator: 'is', operand: 'unread' },
      ],
    }),
    ALICE,
  );
  const bobsPublic = open(q, client({ allPublicStreams: true }), BOB);
  const bobsPlain = open(q, client(), BOB);
  const msg = (id: number, channel: string) => ({
    type: 'message',
    message: {
      id,
      type: 'stream',
      display_recipient: channel,
      subject: 't',
      sender_email: 'c@x.test',
    },
  });
  const publicChannel = { realmWide: { realmId: REALM, publicChannel: true } };
  q.deliver([
    notice(msg(1, 'general'), [ALICE], { perUser: { [ALICE]: { flags: [] } }, ...publicChannel }),
    notice(msg(2, 'general'), [ALICE], {
      perUser: { [ALICE]: { flags: ['read'] } },
      ...publicChannel,
    }),
    notice(msg(3, 'random'), [ALICE], { perUser: { [ALICE]: { flags: [] } }, ...publicChannel }),
    notice(msg(4, 'secret'), [ALICE], { perUser: { [ALICE]: { flags: [] } } }),
  ]);
  const ids = (id: string, user = ALICE) =>
    take(q, id, user).map((e) => [(e.message as { id: number }).id, e.flags]);
  assert.deepEqual(ids(all), [
    [1, []],
    [2, ['read']],
    [3, []],
    [4, []],
  ]);
  assert.deepEqual(ids(narrowed), [[1, []]]);
  // Bob is not a recipient: as a realm-wide listener he gets public-channel messages, without flags.
  assert.deepEqual(ids(bobsPublic, BOB), [
    [1, []],
    [2, []],
    [3, []],
  ]);
  assert.deepEqual(ids(bobsPlain, BOB), []);
});

test('message payload: apply_markdown, client_gravatar and the local echo, per queue', () => {
  const q = new EventQueues(env());
  const html = open(q, client({ applyMarkdown: true, clientGravatar: true }));
  const markdown = open(q, client({ applyMarkdown: false, clientGravatar: false }));
  q.deliver([
    notice(
      {
        type: 'message',
        message: {
          id: 1,
          type: 'private',
          content: '<p><strong>hi</strong></p>',
          content_type: 'text/html',
          avatar_url: 'https://secure.gravatar.com/avatar/abc',
          __raw_content: '**hi**',
        },
        flags: [],
      },
      [ALICE],
      {
        perUser: {
          [ALICE]: {
            flags: ['read'],
            __gravatar_avatar_null: true,
            __local_echo: { queueId: markdown, localId: '7.01' },
          },
        },
      },
    ),
  ]);
  assert.deepEqual(take(q, html), [
    {
      type: 'message',
      message: {
        id: 1,
        type: 'private',
        content: '<p><strong>hi</strong></p>',
        content_type: 'text/html',
        avatar_url: null,
      },
      flags: ['read'],
      id: 0,
    },
  ]);
  assert.deepEqual(take(q, markdown), [
    {
      type: 'message',
      message: {
        id: 1,
        type: 'private',
        content: '**hi**',
        content_type: 'text/x-markdown',
        avatar_url: 'https://secure.gravatar.com/avatar/abc',
      },
      flags: ['read'],
      local_message_id: '7.01',
      id: 0,
    },
  ]);
});

test('queues of one form after the sending queue get the message without its local id', () => {
  // Consecutive queues of one client form take the shaping made for the one before
  // (queues.ts): the sending queue's, which names its local id, must not be taken.
  const q = new EventQueues(env());
  const form = { applyMarkdown: true, clientGravatar: false };
  const sending = open(q, client(form));
  const other = open(q, client(form));
  const bob = open(q, client(form), BOB);
  const message = { id: 1, type: 'private', content: '<p>hi</p>', content_type: 'text/html' };
  const echo = { queueId: sending, localId: '7.01' };
  q.deliver([
    notice({ type: 'message', message, flags: [] }, [ALICE, BOB], {
      perUser: { [ALICE]: { flags: ['read'], __local_echo: echo }, [BOB]: { flags: [] } },
    }),
  ]);
  assert.deepEqual(take(q, sending), [
    { type: 'message', message, flags: ['read'], local_message_id: '7.01', id: 0 },
  ]);
  assert.deepEqual(take(q, other), [{ type: 'message', message, flags: ['read'], id: 0 }]);
  assert.deepEqual(take(q, bob, BOB), [{ type: 'message', message, flags: [], id: 0 }]);
});

test('archived_channels: archiving is an update for aware clients, a deletion for others', () => {
  const q = new EventQueues(env());
  const aware = open(q, client({}, { archived_channels: true }));
  const old = open(q, client());
  q.deliver([
    notice({
      type: 'stream',
      op: 'update',
      stream_id: 5,
      name: 'x',
      property: 'is_archived',
      value: true,
    }),
    notice({
      type: 'stream',
      op: 'delete',
      streams: [{ stream_id: 5 }],
      stream_ids: [5],
      __for_archiving: true,
    }),
    notice({
      type: 'stream',
      op: 'update',
      stream_id: 5,
      name: 'x',
      property: 'is_archived',
      value: false,
    }),
    notice({ type: 'stream', op: 'create', streams: [{ stream_id: 5 }], __for_unarchiving: true }),
    notice({ type: 'stream', op: 'delete', streams: [{ stream_id: 6 }], stream_ids: [6] }),
  ]);
  const ops = (id: string) => take(q, id).map((e) => `${String(e.op)}:${String(e.value ?? '')}`);
  assert.deepEqual(ops(aware), ['update:true', 'update:false', 'delete:']);
  assert.deepEqual(ops(old), ['delete:', 'create:', 'delete:']);
  assert.ok(take(q, old).every((e) => !('__for_archiving' in e) && !('__for_unarchiving' in e)));
});

test('subscriptions: inherited notification settings, and subscriber lists only where kept', () => {
  const q = new EventQueues(env());
  const nulls = open(q, client({ includeSubscribers: true }, { notification_settings_null: true }));
  const values = open(q, client({ includeSubscribers: 'partial' }));
  const noLists = open(q, client({ includeSubscribers: false }));
  const sub = { stream_id: 5, desktop_notifications: null, push_notifications: true };
  q.deliver([
    notice({ type: 'subscription', op: 'add', subscriptions: [sub] }, [ALICE], {
      perUser: {
        [ALICE]: {
          __notification_defaults: { desktop_notifications: false, push_notifications: false },
        },
      },
    }),
    notice({
      type: 'subscription',
      op: 'peer_add',
      stream_ids: [5],
      user_ids: [BOB],
      __only_with_subscribers: true,
    }),
  ]);
  assert.deepEqual(take(q, nulls), [
    { type: 'subscription', op: 'add', subscriptions: [sub], id: 0 },
    { type: 'subscription', op: 'peer_add', stream_ids: [5], user_ids: [BOB], id: 1 },
  ]);
  assert.deepEqual(take(q, values), [
    {
      type: 'subscription',
      op: 'add',
      subscriptions: [{ stream_id: 5, desktop_notifications: false, push_notifications: true }],
      id: 0,
    },
    { type: 'subscription', op: 'peer_add', stream_ids: [5], user_ids: [BOB], id: 1 },
  ]);
  assert.deepEqual(
    take(q, noLists).map((e) => e.op),
    ['add'],
  );
});
