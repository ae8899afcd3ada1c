// Reading messages: GET /messages anchors and ranges, message_ids, the content and avatar
// forms, shared and protected channel history, GET /messages/{id} and POST /messages/render.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { SUCCESS } from '../support/client.ts';
import {
  addUser,
  assertError,
  channelRecipientId,
  expectedMessage,
  getMessages,
  gravatar,
  idsIn,
  sendDirect,
  sendToChannel,
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

const NEWEST = 10000000000000000;
const idsOf = (body: Record<string, unknown>) =>
  (body.messages as Array<{ id: number }>).map((m) => m.id);
const meta = (body: Record<string, unknown>) => {
  const { messages: _m, result: _r, msg: _s, ...rest } = body;
  return rest;
};

/** Five messages in design (admin and member subscribed), sent by the admin. */
async function fiveInDesign(): Promise<number[]> {
  const out: number[] = [];
  for (let i = 1; i <= 5; i++)
    out.push(await sendToChannel(t, t.fx.admin, t.fx.channels.design, 't', `m${i}`));
  return out;
}

async function markRead(userId: number, messageIds: number[]): Promise<void> {
  await t.ctx.db
    .updateTable('user_messages')
    .set((eb) => ({ flags: eb('flags', '|', 1) }))
    .where('user_id', '=', userId)
    .where('message_id', 'in', messageIds)
    .execute();
}

describe('GET /messages anchors', () => {
  test('newest and oldest', async () => {
    const m = await fiveInDesign();
    const newest = await getMessages(t, t.fx.member, {
      anchor: 'newest',
      num_before: 2,
      num_after: 3,
    });
    assert.deepEqual(idsOf(newest), m.slice(3));
    assert.deepEqual(meta(newest), {
      anchor: NEWEST,
      found_anchor: false,
      found_oldest: false,
      found_newest: true,
      history_limited: false,
    });
    const oldest = await getMessages(t, t.fx.member, {
      anchor: 'oldest',
      num_before: 2,
      num_after: 2,
    });
    assert.deepEqual(idsOf(oldest), m.slice(0, 2));
    assert.deepEqual(meta(oldest), {
      anchor: 0,
      found_anchor: false,
      found_oldest: true,
      found_newest: false,
      history_limited: false,
    });
    const all = await getMessages(t, t.fx.member, {
      anchor: 'oldest',
      num_before: 0,
      num_after: 10,
    });
    assert.deepEqual(idsOf(all), m);
    assert.equal(all.found_newest, true);
  });

  test('an id, with and without the anchor itself', async () => {
    const m = await fiveInDesign();
    const around = await getMessages(t, t.fx.member, { anchor: m[2], num_before: 1, num_after: 1 });
    assert.deepEqual(idsOf(around), [m[1], m[2], m[3]]);
    assert.deepEqual(meta(around), {
      anchor: m[2],
      found_anchor: true,
      found_oldest: false,
      found_newest: false,
      history_limited: false,
    });
    const without = await getMessages(t, t.fx.member, {
      anchor: String(m[2]),
      include_anchor: false,
      num_before: 5,
      num_after: 5,
    });
    assert.deepEqual(idsOf(without), [m[0], m[1], m[3], m[4]]);
    assert.deepEqual(meta(without), {
      anchor: m[2],
      found_anchor: false,
      found_oldest: true,
      found_newest: true,
      history_limited: false,
    });
    const only = await getMessages(t, t.fx.member, { anchor: m[4], num_before: 0, num_after: 0 });
    assert.deepEqual(idsOf(only), [m[4]]);
    // A negative anchor means the oldest; a huge one the newest.
    assert.equal(
      (await getMessages(t, t.fx.member, { anchor: -5, num_before: 0, num_after: 1 })).anchor,
      0,
    );
    const huge = await getMessages(t, t.fx.member, {
      anchor: '99999999999999999999',
      num_before: 1,
      num_after: 1,
    });
    assert.deepEqual([huge.anchor, idsOf(huge)], [NEWEST, [m[4]]]);
  });

  test('first_unread, and the legacy use_first_unread_anchor', async () => {
    const m = await fiveInDesign();
    await markRead(t.fx.member.id, [m[0], m[1]]);
    const body = await getMessages(t, t.fx.member, {
      anchor: 'first_unread',
      num_before: 1,
      num_after: 1,
    });
    assert.deepEqual(idsOf(body), [m[1], m[2], m[3]]);
    assert.equal(body.anchor, m[2]);
    const legacy = await getMessages(t, t.fx.member, {
      use_first_unread_anchor: true,
      num_before: 0,
      num_after: 0,
    });
    assert.equal(legacy.anchor, m[2]);
    // Nothing unread: the anchor is the newest message.
    await markRead(t.fx.member.id, m);
    const none = await getMessages(t, t.fx.member, {
      anchor: 'first_unread',
      num_before: 1,
      num_after: 1,
    });
    assert.deepEqual([none.anchor, idsOf(none), none.found_newest], [NEWEST, [m[4]], true]);
  });

  test('first_unread skips muted channels and topics unless the narrow names them', async () => {
    const a = await sendToChannel(t, t.fx.admin, t.fx.channels.design, 'muted topic', 'a');
    const b = await sendToChannel(t, t.fx.admin, t.fx.channels.general, 'x', 'b');
    await t.ctx.db
      .insertInto('user_topics')
      .values({
        user_id: t.fx.member.id,
        channel_id: t.fx.channels.design.id,
        topic_name: 'Muted Topic',
        topic_key: 'muted topic',
        visibility_policy: 1,
        last_updated: 0,
      })
      .execute();
    const body = await getMessages(t, t.fx.member, {
      anchor: 'first_unread',
      num_before: 0,
      num_after: 0,
    });
    assert.equal(body.anchor, b);
    const narrowed = await getMessages(t, t.fx.member, {
      anchor: 'first_unread',
      num_before: 0,
      num_after: 0,
      narrow: [{ operator: 'channel', operand: t.fx.channels.design.id }],
    });
    assert.equal(narrowed.anchor, a);
  });

  test('parameter errors', async () => {
    const m = t.as(t.fx.member);
    assert.deepEqual((await m.get('/messages', { anchor: 'newest', num_after: 1 })).body, {
      result: 'error',
      msg: "Missing 'num_before' argument",
      code: 'REQUEST_VARIABLE_MISSING',
      var_name: 'num_before',
    });
    assert.deepEqual((await m.get('/messages', { anchor: 'newest', num_before: 1 })).body, {
      result: 'error',
      msg: "Missing 'num_after' argument",
      code: 'REQUEST_VARIABLE_MISSING',
      var_name: 'num_after',
    });
    assert.deepEqual((await m.get('/messages', { num_before: 1, num_after: 1 })).body, {
      result: 'error',
      msg: "Missing 'anchor' argument.",
      code: 'REQUEST_VARIABLE_MISSING',
      var_name: 'anchor',
    });
    assertError(
      await m.get('/messages', { anchor: 'soon', num_before: 1, num_after: 1 }),
      400,
      'BAD_REQUEST',
      'Invalid anchor',
    );
    assertError(
      await m.get('/messages', { anchor: 'newest', num_before: 2500, num_after: 2501 }),
      400,
      'BAD_REQUEST',
      'Too many messages requested (maximum 5000).',
    );
    assert.equal(
      (await m.get('/messages', { anchor: 'newest', num_before: 2500, num_after: 2500 })).status,
      200,
    );
    assertError(
      await m.get('/messages', { anchor: 'newest', num_before: -1, num_after: 1 }),
      400,
      'BAD_REQUEST',
      'num_before is too small',
    );
  });
});

describe('GET /messages by message_ids', () => {
  test('the readable subset, optionally narrowed; no range fields', async () => {
    const a = await sendToChannel(t, t.fx.admin, t.fx.channels.design, 't', 'a');
    const b = await sendToChannel(t, t.fx.owner, t.fx.channels.private, 't', 'b');
    const c = await sendDirect(t, t.fx.admin, [t.fx.owner], 'c');
    const d = await sendDirect(t, t.fx.admin, [t.fx.member2], 'd');
    // member2 reads design's history (public), not the private channel nor others' conversations.
    const body = await getMessages(t, t.fx.member2, { message_ids: [a, b, c, d, 99999] });
    assert.deepEqual(idsOf(body), [a, d]);
    assert.deepEqual(meta(body), {
      found_anchor: false,
      found_oldest: false,
      found_newest: false,
      history_limited: false,
    });
    assert.deepEqual(
      (body.messages as Array<{ flags: string[] }>).map((m) => m.flags),
      [['read', 'historical'], []],
    );
    const narrowed = await getMessages(t, t.fx.member2, {
      message_ids: [a, d],
      narrow: [['is', 'dm']],
    });
    assert.deepEqual(idsOf(narrowed), [d]);
    assertError(
      await t
        .as(t.fx.member)
        .get('/messages', { message_ids: [a], anchor: 'newest', num_before: 1 }),
      400,
      'BAD_REQUEST',
      'Unsupported parameter combination: message_ids, anchor, num_before',
    );
  });
});

describe('message forms', () => {
  test('apply_markdown=false, client_gravatar=false, allow_empty_topic_name', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, '', '**bold**');
    const recipientId = await channelRecipientId(t, t.fx.channels.general.id);
    const base = expectedMessage({
      id,
      sender: t.fx.member,
      html: '<p><strong>bold</strong></p>',
      channel: { ...t.fx.channels.general, recipientId },
      topic: 'general chat',
    });
    const body = await getMessages(t, t.fx.admin, { anchor: id, num_before: 0, num_after: 0 });
    assert.deepEqual(body.messages, [base]);
    const raw = await getMessages(t, t.fx.admin, {
      anchor: id,
      num_before: 0,
      num_after: 0,
      apply_markdown: false,
      client_gravatar: false,
      allow_empty_topic_name: true,
    });
    assert.deepEqual(raw.messages, [
      {
        ...base,
        content: '**bold**',
        content_type: 'text/x-markdown',
        avatar_url: gravatar(t.fx.member.delivery_email),
        subject: '',
      },
    ]);
  });

  test('avatars stay URLs where the viewer may not see the address', async () => {
    await t.ctx.db
      .updateTable('users')
      .set({ settings: JSON.stringify({ email_address_visibility: 3 }) })
      .where('id', '=', t.fx.member.id)
      .execute();
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'x');
    const seen = async (who: typeof t.fx.admin) =>
      (
        (await getMessages(t, who, { anchor: id, num_before: 0, num_after: 0 })).messages as Array<{
          avatar_url: unknown;
        }>
      )[0].avatar_url;
    assert.equal(await seen(t.fx.admin), null);
    assert.equal(await seen(t.fx.member2), gravatar(t.fx.member.delivery_email));
  });
});

describe('channel history', () => {
  test("a public channel's history is readable when the narrow names it", async () => {
    const id = await sendToChannel(t, t.fx.admin, t.fx.channels.design, 't', 'x');
    // member2 is not subscribed: not in their own history, but in the channel's.
    assert.deepEqual(await idsIn(t, t.fx.member2, []), []);
    const body = await getMessages(t, t.fx.member2, {
      anchor: 'newest',
      num_before: 5,
      num_after: 0,
      narrow: [['channel', 'design']],
    });
    assert.deepEqual(idsOf(body), [id]);
    assert.deepEqual((body.messages as Array<{ flags: string[] }>)[0].flags, [
      'read',
      'historical',
    ]);
    // Flag narrows search one's own rows only.
    assert.deepEqual(
      await idsIn(t, t.fx.member2, [
        ['channel', 'design'],
        ['is', 'unread'],
      ]),
      [],
    );
    assert.deepEqual(await idsIn(t, t.fx.member2, [['channels', 'public']]), [id]);
  });

  test('guests read only the channels they are in, and web-public ones', async () => {
    const d = await sendToChannel(t, t.fx.admin, t.fx.channels.design, 't', 'x');
    const w = await sendToChannel(t, t.fx.owner, t.fx.channels.web, 't', 'y');
    assertError(
      await t.as(t.fx.guest).get('/messages', {
        anchor: 'newest',
        num_before: 1,
        num_after: 0,
        narrow: [['channel', 'design']],
      }),
      400,
      'BAD_NARROW',
      'Invalid narrow operator: unknown channel design',
    );
    assert.deepEqual(await idsIn(t, t.fx.guest, [['channel', 'web']]), [w]);
    assert.deepEqual(await idsIn(t, t.fx.guest, [['channels', 'public']]), []);
    assert.deepEqual(await idsIn(t, t.fx.member2, [['channels', 'web-public']]), []);
    assert.notEqual(d, w);
  });

  test('a private channel shares its history with subscribers; a protected one does not', async () => {
    const shared = await sendToChannel(t, t.fx.owner, t.fx.channels.private, 't', 'before');
    const guarded = await sendToChannel(t, t.fx.moderator, t.fx.channels.secret, 't', 'before');
    const late = await addUser(t, 'Late Comer', {
      channels: [t.fx.channels.private.id, t.fx.channels.secret.id],
    });
    const after = await sendToChannel(t, t.fx.moderator, t.fx.channels.secret, 't', 'after');
    assert.deepEqual(await idsIn(t, late, [['channel', 'private']]), [shared]);
    assert.deepEqual(await idsIn(t, late, [['channel', 'secret']]), [after]);
    assertError(
      await t.as(late).get(`/messages/${guarded}`),
      400,
      'BAD_REQUEST',
      'Invalid message(s)',
    );
    // An administrator who is not subscribed sees neither.
    assert.deepEqual(await idsIn(t, t.fx.admin, [['channel', 'private']]), []);
  });
});

describe('GET /messages/{id}', () => {
  test('the message with its Markdown source', async () => {
    const id = await sendDirect(t, t.fx.member, [t.fx.member2], 'see *this*');
    const res = await t.as(t.fx.member2).get(`/messages/${id}`);
    const recipientId = (
      await t.ctx.db
        .selectFrom('messages')
        .select('recipient_id')
        .where('id', '=', id)
        .executeTakeFirstOrThrow()
    ).recipient_id;
    assert.deepEqual(res.body, {
      ...SUCCESS,
      raw_content: 'see *this*',
      message: {
        ...expectedMessage({
          id,
          sender: t.fx.member,
          html: '<p>see <em>this</em></p>',
          direct: { users: [t.fx.member, t.fx.member2], recipientId },
        }),
      },
    });
    const md = await t.as(t.fx.member2).get(`/messages/${id}`, { apply_markdown: false });
    assert.deepEqual(
      [md.body.message && (md.body.message as Record<string, unknown>).content],
      ['see *this*'],
    );
  });

  test('who may read it', async () => {
    const dm = await sendDirect(t, t.fx.member, [t.fx.member2], 'x');
    const pub = await sendToChannel(t, t.fx.admin, t.fx.channels.design, 't', 'y');
    const priv = await sendToChannel(t, t.fx.owner, t.fx.channels.private, 't', 'z');
    const invalid = (res: Awaited<ReturnType<ReturnType<TestApp['as']>['get']>>) =>
      assertError(res, 400, 'BAD_REQUEST', 'Invalid message(s)');
    invalid(await t.as(t.fx.admin).get(`/messages/${dm}`));
    invalid(await t.as(t.fx.admin).get(`/messages/${priv}`));
    invalid(await t.as(t.fx.guest).get(`/messages/${pub}`));
    invalid(await t.as(t.fx.member).get('/messages/99999'));
    const res = await t.as(t.fx.member2).get(`/messages/${pub}`);
    assert.deepEqual((res.body.message as { flags: string[] }).flags, ['read', 'historical']);
    assert.equal((await t.as(t.fx.member).get(`/messages/${priv}`)).status, 200);
    assert.equal((await t.as(null).get(`/messages/${pub}`)).status, 401);
  });
});

describe('POST /messages/render', () => {
  test('renders with mentions resolved, without sending', async () => {
    const res = await t
      .as(t.fx.member)
      .post('/messages/render', { content: '**hi** @**Nina Member**' });
    assert.deepEqual(res.body, {
      ...SUCCESS,
      rendered: `<p><strong>hi</strong> <span class="user-mention" data-user-id="${t.fx.member2.id}">@Nina Member</span></p>`,
    });
    assert.equal((await t.ctx.db.selectFrom('messages').select('id').execute()).length, 0);
    const missing = await t.as(t.fx.member).post('/messages/render', {});
    assert.equal(missing.body.code, 'REQUEST_VARIABLE_MISSING');
  });
});
