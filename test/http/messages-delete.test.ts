// DELETE /messages/{id} (who may delete, time limit, the delete_message event and its
// recipients), GET /users/me/{stream_id}/topics and POST /streams/{stream_id}/delete_topic.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { SUCCESS } from '../support/client.ts';
import { systemGroups } from '../support/channels.ts';
import { captureNotices, ids, type NoticeLog } from '../support/notices.ts';
import {
  addUser,
  assertError,
  channelRecipientId,
  rowsOf,
  sendDirect,
  sendToChannel,
  setChannel,
  setRealmSetting,
  T0,
  useClock,
} from '../support/messages.ts';

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

const EVERYONE = () =>
  ids(t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member, t.fx.member2, t.fx.guest, t.fx.bot);
const NO = "You don't have permission to delete this message";

describe('DELETE /messages/{id}', () => {
  test("one's own channel message: gone, and every reader told", async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 'Topic', 'x');
    await log.take();
    const res = await t.as(t.fx.member).delete(`/messages/${id}`);
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(await log.take(), [
      {
        event: {
          type: 'delete_message',
          message_ids: [id],
          message_type: 'stream',
          stream_id: t.fx.channels.general.id,
          topic: 'Topic',
        },
        users: EVERYONE(),
      },
      {
        event: {
          type: 'stream',
          op: 'update',
          stream_id: t.fx.channels.general.id,
          name: 'general',
          property: 'first_message_id',
          value: null,
        },
        users: EVERYONE(),
      },
    ]);
    assert.deepEqual(await rowsOf(t, id), {});
    assertError(
      await t.as(t.fx.member).get(`/messages/${id}`),
      400,
      'BAD_REQUEST',
      'Invalid message(s)',
    );
    assertError(
      await t.as(t.fx.member).delete(`/messages/${id}`),
      400,
      'BAD_REQUEST',
      'Invalid message(s)',
    );
  });

  test('a direct message: its participants', async () => {
    const id = await sendDirect(t, t.fx.member, [t.fx.member2], 'x');
    await log.take();
    await t.as(t.fx.member).delete(`/messages/${id}`);
    assert.deepEqual(await log.take(), [
      {
        event: { type: 'delete_message', message_ids: [id], message_type: 'private' },
        users: ids(t.fx.member, t.fx.member2),
      },
    ]);
  });

  test('an administrator deleting where they are not subscribed is told too', async () => {
    const id = await sendToChannel(t, t.fx.owner, t.fx.channels.web, 't', 'x');
    await log.take();
    assert.equal((await t.as(t.fx.admin).delete(`/messages/${id}`)).status, 200);
    assert.deepEqual((await log.take())[0].users, ids(t.fx.owner, t.fx.admin));
  });

  test('who may delete whose message', async () => {
    const byMember = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'x');
    for (const who of [t.fx.moderator, t.fx.member2, t.fx.guest, t.fx.bot]) {
      assertError(await t.as(who).delete(`/messages/${byMember}`), 400, 'BAD_REQUEST', NO);
    }
    assert.equal((await t.as(t.fx.admin).delete(`/messages/${byMember}`)).status, 200);
    // A bot's owner may delete the bot's messages.
    const byBot = await sendToChannel(t, t.fx.bot, t.fx.channels.general, 't', 'beep');
    assert.equal((await t.as(t.fx.member).delete(`/messages/${byBot}`)).status, 200);
    assert.equal((await t.as(null).delete(`/messages/${byBot}`)).status, 401);
  });

  test('the own-message and any-message groups, of the organization and of the channel', async () => {
    const groups = await systemGroups(t);
    await setRealmSetting(t, 'can_delete_own_message_group', groups['role:moderators']);
    const own = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'x');
    assertError(await t.as(t.fx.member).delete(`/messages/${own}`), 400, 'BAD_REQUEST', NO);
    await setChannel(t, t.fx.channels.general.id, {
      groups: { can_delete_own_message_group: groups['role:members'] },
    });
    assert.equal((await t.as(t.fx.member).delete(`/messages/${own}`)).status, 200);
    const other = await sendToChannel(t, t.fx.member2, t.fx.channels.design, 't', 'x');
    assertError(await t.as(t.fx.moderator).delete(`/messages/${other}`), 400, 'BAD_REQUEST', NO);
    await setChannel(t, t.fx.channels.design.id, {
      groups: { can_delete_any_message_group: groups['role:moderators'] },
    });
    assert.equal((await t.as(t.fx.moderator).delete(`/messages/${other}`)).status, 200);
  });

  test("the time limit binds one's own messages only", async () => {
    await setRealmSetting(t, 'message_content_delete_limit_seconds', 100);
    const a = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'x');
    const b = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'y');
    setNow(T0 + 100);
    assert.equal((await t.as(t.fx.member).delete(`/messages/${a}`)).status, 200);
    setNow(T0 + 101);
    assertError(
      await t.as(t.fx.member).delete(`/messages/${b}`),
      400,
      'BAD_REQUEST',
      'The time limit for deleting this message has passed',
    );
    assert.equal((await t.as(t.fx.admin).delete(`/messages/${b}`)).status, 200);
  });

  test('nothing in archived channels, nothing one cannot read', async () => {
    const a = await sendToChannel(t, t.fx.member, t.fx.channels.design, 't', 'x');
    const b = await sendDirect(t, t.fx.member, [t.fx.member2], 'y');
    assertError(
      await t.as(t.fx.admin).delete(`/messages/${b}`),
      400,
      'BAD_REQUEST',
      'Invalid message(s)',
    );
    await setChannel(t, t.fx.channels.design.id, { is_archived: 1 });
    assertError(
      await t.as(t.fx.member).delete(`/messages/${a}`),
      400,
      'BAD_REQUEST',
      'Invalid message(s)',
    );
  });
});

describe('GET /users/me/{stream_id}/topics', () => {
  test('newest first, named as most recently sent, the empty topic shown by name', async () => {
    const a = await sendToChannel(t, t.fx.member, t.fx.channels.general, 'Fruit', 'x');
    const b = await sendToChannel(t, t.fx.member, t.fx.channels.general, '', 'y');
    const c = await sendToChannel(t, t.fx.member, t.fx.channels.general, 'FRUIT', 'z');
    await sendToChannel(t, t.fx.member, t.fx.channels.design, 'elsewhere', 'w');
    const res = await t.as(t.fx.member2).get(`/users/me/${t.fx.channels.general.id}/topics`);
    assert.deepEqual(res.body, {
      ...SUCCESS,
      topics: [
        { max_id: c, name: 'FRUIT' },
        { max_id: b, name: 'general chat' },
      ],
    });
    const raw = await t
      .as(t.fx.member2)
      .get(`/users/me/${t.fx.channels.general.id}/topics`, { allow_empty_topic_name: true });
    assert.deepEqual(raw.body.topics, [
      { max_id: c, name: 'FRUIT' },
      { max_id: b, name: '' },
    ]);
    assert.ok(a < b);
  });

  test('shared history for readers; without it, only what one received', async () => {
    const early = await sendToChannel(t, t.fx.moderator, t.fx.channels.secret, 'early', 'x');
    const late = await addUser(t, 'Late Comer', { channels: [t.fx.channels.secret.id] });
    const after = await sendToChannel(t, t.fx.moderator, t.fx.channels.secret, 'later', 'y');
    assert.deepEqual(
      (await t.as(late).get(`/users/me/${t.fx.channels.secret.id}/topics`)).body.topics,
      [{ max_id: after, name: 'later' }],
    );
    assert.deepEqual(
      (await t.as(t.fx.member2).get(`/users/me/${t.fx.channels.secret.id}/topics`)).body.topics,
      [
        { max_id: after, name: 'later' },
        { max_id: early, name: 'early' },
      ],
    );
    const pub = await sendToChannel(t, t.fx.admin, t.fx.channels.design, 'open', 'z');
    assert.deepEqual(
      (await t.as(t.fx.member2).get(`/users/me/${t.fx.channels.design.id}/topics`)).body.topics,
      [{ max_id: pub, name: 'open' }],
    );
  });

  test('channels one may not read are invalid', async () => {
    for (const [who, channel] of [
      [t.fx.admin, t.fx.channels.secret],
      [t.fx.member2, t.fx.channels.private],
      [t.fx.guest, t.fx.channels.design],
    ] as const) {
      assertError(
        await t.as(who).get(`/users/me/${channel.id}/topics`),
        400,
        'BAD_REQUEST',
        'Invalid channel ID',
      );
    }
    assertError(
      await t.as(t.fx.member).get('/users/me/99999/topics'),
      400,
      'BAD_REQUEST',
      'Invalid channel ID',
    );
    await setChannel(t, t.fx.channels.design.id, { is_archived: 1 });
    assert.equal(
      (await t.as(t.fx.member).get(`/users/me/${t.fx.channels.design.id}/topics`)).status,
      200,
    );
  });
});

describe('POST /streams/{stream_id}/delete_topic', () => {
  test('administrators delete the whole topic, any case; one event per batch', async () => {
    const a = await sendToChannel(t, t.fx.member, t.fx.channels.general, 'Doomed', 'x');
    const b = await sendToChannel(t, t.fx.member2, t.fx.channels.general, 'doomed', 'y');
    const keep = await sendToChannel(t, t.fx.member, t.fx.channels.general, 'kept', 'z');
    await log.take();
    const res = await t
      .as(t.fx.admin)
      .post(`/streams/${t.fx.channels.general.id}/delete_topic`, { topic_name: 'DOOMED' });
    assert.deepEqual(res.body, { ...SUCCESS, complete: true });
    assert.deepEqual(await log.take(), [
      {
        event: {
          type: 'delete_message',
          message_ids: [a, b],
          message_type: 'stream',
          stream_id: t.fx.channels.general.id,
          topic: 'doomed',
        },
        users: EVERYONE(),
      },
      {
        event: {
          type: 'stream',
          op: 'update',
          stream_id: t.fx.channels.general.id,
          name: 'general',
          property: 'first_message_id',
          value: keep,
        },
        users: EVERYONE(),
      },
    ]);
    const left = await t.ctx.db.selectFrom('messages').select('id').execute();
    assert.deepEqual(
      left.map((r) => r.id),
      [keep],
    );
  });

  test('the empty topic by its display name', async () => {
    await sendToChannel(t, t.fx.member, t.fx.channels.general, '', 'x');
    const res = await t
      .as(t.fx.owner)
      .post(`/streams/${t.fx.channels.general.id}/delete_topic`, { topic_name: 'general chat' });
    assert.deepEqual(res.body, { ...SUCCESS, complete: true });
    assert.deepEqual(await t.ctx.db.selectFrom('messages').select('id').execute(), []);
  });

  test('a topic too big for one request answers complete=false, and the client repeats', async () => {
    const recipientId = await channelRecipientId(t, t.fx.channels.design.id);
    const rows = Array.from({ length: 501 }, (_, i) => ({
      realm_id: t.fx.realm.id,
      recipient_id: recipientId,
      channel_id: t.fx.channels.design.id,
      sender_id: t.fx.member.id,
      topic: 'big',
      content: `m${i}`,
      rendered_content: `<p>m${i}</p>`,
      date_sent: T0,
      sending_client: 'test',
      is_me_message: 0,
      last_edit_time: null,
      last_moved_time: null,
      edit_history: null,
      has_link: 0,
      has_image: 0,
      has_attachment: 0,
    }));
    for (let i = 0; i < rows.length; i += 100) {
      await t.ctx.db
        .insertInto('messages')
        .values(rows.slice(i, i + 100))
        .execute();
    }
    // Each look at the clock is a minute later: the first batch uses up the request's time.
    let now = T0;
    t.ctx.clock = { nowMs: () => (now += 60) * 1000 };
    const url = `/streams/${t.fx.channels.design.id}/delete_topic`;
    await log.take();
    const first = await t.as(t.fx.admin).post(url, { topic_name: 'big' });
    assert.deepEqual(first.body, { ...SUCCESS, complete: false });
    const [batch, first_id] = await log.take();
    assert.equal(((batch.event as Record<string, unknown>).message_ids as number[]).length, 500);
    // The oldest message remains: first_message_id is unchanged, so no channel update.
    assert.equal(first_id, undefined);
    const second = await t.as(t.fx.admin).post(url, { topic_name: 'big' });
    assert.deepEqual(second.body, { ...SUCCESS, complete: true });
    assert.deepEqual(await t.ctx.db.selectFrom('messages').select('id').execute(), []);
  });

  test('administrators only; channels they may read', async () => {
    await sendToChannel(t, t.fx.member, t.fx.channels.private, 'x', 'y');
    for (const who of [t.fx.moderator, t.fx.member, t.fx.guest, t.fx.bot]) {
      assertError(
        await t
          .as(who)
          .post(`/streams/${t.fx.channels.general.id}/delete_topic`, { topic_name: 'x' }),
        400,
        'UNAUTHORIZED_PRINCIPAL',
        'Must be an organization administrator',
      );
    }
    assertError(
      await t
        .as(t.fx.admin)
        .post(`/streams/${t.fx.channels.private.id}/delete_topic`, { topic_name: 'x' }),
      400,
      'BAD_REQUEST',
      'Invalid channel ID',
    );
    const missing = await t
      .as(t.fx.admin)
      .post(`/streams/${t.fx.channels.general.id}/delete_topic`, {});
    assert.equal(missing.body.code, 'REQUEST_VARIABLE_MISSING');
    assert.equal((await t.ctx.db.selectFrom('messages').select('id').execute()).length, 1);
  });
});
