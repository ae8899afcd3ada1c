// Event contract of message flags and reports: every viewer's unread_msgs and
// starred_messages after the update_message_flags events equal a fresh snapshot, and only
// the user who changed their flags sees anything change.
import { test } from 'node:test';
import type { TestApp } from '../support/app.ts';
import { sendDirect, sendToChannel } from '../support/messages.ts';
import { ALL_VIEWERS, ok, runContract } from './harness.ts';

/** Ids of all messages, oldest first (setups record nothing else). */
async function messageIds(t: TestApp): Promise<number[]> {
  const rows = await t.ctx.db.selectFrom('messages').select('id').orderBy('id').execute();
  return rows.map((r) => r.id);
}

/** Unread messages of every kind for member: channel (plain, mention, empty topic), DMs. */
async function unreadMix(t: TestApp): Promise<void> {
  await sendToChannel(t, t.fx.member2, t.fx.channels.general, 'lunch', 'plain');
  await sendToChannel(t, t.fx.member2, t.fx.channels.general, '', '@**Nina Member**');
  await sendToChannel(t, t.fx.admin, t.fx.channels.design, 'x', '@**all** hi');
  await sendDirect(t, t.fx.member2, [t.fx.member], 'psst');
  await sendDirect(t, t.fx.member2, [t.fx.member, t.fx.owner], 'group');
  await sendDirect(t, t.fx.member, [t.fx.member], 'note');
  await t.ctx.db
    .updateTable('subscriptions')
    .set({ is_muted: 1 })
    .where('user_id', '=', t.fx.member.id)
    .where('channel_id', '=', t.fx.channels.design.id)
    .execute();
}

const flags = async (t: TestApp, op: string, flag: string, ids?: number[]) =>
  ok(
    t.as(t.fx.member).post('/messages/flags', { messages: ids ?? (await messageIds(t)), op, flag }),
  );

test('POST /messages/flags: mark read, then unread (message_details rebuild unread_msgs)', async () => {
  await runContract({ changes: ['member'], setup: unreadMix, act: (t) => flags(t, 'add', 'read') });
  await runContract({
    changes: ['member'],
    setup: async (t) => {
      await unreadMix(t);
      await flags(t, 'add', 'read');
    },
    act: (t) => flags(t, 'remove', 'read'),
  });
});

test('POST /messages/flags: read, unread and read again, in one batch of events', async () => {
  await runContract({
    changes: ['member'],
    setup: unreadMix,
    act: async (t) => {
      await flags(t, 'add', 'read');
      await flags(t, 'remove', 'read');
      await flags(t, 'add', 'read');
    },
  });
});

test('POST /messages/flags: star, including a historical message', async () => {
  await runContract({
    changes: ['member2'],
    setup: async (t) => {
      await sendToChannel(t, t.fx.admin, t.fx.channels.design, 'x', 'not received');
      await sendToChannel(t, t.fx.admin, t.fx.channels.general, 'x', 'received');
    },
    act: async (t) => {
      await ok(
        t.as(t.fx.member2).post('/messages/flags', {
          messages: await messageIds(t),
          op: 'add',
          flag: 'starred',
        }),
      );
    },
  });
});

test('POST /messages/flags/narrow, /mark_topic_as_read, /mark_stream_as_read', async () => {
  await runContract({
    changes: ['member'],
    setup: unreadMix,
    act: (t) =>
      ok(
        t.as(t.fx.member).post('/messages/flags/narrow', {
          anchor: 'oldest',
          num_before: 0,
          num_after: 2,
          narrow: [{ operator: 'is', operand: 'unread' }],
          op: 'add',
          flag: 'read',
        }),
      ),
  });
  await runContract({
    changes: ['member'],
    setup: unreadMix,
    act: (t) =>
      ok(
        t
          .as(t.fx.member)
          .post('/mark_topic_as_read', { stream_id: t.fx.channels.general.id, topic_name: '' }),
      ),
  });
  await runContract({
    changes: ['member'],
    setup: unreadMix,
    act: (t) =>
      ok(t.as(t.fx.member).post('/mark_stream_as_read', { stream_id: t.fx.channels.design.id })),
  });
});

test('POST /mark_all_as_read: all:true empties unread_msgs', async () => {
  await runContract({
    changes: ['member'],
    setup: unreadMix,
    act: (t) => ok(t.as(t.fx.member).post('/mark_all_as_read')),
  });
});

test('POST /messages/{id}/report: the report post and the new Notification Bot', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    setup: async (t) => {
      await ok(
        t
          .as(t.fx.owner)
          .patch('/realm', { moderation_request_channel_id: t.fx.channels.private.id }),
      );
      await sendToChannel(t, t.fx.member, t.fx.channels.general, 'x', 'bad');
    },
    act: async (t) => {
      const [id] = (await messageIds(t)).slice(-1);
      await ok(t.as(t.fx.member2).post(`/messages/${id}/report`, { report_type: 'spam' }));
    },
  });
});
