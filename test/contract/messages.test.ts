// Event contract of the message actions: sending, editing, moving and deleting, as every
// fixture user's snapshot (max_message_id, unread_msgs, recent_private_conversations,
// the channels' first_message_id) sees them. Deletions leave every viewer a newer message:
// no event tells a client its max_message_id went down (nor does it matter: clients use it
// only to choose local ids above it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestApp } from '../support/app.ts';
import { sendDirect, sendToChannel } from '../support/messages.ts';
import { ALL_VIEWERS, ok, runContract, type ViewerKey } from './harness.ts';

const allBut = (...keys: ViewerKey[]) => ALL_VIEWERS.filter((v) => !keys.includes(v));

/** The id of the newest message (setups record nothing else). */
async function newest(t: TestApp): Promise<number> {
  const row = await t.ctx.db
    .selectFrom('messages')
    .select('id')
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow();
  return row.id;
}

test('POST /messages to general: every subscriber has a new unread message', async () => {
  const seen = await runContract({
    changes: ALL_VIEWERS,
    act: (t) =>
      ok(
        t.as(t.fx.member).post('/messages', {
          type: 'stream',
          to: 'general',
          topic: 'hi',
          content: 'hello @**Nina Member**',
        }),
      ),
  });
  const [event] = seen.get('member2')!.filter((e) => e.type === 'message');
  assert.deepEqual(event.flags, ['mentioned']);
});

test('POST /messages: the first message of design changes its first_message_id for all who see it', async () => {
  await runContract({
    changes: allBut('guest'),
    act: (t) =>
      ok(
        t
          .as(t.fx.admin)
          .post('/messages', { type: 'stream', to: 'design', topic: '', content: 'first' }),
      ),
  });
});

test('POST /messages to a private channel: its subscribers only', async () => {
  // The administrator sees the channel exist (its first message is older), not its messages.
  await runContract({
    changes: ['owner', 'member'],
    setup: async (t) => {
      await sendToChannel(t, t.fx.owner, t.fx.channels.private, 'x', 'earlier');
    },
    act: (t) =>
      ok(
        t
          .as(t.fx.member)
          .post('/messages', { type: 'stream', to: 'private', topic: 'x', content: 'later' }),
      ),
  });
});

test('POST /messages: a direct message and a group conversation', async () => {
  await runContract({
    changes: ['member', 'member2'],
    act: (t) =>
      ok(
        t
          .as(t.fx.member)
          .post('/messages', { type: 'direct', to: [t.fx.member2.id], content: 'psst' }),
      ),
  });
  await runContract({
    changes: ['admin', 'member', 'member2'],
    act: (t) =>
      ok(
        t.as(t.fx.member).post('/messages', {
          type: 'direct',
          to: [t.fx.member2.id, t.fx.admin.id],
          content: 'all three',
        }),
      ),
  });
});

test('PATCH /messages/{id}: a mention added by an edit', async () => {
  await runContract({
    changes: ['member2'],
    setup: async (t) => {
      await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'plain');
    },
    act: async (t) =>
      ok(
        t
          .as(t.fx.member)
          .patch(`/messages/${await newest(t)}`, { content: 'now @**Nina Member**' }),
      ),
  });
});

test('PATCH /messages/{id}: a topic moved with change_all', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    setup: async (t) => {
      await sendToChannel(t, t.fx.member, t.fx.channels.general, 'old', 'a');
      await sendToChannel(t, t.fx.admin, t.fx.channels.general, 'old', 'b');
    },
    act: async (t) =>
      ok(
        t
          .as(t.fx.member)
          .patch(`/messages/${await newest(t)}`, { topic: 'new', propagate_mode: 'change_all' }),
      ),
  });
});

test('PATCH /messages/{id}: moved to design, the guest loses the messages', async () => {
  const seen = await runContract({
    changes: ALL_VIEWERS,
    setup: async (t) => {
      await sendToChannel(t, t.fx.member, t.fx.channels.general, 'move', 'a');
      await sendToChannel(t, t.fx.member, t.fx.channels.general, 'move', 'b');
      await sendToChannel(t, t.fx.member, t.fx.channels.general, 'stay', 'c');
    },
    act: async (t) =>
      ok(
        t.as(t.fx.member).patch(`/messages/${(await newest(t)) - 1}`, {
          stream_id: t.fx.channels.design.id,
          propagate_mode: 'change_all',
        }),
      ),
  });
  // general's oldest message is now a later one; the moved ones are gone for the guest.
  assert.deepEqual(
    seen.get('guest')!.map((e) => [e.type, e.property ?? e.message_ids]),
    [
      ['stream', 'first_message_id'],
      ['delete_message', [1, 2]],
    ],
  );
});

test('DELETE /messages/{id}: an older message', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    setup: async (t) => {
      await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'first');
      await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'second');
    },
    act: async (t) => ok(t.as(t.fx.member).delete(`/messages/${(await newest(t)) - 1}`)),
  });
});

test('POST /streams/{id}/delete_topic', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    setup: async (t) => {
      await sendToChannel(t, t.fx.member, t.fx.channels.general, 'doomed', 'a');
      await sendToChannel(t, t.fx.member, t.fx.channels.general, 'doomed', 'b');
      await sendToChannel(t, t.fx.member, t.fx.channels.general, 'kept', 'c');
      await sendDirect(t, t.fx.member, [t.fx.member2], 'd');
    },
    act: (t) =>
      ok(
        t
          .as(t.fx.admin)
          .post(`/streams/${t.fx.channels.general.id}/delete_topic`, { topic_name: 'doomed' }),
      ),
  });
});
