// Typing notifications: POST /typing (direct and channel) and POST /messages/{id}/typing,
// the typing and typing_edit_message events and their recipients, the settings that
// silence them, the channel-size cut-off, and the timings clients get from /register.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { as, assertUnauthorized, EVERY_CALLER, groupId } from '../support/bots.ts';
import { SUCCESS, type Credentials, type Params } from '../support/client.ts';
import { drainEvents, registerQueue, withoutIds } from '../support/events.ts';
import type { FixtureUser } from '../support/fixture.ts';
import {
  addUser,
  assertError,
  sendDirect,
  sendToChannel,
  setRealmSetting,
  T0,
  useClock,
} from '../support/messages.ts';
import { captureNotices, ids, type NoticeLog } from '../support/notices.ts';

let t: TestApp;
let log: NoticeLog;
let setNow: (s: number) => void;
beforeEach(async () => {
  t = await buildTestApp();
  setNow = useClock(t);
  log = captureNotices(t);
});
afterEach(async () => {
  await t.close();
});

const typing = (who: Credentials, params: Params) => t.as(who).post('/typing', params);
const editTyping = (who: Credentials, id: number, params: Params) =>
  t.as(who).post(`/messages/${id}/typing`, params);
const person = (u: FixtureUser) => ({ user_id: u.id, email: u.email });

async function setSetting(user: FixtureUser, name: string, value: unknown): Promise<void> {
  const res = await t.as(user).patch('/settings', { [name]: value });
  assert.equal(res.status, 200, res.text);
  await log.take();
}

const directEvent = (op: string, sender: FixtureUser, recipients: FixtureUser[]) => ({
  type: 'typing',
  op,
  message_type: 'direct',
  sender: person(sender),
  recipients: recipients.map(person),
});
const channelEvent = (op: string, sender: FixtureUser, streamId: number, topic: string) => ({
  type: 'typing',
  op,
  message_type: 'stream',
  sender: person(sender),
  stream_id: streamId,
  topic,
});

describe('POST /typing to a direct-message conversation', () => {
  test('start and stop reach every participant, the sender included', async () => {
    const { member, member2, owner } = t.fx;
    assert.deepEqual((await typing(member, { op: 'start', to: [member2.id] })).body, SUCCESS);
    assert.deepEqual(await log.take(), [
      { event: directEvent('start', member, [member2, member]), users: ids(member, member2) },
    ]);
    // type defaults to direct; the sender listed among the recipients is not repeated.
    const res = await typing(member, {
      type: 'direct',
      op: 'stop',
      to: [owner.id, member.id, member2.id],
    });
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(await log.take(), [
      {
        event: directEvent('stop', member, [owner, member, member2]),
        users: ids(owner, member, member2),
      },
    ]);
  });

  test('users who turned off receiving, and deactivated users, are not told', async () => {
    const { member, member2, owner, deactivated } = t.fx;
    await setSetting(member2, 'receives_typing_notifications', false);
    await typing(member, { op: 'start', to: [member2.id, owner.id, deactivated.id] });
    assert.deepEqual(await log.take(), [
      {
        event: directEvent('start', member, [member2, owner, deactivated, member]),
        users: ids(owner, member),
      },
    ]);
  });

  test('a sender who turned off sending typing notifications is refused', async () => {
    await setSetting(t.fx.member, 'send_private_typing_notifications', false);
    assertError(
      await typing(t.fx.member, { op: 'start', to: [t.fx.member2.id] }),
      400,
      'BAD_REQUEST',
      'User has disabled typing notifications for direct messages',
    );
    // Channel typing is a separate setting.
    const res = await typing(t.fx.member, {
      type: 'channel',
      op: 'start',
      stream_id: t.fx.channels.design.id,
      topic: 'x',
    });
    assert.deepEqual(res.body, SUCCESS);
    assert.equal((await log.take()).length, 1);
  });

  test('errors: missing or empty to, unknown or inaccessible users, bad op', async () => {
    const { member } = t.fx;
    const cases: Array<[Params, string]> = [
      [{ op: 'start' }, "Missing 'to' argument"],
      [{ op: 'start', to: [] }, "Empty 'to' list"],
      [{ op: 'start', to: [999999] }, 'Invalid user ID 999999'],
      [
        { op: 'start', to: [t.fx.member2.id, t.fx.otherOwner.id] },
        `Invalid user ID ${t.fx.otherOwner.id}`,
      ],
      [{ op: 'begin', to: [t.fx.member2.id] }, 'Invalid op'],
      [{ op: 'start', type: 'private', to: [t.fx.member2.id] }, 'Invalid type'],
      [{ op: 'start', to: 'x' }, 'to is not valid JSON'],
    ];
    for (const [params, msg] of cases) {
      assertError(await typing(member, params), 400, 'BAD_REQUEST', msg);
    }
    const missing = await t.as(member).post('/typing', { to: [t.fx.member2.id] });
    assert.equal(missing.body.code, 'REQUEST_VARIABLE_MISSING');
    // A limited guest cannot name users it cannot access.
    await setRealmSetting(t, 'can_access_all_users_group', await groupId(t, 'role:members'));
    const loner = await addUser(t, 'Loner');
    await log.take();
    assertError(
      await typing(t.fx.guest, { op: 'start', to: [loner.id] }),
      400,
      'BAD_REQUEST',
      `Invalid user ID ${loner.id}`,
    );
    assert.deepEqual(await log.take(), []);
  });

  test('every role may send; deactivated users and bad credentials may not', async () => {
    for (const who of EVERY_CALLER) {
      const res = await as(t, who).post('/typing', { op: 'start', to: [t.fx.member2.id] });
      if (assertUnauthorized(who, res)) continue;
      assert.deepEqual(res.body, SUCCESS, who);
    }
    assert.equal((await log.take()).length, 6);
  });
});

describe('POST /typing to a channel topic', () => {
  test('its subscribers who receive typing notifications are told', async () => {
    const { admin, member } = t.fx;
    const design = t.fx.channels.design.id;
    for (const type of ['stream', 'channel']) {
      const res = await typing(member, { type, op: 'start', stream_id: design, topic: 'plans' });
      assert.deepEqual(res.body, SUCCESS);
      assert.deepEqual(await log.take(), [
        { event: channelEvent('start', member, design, 'plans'), users: ids(admin, member) },
      ]);
    }
    await setSetting(admin, 'receives_typing_notifications', false);
    await typing(member, {
      type: 'stream',
      op: 'stop',
      stream_id: design,
      topic: 'plans',
      to: [1],
    });
    assert.deepEqual(await log.take(), [
      { event: channelEvent('stop', member, design, 'plans'), users: ids(member) },
    ]);
  });

  test('the empty topic: its display name and "(no topic)" name it too', async () => {
    const design = t.fx.channels.design.id;
    for (const topic of ['', 'general chat', '(no topic)']) {
      await typing(t.fx.member, { type: 'stream', op: 'start', stream_id: design, topic });
      const [sent] = await log.take();
      assert.equal((sent.event as Record<string, unknown>).topic, '', topic);
    }
  });

  test('errors: missing channel or topic, channels the sender may not post in', async () => {
    const { member } = t.fx;
    const base = { type: 'channel', op: 'start', topic: 't' };
    const cases: Array<[FixtureUser, Params, string]> = [
      [member, { type: 'stream', op: 'start', topic: 't' }, "Missing 'stream_id' argument"],
      [
        member,
        { type: 'stream', op: 'start', stream_id: t.fx.channels.design.id },
        'Missing topic',
      ],
      [member, { ...base, stream_id: 999999 }, 'Invalid channel ID'],
      [member, { ...base, stream_id: t.fx.channels.otherGeneral.id }, 'Invalid channel ID'],
      [t.fx.member2, { ...base, stream_id: t.fx.channels.private.id }, 'Invalid channel ID'],
      [t.fx.guest, { ...base, stream_id: t.fx.channels.design.id }, 'Invalid channel ID'],
      [
        member,
        { ...base, stream_id: t.fx.channels.announce.id },
        'You do not have permission to post in this channel.',
      ],
    ];
    for (const [who, params, msg] of cases) {
      assertError(await typing(who, params), 400, 'BAD_REQUEST', msg);
    }
    await setSetting(member, 'send_stream_typing_notifications', false);
    assertError(
      await typing(member, { ...base, stream_id: t.fx.channels.design.id }),
      400,
      'BAD_REQUEST',
      'User has disabled typing notifications for channel messages',
    );
    assert.deepEqual(await log.take(), []);
  });

  test('channels with more than 100 subscribers get no typing notifications', async () => {
    const general = t.fx.channels.general.id;
    // general has the 7 active fixture users; 93 more make 100.
    for (let i = 0; i < 93; i++) await addUser(t, `Filler ${i}`, { channels: [general] });
    await log.take();
    await typing(t.fx.member, { type: 'stream', op: 'start', stream_id: general, topic: 't' });
    const [sent] = await log.take();
    assert.equal(sent.users.length, 100);
    await addUser(t, 'One Too Many', { channels: [general] });
    await log.take();
    const res = await typing(t.fx.member, {
      type: 'stream',
      op: 'start',
      stream_id: general,
      topic: 't',
    });
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(await log.take(), []);
  });

  test('only clients with stream_typing_notifications get channel typing; empty topics renamed', async () => {
    const caps = { notification_settings_null: false, stream_typing_notifications: true };
    const modern = await registerQueue(t.as(t.fx.admin), {
      event_types: ['typing'],
      client_capabilities: { ...caps, empty_topic_name: true },
    });
    const older = await registerQueue(t.as(t.fx.admin), {
      event_types: ['typing'],
      client_capabilities: caps,
    });
    const oldest = await registerQueue(t.as(t.fx.admin), { event_types: ['typing'] });
    const design = t.fx.channels.design.id;
    await typing(t.fx.member, { type: 'stream', op: 'start', stream_id: design, topic: '' });
    await typing(t.fx.member, { op: 'stop', to: [t.fx.admin.id] });
    const events = async (queue: string) =>
      withoutIds(await drainEvents(t.ctx, t.as(t.fx.admin), queue, -1));
    const dm = directEvent('stop', t.fx.member, [t.fx.admin, t.fx.member]);
    assert.deepEqual(await events(modern.queue_id), [
      channelEvent('start', t.fx.member, design, ''),
      dm,
    ]);
    assert.deepEqual(await events(older.queue_id), [
      channelEvent('start', t.fx.member, design, 'general chat'),
      dm,
    ]);
    assert.deepEqual(await events(oldest.queue_id), [dm]);
  });
});

describe('POST /messages/{message_id}/typing', () => {
  const editEvent = (op: string, sender: FixtureUser, id: number, recipient: object) => ({
    type: 'typing_edit_message',
    op,
    sender_id: sender.id,
    message_id: id,
    recipient,
  });

  test('editing a channel message: its subscribers are told', async () => {
    const design = t.fx.channels.design.id;
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.design, 'plans', 'hi');
    await log.take();
    for (const op of ['start', 'stop']) {
      assert.deepEqual((await editTyping(t.fx.member, id, { op })).body, SUCCESS);
      assert.deepEqual(await log.take(), [
        {
          event: editEvent(op, t.fx.member, id, {
            type: 'channel',
            channel_id: design,
            topic: 'plans',
          }),
          users: ids(t.fx.admin, t.fx.member),
        },
      ]);
    }
  });

  test('editing a direct message: its participants are told', async () => {
    const id = await sendDirect(t, t.fx.member, [t.fx.owner, t.fx.member2], 'hi');
    await setSetting(t.fx.owner, 'receives_typing_notifications', false);
    await log.take();
    await editTyping(t.fx.member, id, { op: 'start' });
    assert.deepEqual(await log.take(), [
      {
        event: editEvent('start', t.fx.member, id, {
          type: 'direct',
          user_ids: ids(t.fx.owner, t.fx.member, t.fx.member2),
        }),
        users: ids(t.fx.member, t.fx.member2),
      },
    ]);
    await setSetting(t.fx.member, 'send_private_typing_notifications', false);
    assertError(
      await editTyping(t.fx.member, id, { op: 'stop' }),
      400,
      'BAD_REQUEST',
      'User has disabled typing notifications for direct messages',
    );
    assert.deepEqual(await log.take(), []);
  });

  test('errors: messages one may not edit, unknown messages, bad op', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.design, 'plans', 'hi');
    const secret = await sendToChannel(t, t.fx.moderator, t.fx.channels.secret, 's', 'x');
    await log.take();
    assertError(
      await editTyping(t.fx.admin, id, { op: 'start' }),
      400,
      'BAD_REQUEST',
      "You don't have permission to edit this message",
    );
    for (const [who, mid] of [
      [t.fx.member, 999999],
      [t.fx.member, secret],
    ] as const) {
      assertError(
        await editTyping(who, mid, { op: 'start' }),
        400,
        'BAD_REQUEST',
        'Invalid message(s)',
      );
    }
    assertError(
      await editTyping(t.fx.member, id, { op: 'edit' }),
      400,
      'BAD_REQUEST',
      'Invalid op',
    );
    await setSetting(t.fx.member, 'send_stream_typing_notifications', false);
    assertError(
      await editTyping(t.fx.member, id, { op: 'start' }),
      400,
      'BAD_REQUEST',
      'User has disabled typing notifications for channel messages',
    );
    assert.deepEqual(await log.take(), []);
  });

  test('the edit time limit applies without the usual grace period', async () => {
    await setRealmSetting(t, 'message_content_edit_limit_seconds', 600);
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.design, 'plans', 'hi');
    await log.take();
    setNow(T0 + 600);
    assert.deepEqual((await editTyping(t.fx.member, id, { op: 'start' })).body, SUCCESS);
    setNow(T0 + 601);
    assertError(
      await editTyping(t.fx.member, id, { op: 'start' }),
      400,
      'BAD_REQUEST',
      'The time limit for editing this message has passed',
    );
    await setRealmSetting(t, 'allow_message_editing', false);
    assertError(
      await editTyping(t.fx.member, id, { op: 'start' }),
      400,
      'BAD_REQUEST',
      'Your organization has turned off message editing',
    );
    assert.equal((await log.take()).length, 1);
  });

  test('every role may signal editing its own message; 401 for the rest', async () => {
    for (const who of EVERY_CALLER) {
      const sender = who === 'deactivated' || who === 'badKey' || who === 'noAuth' ? 'member' : who;
      const id = await sendToChannel(t, t.fx[sender], t.fx.channels.general, 't', 'x');
      const res = await as(t, who).post(`/messages/${id}/typing`, { op: 'start' });
      if (assertUnauthorized(who, res)) continue;
      assert.deepEqual(res.body, SUCCESS, who);
    }
  });

  test('older clients see the empty topic by its display name', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.design, '', 'hi');
    const modern = await registerQueue(t.as(t.fx.admin), {
      event_types: ['typing_edit_message'],
      client_capabilities: { notification_settings_null: false, empty_topic_name: true },
    });
    const older = await registerQueue(t.as(t.fx.admin), { event_types: ['typing_edit_message'] });
    await editTyping(t.fx.member, id, { op: 'start' });
    const recipient = (topic: string) => ({
      type: 'channel',
      channel_id: t.fx.channels.design.id,
      topic,
    });
    const events = async (queue: string) =>
      withoutIds(await drainEvents(t.ctx, t.as(t.fx.admin), queue, -1));
    assert.deepEqual(await events(modern.queue_id), [
      editEvent('start', t.fx.member, id, recipient('')),
    ]);
    assert.deepEqual(await events(older.queue_id), [
      editEvent('start', t.fx.member, id, recipient('general chat')),
    ]);
  });
});

test('POST /register announces the typing timings clients follow', async () => {
  const body = await registerQueue(t.as(t.fx.member), { fetch_event_types: [] });
  assert.deepEqual(
    {
      started_expiry: body.server_typing_started_expiry_period_milliseconds,
      stopped_wait: body.server_typing_stopped_wait_period_milliseconds,
      started_wait: body.server_typing_started_wait_period_milliseconds,
    },
    { started_expiry: 45000, stopped_wait: 12000, started_wait: 30000 },
  );
});
