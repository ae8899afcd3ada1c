// POST /messages: channel and direct messages, who may send where, content and topic
// rules. Flags and the message event: messages-send-flags.test.ts.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { basicAuth, SUCCESS } from '../support/client.ts';
import { systemGroups } from '../support/channels.ts';
import { ids } from '../support/notices.ts';
import type { FixtureUser } from '../support/fixture.ts';
import {
  addUser,
  assertError,
  channelRecipientId,
  expectedMessage,
  getMessages,
  messageRecipientId,
  rowsOf,
  sendDirect,
  sendToChannel,
  setChannel,
  setRealmSetting,
  useClock,
} from '../support/messages.ts';

let t: TestApp;
beforeEach(async () => {
  t = await buildTestApp();
  useClock(t);
});
afterEach(async () => {
  await t.close();
});

async function lastMessage(who: FixtureUser): Promise<Record<string, unknown>> {
  const body = await getMessages(t, who, { anchor: 'newest', num_before: 1, num_after: 0 });
  return (body.messages as Record<string, unknown>[])[0];
}

describe('POST /messages to a channel', () => {
  test('by name: the response, the stored message and what GET /messages returns', async () => {
    const res = await t.as(t.fx.member).post('/messages', {
      type: 'stream',
      to: 'general',
      topic: 'greetings',
      content: 'Hello **world**',
    });
    assert.deepEqual(res.body, { ...SUCCESS, id: res.body.id });
    assert.equal(res.status, 200);
    const id = res.body.id as number;
    const general = {
      ...t.fx.channels.general,
      recipientId: await channelRecipientId(t, t.fx.channels.general.id),
    };
    assert.deepEqual(
      await lastMessage(t.fx.member2),
      expectedMessage({
        id,
        sender: t.fx.member,
        html: '<p>Hello <strong>world</strong></p>',
        channel: general,
        topic: 'greetings',
      }),
    );
    // Every subscriber and nobody else has a row; all start unread (an API client sent it).
    const subscribers = ids(
      t.fx.owner,
      t.fx.admin,
      t.fx.moderator,
      t.fx.member,
      t.fx.member2,
      t.fx.guest,
      t.fx.bot,
    );
    assert.deepEqual(await rowsOf(t, id), Object.fromEntries(subscribers.map((u) => [u, 0])));
  });

  test('by id, with type "channel" and the legacy subject parameter', async () => {
    const res = await t.as(t.fx.admin).post('/messages', {
      type: 'channel',
      to: t.fx.channels.design.id,
      subject: 'legacy',
      content: 'x',
      colour: 'red',
      art: '1',
    });
    assert.equal(res.status, 200, res.text);
    const m = await lastMessage(t.fx.admin);
    assert.equal(m.subject, 'legacy');
    assert.equal(m.stream_id, t.fx.channels.design.id);
    // The alias counts as its parameter: only the unknown keys are ignored.
    assert.deepEqual(res.body.ignored_parameters_unsupported, ['art', 'colour']);
  });

  test('a one-element list names the channel; several are refused', async () => {
    const ok = await t
      .as(t.fx.member)
      .post('/messages', { type: 'stream', to: ['general'], topic: 'a', content: 'x' });
    assert.equal(ok.status, 200, ok.text);
    assertError(
      await t
        .as(t.fx.member)
        .post('/messages', { type: 'stream', to: ['general', 'design'], topic: 'a', content: 'x' }),
      400,
      'BAD_REQUEST',
      'Cannot send to multiple channels',
    );
  });

  test('unknown channels, by name and by id', async () => {
    const res = await t
      .as(t.fx.member)
      .post('/messages', { type: 'stream', to: 'nowhere', topic: 'a', content: 'x' });
    assert.deepEqual(res.body, {
      result: 'error',
      msg: "Channel 'nowhere' does not exist",
      code: 'STREAM_DOES_NOT_EXIST',
      stream: 'nowhere',
    });
    assertError(
      await t
        .as(t.fx.member)
        .post('/messages', { type: 'stream', to: 99999, topic: 'a', content: 'x' }),
      400,
      'BAD_REQUEST',
      'Invalid channel ID',
    );
    // Another organization's channel is unknown here.
    assertError(
      await t.as(t.fx.member).post('/messages', {
        type: 'stream',
        to: t.fx.channels.otherGeneral.id,
        topic: 'a',
        content: 'x',
      }),
      400,
      'BAD_REQUEST',
      'Invalid channel ID',
    );
  });

  test('parameter errors', async () => {
    const m = t.as(t.fx.member);
    assertError(
      await m.post('/messages', { type: 'stream', to: 'general', content: 'x' }),
      400,
      'BAD_REQUEST',
      'Missing topic',
    );
    assertError(
      await m.post('/messages', { type: 'stream', to: 'general', topic: 'a', content: '  \n ' }),
      400,
      'BAD_REQUEST',
      'Message must not be empty',
    );
    // Null bytes are refused for every parameter, by the parameter parser.
    assertError(
      await m.post('/messages', { type: 'stream', to: 'general', topic: 'a', content: 'a\u0000b' }),
      400,
      'BAD_REQUEST',
      'content must not contain null bytes',
    );
    assertError(
      await m.post('/messages', { type: 'stream', to: 'general', topic: 'a\u0000', content: 'x' }),
      400,
      'BAD_REQUEST',
      'topic must not contain null bytes',
    );
    assertError(
      await m.post('/messages', { type: 'stream', to: 'general', topic: 'ab\u0007', content: 'x' }),
      400,
      'BAD_REQUEST',
      'Invalid character in topic, at position 3!',
    );
    assertError(
      await m.post('/messages', { type: 'letter', to: 'general', topic: 'a', content: 'x' }),
      400,
      'BAD_REQUEST',
      'Invalid type',
    );
    const missing = await m.post('/messages', { type: 'stream', to: 'general', topic: 'a' });
    assert.deepEqual(missing.body, {
      result: 'error',
      msg: "Missing 'content' argument",
      code: 'REQUEST_VARIABLE_MISSING',
      var_name: 'content',
    });
    const both = await m.post('/messages', {
      type: 'stream',
      to: 'general',
      topic: 'a',
      subject: 'b',
      content: 'x',
    });
    assert.equal(both.body.code, 'REQUEST_CONFUSING_VAR');
  });

  test('content beyond 10000 characters and topics beyond 60 are cut, not refused', async () => {
    const long = 'é'.repeat(10050);
    const topic = 't'.repeat(70);
    await sendToChannel(t, t.fx.member, t.fx.channels.general, topic, `\n\n${long}   `);
    const row = await t.ctx.db
      .selectFrom('messages')
      .selectAll()
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    const marker = '\n[message truncated]';
    assert.equal(row.content, 'é'.repeat(10000 - marker.length) + marker);
    assert.equal(row.topic, 't'.repeat(57) + '...');
  });

  test('the empty topic: "(no topic)" and the display name mean it; policies may forbid it', async () => {
    await sendToChannel(t, t.fx.member, t.fx.channels.general, '(no topic)', 'a');
    await sendToChannel(t, t.fx.member, t.fx.channels.general, 'general chat', 'b');
    await sendToChannel(t, t.fx.member, t.fx.channels.general, '', 'c');
    const rows = await t.ctx.db.selectFrom('messages').select('topic').execute();
    assert.deepEqual(
      rows.map((r) => r.topic),
      ['', '', ''],
    );

    await setRealmSetting(t, 'topics_policy', 'disable_empty_topic');
    assertError(
      await t
        .as(t.fx.member)
        .post('/messages', { type: 'stream', to: 'general', topic: '', content: 'x' }),
      400,
      'BAD_REQUEST',
      'Topics are required in this organization.',
    );
    // A channel's own policy wins over the organization's.
    await setChannel(t, t.fx.channels.general.id, { topics_policy: 'allow_empty_topic' });
    await sendToChannel(t, t.fx.member, t.fx.channels.general, '', 'allowed here');
    await setChannel(t, t.fx.channels.design.id, { topics_policy: 'disable_empty_topic' });
    await setRealmSetting(t, 'topics_policy', 'allow_empty_topic');
    assertError(
      await t
        .as(t.fx.member)
        .post('/messages', { type: 'stream', to: 'design', topic: '(no topic)', content: 'x' }),
      400,
      'BAD_REQUEST',
      'Sending messages to general chat is not allowed in this channel.',
    );
    await setChannel(t, t.fx.channels.design.id, { topics_policy: 'empty_topic_only' });
    assertError(
      await t
        .as(t.fx.member)
        .post('/messages', { type: 'stream', to: 'design', topic: 'named', content: 'x' }),
      400,
      'BAD_REQUEST',
      'Only general chat is allowed in this channel.',
    );
    await sendToChannel(t, t.fx.member, t.fx.channels.design, '', 'only this');
  });
});

describe('who may send to which channel', () => {
  type Key = 'owner' | 'admin' | 'moderator' | 'member' | 'member2' | 'guest' | 'bot';
  const OK = 'ok';
  const NO_POST = 'You do not have permission to post in this channel.';
  const notAuthorized = (c: string) => `Not authorized to send to channel '${c}'`;
  const unknown = (c: string) => `Channel '${c}' does not exist`;
  const CASES: Record<string, Record<Key, string>> = {
    general: { owner: OK, admin: OK, moderator: OK, member: OK, member2: OK, guest: OK, bot: OK },
    // Public: any member, subscribed or not; guests only where subscribed.
    design: {
      owner: OK,
      admin: OK,
      moderator: OK,
      member: OK,
      member2: OK,
      guest: unknown('design'),
      bot: OK,
    },
    // Private with shared history: subscribers; an administrator sees it but may not post.
    // The bot posts where its owner (member) may.
    private: {
      owner: OK,
      admin: notAuthorized('private'),
      moderator: unknown('private'),
      member: OK,
      member2: unknown('private'),
      guest: unknown('private'),
      bot: OK,
    },
    secret: {
      owner: notAuthorized('secret'),
      admin: notAuthorized('secret'),
      moderator: OK,
      member: unknown('secret'),
      member2: OK,
      guest: unknown('secret'),
      bot: unknown('secret'),
    },
    // Administrators only; the guest is not subscribed, so the channel is unknown to them.
    announce: {
      owner: OK,
      admin: OK,
      moderator: NO_POST,
      member: NO_POST,
      member2: NO_POST,
      guest: unknown('announce'),
      bot: NO_POST,
    },
    // Web-public: anyone may read it, so anyone may post.
    web: { owner: OK, admin: OK, moderator: OK, member: OK, member2: OK, guest: OK, bot: OK },
  };
  for (const [channel, byRole] of Object.entries(CASES)) {
    for (const [role, expected] of Object.entries(byRole) as Array<[Key, string]>) {
      test(`${role} → ${channel}: ${expected}`, async () => {
        const res = await t
          .as(t.fx[role])
          .post('/messages', { type: 'stream', to: channel, topic: 't', content: 'x' });
        if (expected === OK) {
          assert.equal(res.status, 200, res.text);
          return;
        }
        const code = expected.startsWith('Channel') ? 'STREAM_DOES_NOT_EXIST' : 'BAD_REQUEST';
        assert.deepEqual(res.body, {
          result: 'error',
          msg: expected,
          code,
          ...(code === 'STREAM_DOES_NOT_EXIST' ? { stream: channel } : {}),
        });
      });
    }
  }

  test('archived channels take no messages', async () => {
    await setChannel(t, t.fx.channels.design.id, { is_archived: 1 });
    assertError(
      await t
        .as(t.fx.admin)
        .post('/messages', { type: 'stream', to: 'design', topic: 't', content: 'x' }),
      400,
      'BAD_REQUEST',
      "Not authorized to send to channel 'design'",
    );
  });

  test('deactivated users, bad keys and no credentials are 401', async () => {
    const params = { type: 'stream', to: 'general', topic: 't', content: 'x' };
    for (const client of [
      t.as(t.fx.deactivated),
      t.as({ ...t.fx.member, api_key: 'x'.repeat(32) }),
      t.as(null),
    ]) {
      const res = await client.post('/messages', params);
      assert.equal(res.status, 401);
      assert.equal(res.body.code, 'UNAUTHORIZED');
    }
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/messages',
      headers: {
        host: 'parley.test',
        authorization: basicAuth(t.fx.member.email, 'nope'),
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: 'type=stream&to=general&topic=t&content=x',
    });
    assert.equal(res.statusCode, 401);
  });
});

describe('POST /messages to users', () => {
  test('by ids: both directions share one conversation', async () => {
    const a = await sendDirect(t, t.fx.member, [t.fx.member2], 'hi');
    const b = await sendDirect(t, t.fx.member2, [t.fx.member], 'hello');
    const recipient = await messageRecipientId(t, a);
    assert.equal(await messageRecipientId(t, b), recipient);
    assert.deepEqual(
      await lastMessage(t.fx.member),
      expectedMessage({
        id: b,
        sender: t.fx.member2,
        html: '<p>hello</p>',
        direct: { users: [t.fx.member, t.fx.member2], recipientId: recipient },
      }),
    );
    assert.deepEqual(await rowsOf(t, a), { [t.fx.member.id]: 0, [t.fx.member2.id]: 0 });
  });

  test('by emails, as a list or a comma-separated string; the legacy "private" type', async () => {
    const res1 = await t.as(t.fx.member).post('/messages', {
      type: 'private',
      to: [t.fx.member2.email, t.fx.admin.email],
      content: 'group',
    });
    assert.equal(res1.status, 200, res1.text);
    const res2 = await t.as(t.fx.admin).post('/messages', {
      type: 'direct',
      to: `${t.fx.member.email}, ${t.fx.member2.email}`,
      content: 'group again',
    });
    assert.equal(res2.status, 200, res2.text);
    const r1 = await messageRecipientId(t, res1.body.id as number);
    assert.equal(await messageRecipientId(t, res2.body.id as number), r1);
    assert.deepEqual(
      Object.keys(await rowsOf(t, res2.body.id as number))
        .map(Number)
        .sort((x, y) => x - y),
      ids(t.fx.admin, t.fx.member, t.fx.member2),
    );
  });

  test('to oneself', async () => {
    const id = await sendDirect(t, t.fx.member, [t.fx.member], 'note to self');
    assert.deepEqual(await rowsOf(t, id), { [t.fx.member.id]: 0 });
    const m = await lastMessage(t.fx.member);
    assert.deepEqual(m.display_recipient, [
      {
        id: t.fx.member.id,
        email: t.fx.member.email,
        full_name: t.fx.member.full_name,
        is_mirror_dummy: false,
      },
    ]);
  });

  test('recipient errors', async () => {
    const m = t.as(t.fx.member);
    assertError(
      await m.post('/messages', { type: 'direct', to: [99999], content: 'x' }),
      400,
      'BAD_REQUEST',
      'Invalid user ID 99999',
    );
    assertError(
      await m.post('/messages', { type: 'direct', to: ['nobody@parley.test'], content: 'x' }),
      400,
      'BAD_REQUEST',
      "Invalid email 'nobody@parley.test'",
    );
    assertError(
      await m.post('/messages', { type: 'direct', to: [t.fx.otherOwner.id], content: 'x' }),
      400,
      'BAD_REQUEST',
      `Invalid user ID ${t.fx.otherOwner.id}`,
    );
    assertError(
      await m.post('/messages', { type: 'direct', to: [t.fx.deactivated.id], content: 'x' }),
      400,
      'BAD_REQUEST',
      `'${t.fx.deactivated.email}' is no longer using Parley.`,
    );
    assertError(
      await m.post('/messages', { type: 'direct', to: [], content: 'x' }),
      400,
      'BAD_REQUEST',
      'Message must have recipients',
    );
    assertError(
      await m.post('/messages', {
        type: 'direct',
        to: [t.fx.member2.id, t.fx.admin.email],
        content: 'x',
      }),
      400,
      'BAD_REQUEST',
      'Recipient lists may contain emails or user IDs, but not both.',
    );
  });

  test('direct_message_permission_group: some participant must be in it; bots are exempt', async () => {
    const groups = await systemGroups(t);
    await setRealmSetting(t, 'direct_message_permission_group', groups['role:administrators']);
    assertError(
      await t
        .as(t.fx.member)
        .post('/messages', { type: 'direct', to: [t.fx.member2.id], content: 'x' }),
      400,
      'BAD_REQUEST',
      'You do not have permission to send direct messages to this recipient.',
    );
    await sendDirect(t, t.fx.member, [t.fx.admin], 'an administrator takes part');
    await sendDirect(t, t.fx.member, [t.fx.bot], 'bots are fine');
    await sendDirect(t, t.fx.member, [t.fx.member], 'so am I');
  });

  test('direct_message_initiator_group: only its members start conversations', async () => {
    const groups = await systemGroups(t);
    await setRealmSetting(t, 'direct_message_initiator_group', groups['role:administrators']);
    assertError(
      await t
        .as(t.fx.member)
        .post('/messages', { type: 'direct', to: [t.fx.member2.id], content: 'x' }),
      400,
      'BAD_REQUEST',
      'You do not have permission to initiate direct message conversations.',
    );
    await sendDirect(t, t.fx.admin, [t.fx.member], 'admin starts');
    await sendDirect(t, t.fx.member, [t.fx.admin], 'member replies');
  });

  test('guests limited to the users they know may not message others', async () => {
    const groups = await systemGroups(t);
    await setRealmSetting(t, 'can_access_all_users_group', groups['role:members']);
    const stranger = await addUser(t, 'Sam Stranger');
    assertError(
      await t.as(t.fx.guest).post('/messages', { type: 'direct', to: [stranger.id], content: 'x' }),
      400,
      'BAD_REQUEST',
      'You do not have permission to access some of the recipients.',
    );
    // Someone sharing a channel with the guest is fine, and so is a conversation they start.
    await sendDirect(t, t.fx.guest, [t.fx.member], 'hi');
    await sendDirect(t, stranger, [t.fx.guest], 'hello guest');
    await sendDirect(t, t.fx.guest, [stranger], 'now we talk');
  });
});
