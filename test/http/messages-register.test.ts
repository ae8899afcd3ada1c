// The messages area's register snapshot: max_message_id, unread_msgs, starred_messages and
// recent_private_conversations.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { registerQueue } from '../support/events.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { sendDirect, sendToChannel, useClock } from '../support/messages.ts';

let t: TestApp;
beforeEach(async () => {
  t = await buildTestApp();
  useClock(t);
});
afterEach(async () => {
  await t.close();
});

const SECTIONS = [
  'max_message_id',
  'unread_msgs',
  'starred_messages',
  'recent_private_conversations',
];

async function snapshot(
  who: FixtureUser,
  extra: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const body = await registerQueue(t.as(who), {
    fetch_event_types: [
      'message',
      'update_message_flags',
      'starred_messages',
      'recent_private_conversations',
    ],
    ...extra,
  });
  return Object.fromEntries(SECTIONS.map((k) => [k, body[k]]));
}

async function setFlags(userId: number, messageId: number, bits: number): Promise<void> {
  await t.ctx.db
    .updateTable('user_messages')
    .set((eb) => ({ flags: eb('flags', '|', bits) }))
    .where('user_id', '=', userId)
    .where('message_id', '=', messageId)
    .execute();
}

describe('register: message sections', () => {
  test('a user with no messages', async () => {
    assert.deepEqual(await snapshot(t.fx.member), {
      max_message_id: -1,
      unread_msgs: {
        pms: [],
        streams: [],
        huddles: [],
        mentions: [],
        count: 0,
        old_unreads_missing: false,
      },
      starred_messages: [],
      recent_private_conversations: [],
    });
  });

  test('unreads by conversation, mentions, stars and recent conversations', async () => {
    const fx = t.fx;
    const a = await sendToChannel(t, fx.admin, fx.channels.general, 'Topic', 'a');
    const b = await sendToChannel(
      t,
      fx.admin,
      fx.channels.general,
      '',
      `@**${fx.member.full_name}** b`,
    );
    const c = await sendToChannel(t, fx.admin, fx.channels.design, 'x', 'c');
    const d = await sendDirect(t, fx.member2, [fx.member], 'd');
    const e = await sendDirect(t, fx.admin, [fx.member, fx.member2], 'e');
    const self = await sendDirect(t, fx.member, [fx.member], 'f');
    const g = await sendToChannel(t, fx.admin, fx.channels.design, 'muted', '@**all** g');
    await setFlags(fx.member.id, c, 1); // read
    await setFlags(fx.member.id, a, 2); // starred
    await t.ctx.db
      .insertInto('user_topics')
      .values({
        user_id: fx.member.id,
        channel_id: fx.channels.design.id,
        topic_name: 'muted',
        topic_key: 'muted',
        visibility_policy: 1,
        last_updated: 0,
      })
      .execute();
    assert.deepEqual(await snapshot(fx.member), {
      max_message_id: g,
      unread_msgs: {
        pms: [
          { other_user_id: fx.member.id, sender_id: fx.member.id, unread_message_ids: [self] },
          { other_user_id: fx.member2.id, sender_id: fx.member2.id, unread_message_ids: [d] },
        ],
        // By channel, then topic as shown (the empty topic by its display name).
        streams: [
          { stream_id: fx.channels.general.id, topic: 'Topic', unread_message_ids: [a] },
          { stream_id: fx.channels.general.id, topic: 'general chat', unread_message_ids: [b] },
          { stream_id: fx.channels.design.id, topic: 'muted', unread_message_ids: [g] },
        ],
        huddles: [
          {
            user_ids_string: [fx.admin.id, fx.member.id, fx.member2.id]
              .sort((x, y) => x - y)
              .join(','),
            unread_message_ids: [e],
          },
        ],
        // The wildcard in a muted topic is no mention; muted unreads do not count.
        mentions: [b],
        count: 5,
        old_unreads_missing: false,
      },
      starred_messages: [a],
      recent_private_conversations: [
        { user_ids: [], max_message_id: self },
        { user_ids: [fx.admin.id, fx.member2.id].sort((x, y) => x - y), max_message_id: e },
        { user_ids: [fx.member2.id], max_message_id: d },
      ],
    });
    const modern = await snapshot(fx.member, {
      client_capabilities: { notification_settings_null: true, empty_topic_name: true },
    });
    const streams = (modern.unread_msgs as { streams: Array<{ topic: string }> }).streams;
    assert.ok(streams.some((s) => s.topic === ''));
  });

  test('unreads of channels one left are not listed', async () => {
    const id = await sendToChannel(t, t.fx.admin, t.fx.channels.design, 'x', 'c');
    await t.ctx.db
      .updateTable('subscriptions')
      .set({ active: 0 })
      .where('user_id', '=', t.fx.member.id)
      .where('channel_id', '=', t.fx.channels.design.id)
      .execute();
    const snap = await snapshot(t.fx.member);
    assert.equal(snap.max_message_id, id);
    assert.deepEqual((snap.unread_msgs as { streams: unknown[]; count: number }).streams, []);
  });

  test('sections are fetched only when asked for', async () => {
    const body = await registerQueue(t.as(t.fx.member), { fetch_event_types: ['message'] });
    assert.equal(body.max_message_id, -1);
    for (const k of ['unread_msgs', 'starred_messages', 'recent_private_conversations'])
      assert.equal(k in body, false, k);
  });
});
