// POST /messages: the delivery rows with their flags (read, mentions, wildcards, alert
// words), wildcard permissions, and the message event at bus level.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { insertGroup, addGroupMembers } from '../../src/store/user-groups.ts';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { subscribersOf, systemGroups } from '../support/channels.ts';
import { captureNotices, ids, type NoticeLog } from '../support/notices.ts';
import { drainEvents, registerQueue, withoutIds } from '../support/events.ts';
import type { FixtureUser } from '../support/fixture.ts';
import {
  addUser,
  assertError,
  channelRecipientId,
  expectedMessage,
  getMessages,
  gravatar,
  rowsOf,
  sendDirect,
  sendToChannel,
  setRealmSetting,
  T0,
  useClock,
} from '../support/messages.ts';

let t: TestApp;
let log: NoticeLog;
beforeEach(async () => {
  t = await buildTestApp();
  useClock(t);
  log = captureNotices(t);
});
afterEach(async () => {
  await t.close();
});

const READ = 1;
const MENTIONED = 8;
const STREAM_WILDCARD = 16;
const TOPIC_WILDCARD = 32;
const ALERT = 64;

async function lastMessage(who: FixtureUser): Promise<Record<string, unknown>> {
  const body = await getMessages(t, who, { anchor: 'newest', num_before: 1, num_after: 0 });
  return (body.messages as Record<string, unknown>[])[0];
}

describe('flags at send', () => {
  test('the sender reads their own message from a UI client, or when read_by_sender says so', async () => {
    const ui = t.as(t.fx.member).withHeaders({ 'user-agent': 'ZulipMobile/27.1 (Android 14)' });
    const res = await ui.post('/messages', {
      type: 'stream',
      to: 'design',
      topic: 't',
      content: 'x',
    });
    assert.deepEqual(await rowsOf(t, res.body.id as number), {
      [t.fx.admin.id]: 0,
      [t.fx.member.id]: READ,
    });
    assert.equal((await lastMessage(t.fx.member)).client, 'ZulipMobile');
    const res2 = await ui.post('/messages', {
      type: 'stream',
      to: 'design',
      topic: 't',
      content: 'x',
      read_by_sender: false,
    });
    assert.deepEqual(await rowsOf(t, res2.body.id as number), {
      [t.fx.admin.id]: 0,
      [t.fx.member.id]: 0,
    });
    const api = await sendToChannel(t, t.fx.member, t.fx.channels.design, 't', 'x', {
      read_by_sender: true,
    });
    assert.deepEqual(await rowsOf(t, api), { [t.fx.admin.id]: 0, [t.fx.member.id]: READ });
  });

  test('a sender not subscribed gets a row too', async () => {
    const id = await sendToChannel(t, t.fx.moderator, t.fx.channels.design, 't', 'x');
    assert.deepEqual(await rowsOf(t, id), {
      [t.fx.admin.id]: 0,
      [t.fx.member.id]: 0,
      [t.fx.moderator.id]: 0,
    });
  });

  test('a channel of hundreds: each active subscriber one row with their own flags', async () => {
    // More subscribers than one batch of delivery rows (200), so rows go in several batches.
    const readers: FixtureUser[] = [];
    for (let i = 0; i < 230; i++) {
      readers.push(await addUser(t, `Reader ${i}`, { channels: [t.fx.channels.general.id] }));
    }
    const [mentioned, alerted, gone] = [readers[150], readers[221], readers[60]];
    await t.ctx.db
      .insertInto('alert_words')
      .values({ user_id: alerted.id, word: 'kiwi' })
      .execute();
    await t.ctx.db.updateTable('users').set({ is_active: 0 }).where('id', '=', gone.id).execute();
    await log.take();
    const id = await sendToChannel(
      t,
      t.fx.moderator,
      t.fx.channels.general,
      't',
      '@**Reader 150** kiwi?',
    );
    const expected: Record<number, number> = {};
    for (const userId of subscribersOf(t, 'general')) expected[userId] = 0;
    for (const u of readers) if (u !== gone) expected[u.id] = 0;
    expected[mentioned.id] = MENTIONED;
    expected[alerted.id] = ALERT;
    assert.deepEqual(await rowsOf(t, id), expected);
    const [notice] = await log.takeRaw();
    assert.equal(notice.event.type, 'message');
    assert.deepEqual(
      notice.users,
      Object.keys(expected)
        .map(Number)
        .sort((a, b) => a - b),
    );
    assert.deepEqual(notice.perUser?.[alerted.id], {
      flags: ['has_alert_word'],
      __gravatar_avatar_null: true,
    });
  });

  test('mentions of users and groups, wildcards and alert words', async () => {
    const group = await insertGroup(t.ctx.db, {
      realm_id: t.fx.realm.id,
      name: 'reviewers',
      description: '',
      is_system_group: 0,
      date_created: T0,
      creator_id: t.fx.admin.id,
    });
    await addGroupMembers(t.ctx.db, group.id, [t.fx.owner.id]);
    await t.ctx.db
      .insertInto('alert_words')
      .values({ user_id: t.fx.moderator.id, word: 'pizza' })
      .execute();
    const id = await sendToChannel(
      t,
      t.fx.member,
      t.fx.channels.general,
      't',
      '@**Nina Member** @*reviewers* Pizza time',
    );
    const rows = await rowsOf(t, id);
    assert.equal(rows[t.fx.member2.id], MENTIONED);
    assert.equal(rows[t.fx.owner.id], MENTIONED);
    assert.equal(rows[t.fx.moderator.id], ALERT);
    assert.equal(rows[t.fx.admin.id], 0);
    const m2 = await lastMessage(t.fx.member2);
    assert.deepEqual(m2.flags, ['mentioned']);

    const all = await sendToChannel(t, t.fx.admin, t.fx.channels.general, 't', 'hey @**all**');
    assert.equal((await rowsOf(t, all))[t.fx.guest.id], STREAM_WILDCARD);
    assert.deepEqual((await lastMessage(t.fx.guest)).flags, [
      'stream_wildcard_mentioned',
      'wildcard_mentioned',
    ]);

    // @**topic** reaches those who took part in the topic: the senders so far.
    const topic = await sendToChannel(
      t,
      t.fx.moderator,
      t.fx.channels.general,
      't',
      '@**topic** done?',
    );
    const trows = await rowsOf(t, topic);
    for (const u of [t.fx.member, t.fx.admin, t.fx.moderator])
      assert.equal(trows[u.id], TOPIC_WILDCARD, u.email);
    for (const u of [t.fx.owner, t.fx.member2, t.fx.guest]) assert.equal(trows[u.id], 0, u.email);
  });

  test('a group whose can_mention_group leaves the sender out cannot be mentioned', async () => {
    const groups = await systemGroups(t);
    const group = await insertGroup(t.ctx.db, {
      realm_id: t.fx.realm.id,
      name: 'quiet',
      description: '',
      is_system_group: 0,
      date_created: T0,
      creator_id: t.fx.admin.id,
      settings: JSON.stringify({ can_mention_group: groups['role:administrators'] }),
    });
    await addGroupMembers(t.ctx.db, group.id, [t.fx.owner.id]);
    assertError(
      await t
        .as(t.fx.member)
        .post('/messages', { type: 'stream', to: 'general', topic: 't', content: 'hi @*quiet*' }),
      400,
      'BAD_REQUEST',
      "You are not allowed to mention user group 'quiet'.",
    );
    // Silent mentions are not mentions; administrators may.
    await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'hi @_*quiet*');
    await sendToChannel(t, t.fx.admin, t.fx.channels.general, 't', 'hi @*quiet*');
  });

  test('wildcards reaching more than 15 people need can_mention_many_users_group', async () => {
    for (let i = 0; i < 9; i++)
      await addUser(t, `Extra Person${i}`, { channels: [t.fx.channels.general.id] });
    assertError(
      await t
        .as(t.fx.member)
        .post('/messages', { type: 'stream', to: 'general', topic: 't', content: '@**all** hi' }),
      400,
      'STREAM_WILDCARD_MENTION_NOT_ALLOWED',
      'You do not have permission to use channel wildcard mentions in this channel.',
    );
    await sendToChannel(t, t.fx.admin, t.fx.channels.general, 't', '@**everyone** hi');
    // Small channels are fine for anyone.
    await sendToChannel(t, t.fx.member, t.fx.channels.design, 't', '@**all** hi');
    const groups = await systemGroups(t);
    await setRealmSetting(t, 'can_mention_many_users_group', groups['role:members']);
    await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', '@**channel** hi');
  });

  test('topic wildcards reaching more than 15 participants need the same permission', async () => {
    const people: FixtureUser[] = [];
    for (let i = 0; i < 16; i++) people.push(await addUser(t, `Talker Number${i}`));
    for (const p of people) await sendToChannel(t, p, t.fx.channels.general, 'busy', 'me too');
    assertError(
      await t.as(t.fx.member).post('/messages', {
        type: 'stream',
        to: 'general',
        topic: 'busy',
        content: '@**topic** stop',
      }),
      400,
      'TOPIC_WILDCARD_MENTION_NOT_ALLOWED',
      'You do not have permission to use topic wildcard mentions in this topic.',
    );
    await sendToChannel(t, t.fx.member, t.fx.channels.general, 'quiet', '@**topic** fine here');
  });
});

describe('the message event', () => {
  test('channel message: every recipient with their flags, realm-wide for public channels', async () => {
    await log.take();
    const id = await sendToChannel(
      t,
      t.fx.member,
      t.fx.channels.design,
      'news',
      'hi @**Adam Admin**',
      {
        queue_id: 'node:queue1',
        local_id: '7.01',
      },
    );
    const [notice, ...rest] = await log.takeRaw();
    // The channel's first message: everyone who can see the channel learns its id.
    assert.deepEqual(
      rest.map((n) => ({ event: n.event, users: n.users })),
      [
        {
          event: {
            type: 'stream',
            op: 'update',
            stream_id: t.fx.channels.design.id,
            name: 'design',
            property: 'first_message_id',
            value: id,
          },
          users: ids(t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member, t.fx.member2, t.fx.bot),
        },
      ],
    );
    const recipient = await channelRecipientId(t, t.fx.channels.design.id);
    const html =
      '<p>hi <span class="user-mention" data-user-id="' +
      t.fx.admin.id +
      '">@Adam Admin</span></p>';
    const { flags: _flags, ...listed } = expectedMessage({
      id,
      sender: t.fx.member,
      html,
      channel: { ...t.fx.channels.design, recipientId: recipient },
      topic: 'news',
      avatarNull: false,
    });
    assert.deepEqual(notice.event, {
      type: 'message',
      flags: [],
      message: { ...listed, __raw_content: 'hi @**Adam Admin**' },
    });
    assert.deepEqual(notice.users, ids(t.fx.admin, t.fx.member));
    assert.deepEqual(notice.realmWide, { realmId: t.fx.realm.id, publicChannel: true });
    assert.deepEqual(notice.perUser, {
      [t.fx.admin.id]: { flags: ['mentioned'], __gravatar_avatar_null: true },
      [t.fx.member.id]: {
        flags: [],
        __gravatar_avatar_null: true,
        __local_echo: { queueId: 'node:queue1', localId: '7.01' },
      },
    });
  });

  test('private channels are not realm-wide; direct messages have no realm-wide part', async () => {
    await log.take();
    await sendToChannel(t, t.fx.member, t.fx.channels.private, 't', 'x');
    await sendDirect(t, t.fx.member, [t.fx.member2], 'y');
    const [priv, dm] = (await log.takeRaw()).filter((n) => n.event.type === 'message');
    assert.deepEqual(priv.realmWide, { realmId: t.fx.realm.id, publicChannel: false });
    assert.deepEqual(priv.users, ids(t.fx.owner, t.fx.member));
    assert.equal(dm.realmWide, undefined);
    assert.deepEqual(dm.users, ids(t.fx.member, t.fx.member2));
  });

  test("client_gravatar may null the avatar only for those who may see the sender's address", async () => {
    await t.ctx.db
      .updateTable('users')
      .set({ settings: JSON.stringify({ email_address_visibility: 3 }) })
      .where('id', '=', t.fx.member.id)
      .execute();
    await log.take();
    await sendToChannel(t, t.fx.member, t.fx.channels.design, 't', 'x');
    const [notice] = await log.takeRaw();
    assert.deepEqual(notice.perUser, {
      [t.fx.admin.id]: { flags: [], __gravatar_avatar_null: true },
      [t.fx.member.id]: { flags: [], __gravatar_avatar_null: true },
    });
    await sendDirect(t, t.fx.member, [t.fx.member2], 'x');
    const [dm] = await log.takeRaw();
    assert.deepEqual(dm.perUser![t.fx.member2.id], { flags: [] });
  });

  test('a limited guest gets the message with a placeholder for a sender they may not access', async () => {
    const groups = await systemGroups(t);
    await setRealmSetting(t, 'can_access_all_users_group', groups['role:members']);
    const stranger = await addUser(t, 'Sam Stranger');
    await log.take();
    await sendToChannel(t, stranger, t.fx.channels.general, 't', 'hello all');
    const [notice] = await log.takeRaw();
    const guestCopy = notice.perUser![t.fx.guest.id] as Record<string, Record<string, unknown>>;
    const message = (notice.event as Record<string, unknown>).message as Record<string, unknown>;
    // The same placeholder the guest's user list shows for that user.
    const members = (await t.as(t.fx.guest).get('/users')).body.members as Array<
      Record<string, unknown>
    >;
    const placeholder = members.find((u) => u.user_id === stranger.id)!;
    assert.equal(placeholder.full_name, 'Unknown user');
    assert.deepEqual(guestCopy.message, {
      ...message,
      sender_full_name: 'Unknown user',
      sender_email: `user${stranger.id}@parley.test`,
      avatar_url: placeholder.avatar_url,
    });
    assert.equal(guestCopy.__gravatar_avatar_null, undefined);
    assert.equal(message.sender_full_name, 'Sam Stranger');
    // Recipients with the same flags share their per-user fields: the placeholder stays the
    // guest's alone.
    assert.deepEqual(notice.perUser![t.fx.member.id], notice.perUser![t.fx.admin.id]);
    assert.equal(notice.perUser![t.fx.member.id].message, undefined);
  });

  test('through event queues: each client its form, and the local id to the sending queue', async () => {
    const caps = { notification_settings_null: true, empty_topic_name: true };
    const sender = await registerQueue(t.as(t.fx.member), {
      event_types: ['message'],
      apply_markdown: true,
    });
    const other = await registerQueue(t.as(t.fx.member), {
      event_types: ['message'],
      client_capabilities: caps,
    });
    const reader = await registerQueue(t.as(t.fx.admin), {
      event_types: ['message'],
      apply_markdown: true,
      client_gravatar: false,
    });
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.design, '', '**hi**', {
      queue_id: sender.queue_id,
      local_id: '1.5',
    });
    const recipientId = await channelRecipientId(t, t.fx.channels.design.id);
    const { flags: _f, ...base } = expectedMessage({
      id,
      sender: t.fx.member,
      html: '<p><strong>hi</strong></p>',
      channel: { ...t.fx.channels.design, recipientId },
      topic: 'general chat',
    });
    const events = async (q: { queue_id: string }, who: FixtureUser) =>
      withoutIds(await drainEvents(t.ctx, t.as(who), q.queue_id, -1));
    assert.deepEqual(await events(sender, t.fx.member), [
      { type: 'message', message: base, flags: [], local_message_id: '1.5' },
    ]);
    // Markdown source without apply_markdown; the empty topic as is with empty_topic_name.
    assert.deepEqual(await events(other, t.fx.member), [
      {
        type: 'message',
        message: { ...base, content: '**hi**', content_type: 'text/x-markdown', subject: '' },
        flags: [],
      },
    ]);
    assert.deepEqual(await events(reader, t.fx.admin), [
      {
        type: 'message',
        message: { ...base, avatar_url: gravatar(t.fx.member.delivery_email) },
        flags: [],
      },
    ]);
  });
});
