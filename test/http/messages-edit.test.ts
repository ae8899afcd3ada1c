// PATCH /messages/{id}: content edits, topic moves with each propagate mode, channel moves
// with the access they take away or give, permissions and time limits (on a fake clock),
// and the update_message and delete_message events. History: messages-history.test.ts.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { SUCCESS } from '../support/client.ts';
import { systemGroups } from '../support/channels.ts';
import { captureNotices, ids, type NoticeLog } from '../support/notices.ts';
import {
  assertError,
  getMessages,
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

async function row(id: number) {
  return t.ctx.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

async function seen(who: typeof t.fx.member, id: number): Promise<Record<string, unknown>> {
  const res = await t.as(who).get(`/messages/${id}`);
  assert.equal(res.status, 200, res.text);
  return res.body.message as Record<string, unknown>;
}

describe('content edits', () => {
  test('the sender edits: content, edit history, flags and the update_message event', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.design, 'plans', 'first draft');
    await log.take();
    setNow(T0 + 60);
    const res = await t
      .as(t.fx.member)
      .patch(`/messages/${id}`, { content: 'now with @**Adam Admin**' });
    assert.deepEqual(res.body, { ...SUCCESS, detached_uploads: [] });
    const html = `<p>now with <span class="user-mention" data-user-id="${t.fx.admin.id}">@Adam Admin</span></p>`;
    const m = await seen(t.fx.admin, id);
    assert.equal(m.content, html);
    assert.equal(m.last_edit_timestamp, T0 + 60);
    assert.equal('last_moved_timestamp' in m, false);
    assert.deepEqual(m.edit_history, [
      {
        user_id: t.fx.member.id,
        timestamp: T0 + 60,
        prev_content: 'first draft',
        prev_rendered_content: '<p>first draft</p>',
      },
    ]);
    assert.deepEqual(m.flags, ['mentioned']);
    const [notice] = await log.takeRaw();
    assert.deepEqual(notice.event, {
      type: 'update_message',
      user_id: t.fx.member.id,
      rendering_only: false,
      message_id: id,
      message_ids: [id],
      flags: [],
      edit_timestamp: T0 + 60,
      stream_name: 'design',
      stream_id: t.fx.channels.design.id,
      orig_content: 'first draft',
      orig_rendered_content: '<p>first draft</p>',
      content: 'now with @**Adam Admin**',
      rendered_content: html,
      is_me_message: false,
    });
    assert.deepEqual(notice.users, ids(t.fx.admin, t.fx.member));
    assert.deepEqual(notice.perUser, {
      [t.fx.admin.id]: { flags: ['mentioned'] },
      [t.fx.member.id]: { flags: [] },
    });
  });

  test('direct messages: no channel fields; a mention removed clears the flag', async () => {
    const id = await sendDirect(t, t.fx.member, [t.fx.member2], 'hi @**Nina Member**');
    assert.equal((await rowsOf(t, id))[t.fx.member2.id], 8);
    await log.take();
    await t.as(t.fx.member).patch(`/messages/${id}`, { content: '/me waves' });
    assert.equal((await rowsOf(t, id))[t.fx.member2.id], 0);
    const [notice] = await log.takeRaw();
    const e = notice.event as Record<string, unknown>;
    assert.equal('stream_id' in e, false);
    assert.equal(e.is_me_message, true);
    assert.deepEqual(notice.users, ids(t.fx.member, t.fx.member2));
  });

  test('empty content becomes "(deleted)"; unchanged content is nothing to change', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'x');
    assertError(
      await t.as(t.fx.member).patch(`/messages/${id}`, { content: 'x' }),
      400,
      'BAD_REQUEST',
      'Nothing to change',
    );
    await t.as(t.fx.member).patch(`/messages/${id}`, { content: '   ' });
    assert.equal((await row(id)).content, '(deleted)');
  });

  test('who may edit content, and until when', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'x');
    for (const other of [t.fx.owner, t.fx.admin, t.fx.member2]) {
      assertError(
        await t.as(other).patch(`/messages/${id}`, { content: 'y' }),
        400,
        'BAD_REQUEST',
        "You don't have permission to edit this message",
      );
    }
    // The default limit is 600 s, with 20 s of grace.
    setNow(T0 + 620);
    assert.equal((await t.as(t.fx.member).patch(`/messages/${id}`, { content: 'y' })).status, 200);
    setNow(T0 + 621);
    assertError(
      await t.as(t.fx.member).patch(`/messages/${id}`, { content: 'z' }),
      400,
      'BAD_REQUEST',
      'The time limit for editing this message has passed',
    );
    await setRealmSetting(t, 'message_content_edit_limit_seconds', null);
    assert.equal((await t.as(t.fx.member).patch(`/messages/${id}`, { content: 'z' })).status, 200);
    await setRealmSetting(t, 'allow_message_editing', false);
    assertError(
      await t.as(t.fx.member).patch(`/messages/${id}`, { content: 'w' }),
      400,
      'BAD_REQUEST',
      'Your organization has turned off message editing',
    );
  });

  test('request errors', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'x');
    const dm = await sendDirect(t, t.fx.member, [t.fx.member2], 'x');
    const m = t.as(t.fx.member);
    assertError(await m.patch(`/messages/${id}`, {}), 400, 'BAD_REQUEST', 'Nothing to change');
    assertError(
      await m.patch(`/messages/${id}`, { topic: 't' }),
      400,
      'BAD_REQUEST',
      'Nothing to change',
    );
    assertError(
      await m.patch(`/messages/${id}`, { content: 'y', propagate_mode: 'change_all' }),
      400,
      'BAD_REQUEST',
      'Invalid propagate_mode without topic edit',
    );
    assertError(
      await m.patch(`/messages/${id}`, { content: 'y', stream_id: t.fx.channels.design.id }),
      400,
      'BAD_REQUEST',
      'Cannot change message content while changing channel',
    );
    assertError(
      await m.patch(`/messages/${dm}`, { topic: 'x' }),
      400,
      'BAD_REQUEST',
      'Direct messages cannot have topics.',
    );
    assertError(
      await m.patch(`/messages/${dm}`, { stream_id: t.fx.channels.design.id }),
      400,
      'BAD_REQUEST',
      'Direct messages cannot be moved to channels.',
    );
    assertError(
      await m.patch(`/messages/${id}`, { propagate_mode: 'change_some', topic: 'q' }),
      400,
      'BAD_REQUEST',
      'Invalid propagate_mode',
    );
    assertError(
      await t.as(t.fx.admin).patch(`/messages/${dm}`, { content: 'y' }),
      400,
      'BAD_REQUEST',
      'Invalid message(s)',
    );
    assertError(
      await m.patch('/messages/99999', { content: 'y' }),
      400,
      'BAD_REQUEST',
      'Invalid message(s)',
    );
    await setChannel(t, t.fx.channels.general.id, { is_archived: 1 });
    assertError(
      await m.patch(`/messages/${id}`, { content: 'y' }),
      400,
      'BAD_REQUEST',
      'Invalid message(s)',
    );
    assert.equal((await t.as(null).patch(`/messages/${id}`, { content: 'y' })).status, 401);
  });
});

describe('topic moves', () => {
  async function threeInTopic(): Promise<number[]> {
    return [
      await sendToChannel(t, t.fx.member, t.fx.channels.general, 'old', 'a'),
      await sendToChannel(t, t.fx.admin, t.fx.channels.general, 'OLD', 'b'),
      await sendToChannel(t, t.fx.member2, t.fx.channels.general, 'old', 'c'),
    ];
  }

  for (const [mode, pick] of [
    ['change_one', [1]],
    ['change_later', [1, 2]],
    ['change_all', [0, 1, 2]],
  ] as const) {
    test(`${mode}`, async () => {
      const m = await threeInTopic();
      await log.take();
      setNow(T0 + 30);
      const res = await t
        .as(t.fx.member)
        .patch(`/messages/${m[1]}`, { topic: 'new https://example.com', propagate_mode: mode });
      assert.equal(res.status, 200, res.text);
      const moved = pick.map((i) => m[i]);
      for (const id of m) {
        const r = await row(id);
        assert.equal(
          r.topic,
          moved.includes(id) ? 'new https://example.com' : id === m[1] ? 'OLD' : 'old',
        );
      }
      const [notice, ...rest] = await log.takeRaw();
      assert.deepEqual(rest, []);
      assert.deepEqual(notice.event, {
        type: 'update_message',
        user_id: t.fx.admin.id,
        rendering_only: false,
        message_id: m[1],
        message_ids: moved,
        flags: [],
        edit_timestamp: T0 + 30,
        stream_name: 'general',
        stream_id: t.fx.channels.general.id,
        propagate_mode: mode,
        orig_subject: 'OLD',
        subject: 'new https://example.com',
        topic_links: [{ text: 'https://example.com', url: 'https://example.com' }],
      });
      assert.deepEqual(notice.users, EVERYONE());
      const shown = await seen(t.fx.member2, m[1]);
      assert.equal(shown.last_moved_timestamp, T0 + 30);
      assert.equal('last_edit_timestamp' in shown, false);
      assert.deepEqual(shown.edit_history, [
        {
          user_id: t.fx.member.id,
          timestamp: T0 + 30,
          prev_topic: 'OLD',
          topic: 'new https://example.com',
        },
      ]);
      assert.deepEqual(shown.topic_links, [
        { text: 'https://example.com', url: 'https://example.com' },
      ]);
    });
  }

  test('content and topic in one edit make one history entry', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 'old', 'a');
    await t.as(t.fx.member).patch(`/messages/${id}`, { content: 'b', topic: 'new' });
    assert.deepEqual((await seen(t.fx.member, id)).edit_history, [
      {
        user_id: t.fx.member.id,
        timestamp: T0,
        prev_content: 'a',
        prev_rendered_content: '<p>a</p>',
        prev_topic: 'old',
        topic: 'new',
      },
    ]);
  });

  test('resolving is not a move and needs can_resolve_topics_group', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 'bug', 'a');
    await t
      .as(t.fx.member2)
      .patch(`/messages/${id}`, { topic: '✔ bug', propagate_mode: 'change_all' });
    const m = await seen(t.fx.member, id);
    assert.equal(m.subject, '✔ bug');
    assert.equal('last_moved_timestamp' in m, false);
    const groups = await systemGroups(t);
    await setRealmSetting(t, 'can_resolve_topics_group', groups['role:moderators']);
    assertError(
      await t
        .as(t.fx.member2)
        .patch(`/messages/${id}`, { topic: 'bug', propagate_mode: 'change_all' }),
      400,
      'BAD_REQUEST',
      "You don't have permission to resolve topics in this channel.",
    );
    await setChannel(t, t.fx.channels.general.id, {
      groups: { can_resolve_topics_group: groups['role:members'] },
    });
    assert.equal(
      (
        await t
          .as(t.fx.member2)
          .patch(`/messages/${id}`, { topic: 'bug', propagate_mode: 'change_all' })
      ).status,
      200,
    );
  });

  test('permissions: the organization group or the channel group', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 'a', 'x');
    const groups = await systemGroups(t);
    await setRealmSetting(t, 'can_move_messages_between_topics_group', groups['role:moderators']);
    assertError(
      await t.as(t.fx.member).patch(`/messages/${id}`, { topic: 'b' }),
      400,
      'BAD_REQUEST',
      "You don't have permission to edit this message",
    );
    assert.equal((await t.as(t.fx.moderator).patch(`/messages/${id}`, { topic: 'b' })).status, 200);
    await setChannel(t, t.fx.channels.general.id, {
      groups: { can_move_messages_within_channel_group: groups['role:members'] },
    });
    assert.equal((await t.as(t.fx.member).patch(`/messages/${id}`, { topic: 'c' })).status, 200);
  });

  test('time limits for members; none for moderators; change_all needs the whole topic', async () => {
    const week = 604800;
    const old = await sendToChannel(t, t.fx.member, t.fx.channels.general, 'a', 'x');
    setNow(T0 + week);
    const recent = await sendToChannel(t, t.fx.member, t.fx.channels.general, 'a', 'y');
    setNow(T0 + week + 21);
    assertError(
      await t.as(t.fx.member).patch(`/messages/${old}`, { topic: 'b' }),
      400,
      'BAD_REQUEST',
      "The time limit for editing this message's topic has passed.",
    );
    const res = await t
      .as(t.fx.member)
      .patch(`/messages/${recent}`, { topic: 'b', propagate_mode: 'change_all' });
    assert.deepEqual(res.body, {
      result: 'error',
      msg: 'You only have permission to move the 1/2 most recent messages in this topic.',
      code: 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED',
      first_message_id_allowed_to_move: recent,
      total_messages_in_topic: 2,
      total_messages_allowed_to_move: 1,
    });
    assert.equal(
      (
        await t
          .as(t.fx.member)
          .patch(`/messages/${recent}`, { topic: 'b', propagate_mode: 'change_later' })
      ).status,
      200,
    );
    assert.equal(
      (
        await t
          .as(t.fx.moderator)
          .patch(`/messages/${old}`, { topic: 'b', propagate_mode: 'change_all' })
      ).status,
      200,
    );
  });

  test('the destination topic must be allowed', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 'a', 'x');
    await setRealmSetting(t, 'topics_policy', 'disable_empty_topic');
    assertError(
      await t.as(t.fx.member).patch(`/messages/${id}`, { topic: '' }),
      400,
      'BAD_REQUEST',
      'Topics are required in this organization.',
    );
  });
});

describe('channel moves', () => {
  test('to a public channel: a guest who cannot follow loses the messages', async () => {
    const a = await sendToChannel(t, t.fx.member, t.fx.channels.general, 'move me', 'a');
    const b = await sendToChannel(t, t.fx.member, t.fx.channels.general, 'move me', 'b');
    await log.take();
    const res = await t.as(t.fx.member).patch(`/messages/${a}`, {
      stream_id: t.fx.channels.design.id,
      propagate_mode: 'change_all',
    });
    assert.equal(res.status, 200, res.text);
    const [update, generalFirst, designFirst, deletion, ...rest] = await log.takeRaw();
    assert.deepEqual(rest, []);
    const firstUpdate = (c: { id: number; name: string }, value: number | null) => ({
      type: 'stream',
      op: 'update',
      stream_id: c.id,
      name: c.name,
      property: 'first_message_id',
      value,
    });
    assert.deepEqual(generalFirst.event, firstUpdate(t.fx.channels.general, null));
    assert.deepEqual(designFirst.event, firstUpdate(t.fx.channels.design, a));
    assert.deepEqual(
      designFirst.users,
      EVERYONE().filter((id) => id !== t.fx.guest.id),
    );
    assert.deepEqual(update.event, {
      type: 'update_message',
      user_id: t.fx.member.id,
      rendering_only: false,
      message_id: a,
      message_ids: [a, b],
      flags: [],
      edit_timestamp: T0,
      stream_name: 'general',
      stream_id: t.fx.channels.general.id,
      propagate_mode: 'change_all',
      orig_subject: 'move me',
      new_stream_id: t.fx.channels.design.id,
    });
    assert.deepEqual(
      update.users,
      EVERYONE().filter((id) => id !== t.fx.guest.id),
    );
    assert.deepEqual(deletion.event, {
      type: 'delete_message',
      message_ids: [a, b],
      message_type: 'stream',
      stream_id: t.fx.channels.general.id,
      topic: 'move me',
    });
    assert.deepEqual(deletion.users, [t.fx.guest.id]);
    assert.equal((await rowsOf(t, a))[t.fx.guest.id], undefined);
    assert.deepEqual((await seen(t.fx.owner, b)).edit_history, [
      {
        user_id: t.fx.member.id,
        timestamp: T0,
        prev_stream: t.fx.channels.general.id,
        stream: t.fx.channels.design.id,
      },
    ]);
    const listed = await getMessages(t, t.fx.admin, {
      anchor: 'newest',
      num_before: 5,
      num_after: 0,
      narrow: [['channel', 'design']],
    });
    assert.deepEqual(
      (listed.messages as Array<{ id: number }>).map((m) => m.id),
      [a, b],
    );
  });

  test('into a channel without shared history: its subscribers get the messages, others lose them', async () => {
    const id = await sendToChannel(t, t.fx.admin, t.fx.channels.design, 'x', 'secret stuff');
    await log.take();
    const res = await t
      .as(t.fx.member2)
      .patch(`/messages/${id}`, { stream_id: t.fx.channels.secret.id });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(await rowsOf(t, id), { [t.fx.moderator.id]: 1, [t.fx.member2.id]: 1 });
    // Everyone who saw it before loses it; those who gain it are not told retroactively.
    const [designFirst, secretFirst, deletion, ...rest] = await log.takeRaw();
    assert.deepEqual(rest, []);
    assert.deepEqual([designFirst.event.type, secretFirst.event.type], ['stream', 'stream']);
    assert.deepEqual(secretFirst.users, ids(t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member2));
    assert.equal(deletion.event.type, 'delete_message');
    assert.deepEqual(deletion.users, ids(t.fx.admin, t.fx.member));
    assert.equal((await seen(t.fx.moderator, id)).stream_id, t.fx.channels.secret.id);
    assertError(
      await t.as(t.fx.admin).get(`/messages/${id}`),
      400,
      'BAD_REQUEST',
      'Invalid message(s)',
    );
  });

  test('permissions and destinations', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 'x', 'y');
    const m = t.as(t.fx.member);
    assertError(
      await m.patch(`/messages/${id}`, { stream_id: t.fx.channels.secret.id }),
      400,
      'BAD_REQUEST',
      'Invalid channel ID',
    );
    assertError(
      await m.patch(`/messages/${id}`, { stream_id: 99999 }),
      400,
      'BAD_REQUEST',
      'Invalid channel ID',
    );
    assertError(
      await m.patch(`/messages/${id}`, { stream_id: t.fx.channels.announce.id }),
      400,
      'BAD_REQUEST',
      'You do not have permission to post in this channel.',
    );
    await setChannel(t, t.fx.channels.design.id, { is_archived: 1 });
    assertError(
      await m.patch(`/messages/${id}`, { stream_id: t.fx.channels.design.id }),
      400,
      'BAD_REQUEST',
      'Invalid channel ID',
    );
    assertError(
      await t.as(t.fx.guest).patch(`/messages/${id}`, { stream_id: t.fx.channels.web.id }),
      400,
      'BAD_REQUEST',
      "You don't have permission to move this message",
    );
    const groups = await systemGroups(t);
    await setRealmSetting(t, 'can_move_messages_between_channels_group', groups['role:nobody']);
    assertError(
      await m.patch(`/messages/${id}`, { stream_id: t.fx.channels.private.id }),
      400,
      'BAD_REQUEST',
      "You don't have permission to move this message",
    );
    await setChannel(t, t.fx.channels.general.id, {
      groups: { can_move_messages_out_of_channel_group: groups['role:members'] },
    });
    assert.equal(
      (await m.patch(`/messages/${id}`, { stream_id: t.fx.channels.private.id })).status,
      200,
    );
    // The same channel is no channel change.
    assertError(
      await m.patch(`/messages/${id}`, { stream_id: t.fx.channels.private.id }),
      400,
      'BAD_REQUEST',
      'Nothing to change',
    );
  });

  test('a time limit of its own', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 'x', 'y');
    await setRealmSetting(t, 'move_messages_between_streams_limit_seconds', 100);
    setNow(T0 + 121);
    assertError(
      await t.as(t.fx.member).patch(`/messages/${id}`, { stream_id: t.fx.channels.design.id }),
      400,
      'BAD_REQUEST',
      "The time limit for editing this message's channel has passed",
    );
    assert.equal(
      (await t.as(t.fx.admin).patch(`/messages/${id}`, { stream_id: t.fx.channels.design.id }))
        .status,
      200,
    );
  });
});
