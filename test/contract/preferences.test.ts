// Event contract of reactions, topic preferences and alert words. Reactions change no
// snapshot key (clients keep them with fetched messages), so those cases check who is
// told; topic preferences change user_topics, muted_topics and the unread count.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestApp } from '../support/app.ts';
import { sendToChannel } from '../support/messages.ts';
import type { Event } from '../support/events.ts';
import { ALL_VIEWERS, ok, runContract, type ViewerKey } from './harness.ts';

/** The id of the newest message. */
async function newest(t: TestApp): Promise<number> {
  const row = await t.ctx.db
    .selectFrom('messages')
    .select('id')
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Which viewers (modern form) received an event of this type. */
function told(seen: Map<ViewerKey, Event[]>, type: string): ViewerKey[] {
  return [...seen].filter(([, events]) => events.some((e) => e.type === type)).map(([v]) => v);
}

test('POST /messages/{id}/reactions in general: everyone is told, no snapshot changes', async () => {
  const seen = await runContract({
    changes: [],
    setup: async (t) => {
      await sendToChannel(t, t.fx.member, t.fx.channels.general, 'hi', 'hello');
    },
    act: async (t) =>
      ok(t.as(t.fx.guest).post(`/messages/${await newest(t)}/reactions`, { emoji_name: 'smile' })),
  });
  assert.deepEqual(told(seen, 'reaction'), ALL_VIEWERS);
});

test('DELETE /messages/{id}/reactions: everyone is told', async () => {
  const seen = await runContract({
    changes: [],
    setup: async (t) => {
      await sendToChannel(t, t.fx.member, t.fx.channels.general, 'hi', 'hello');
      await ok(
        t.as(t.fx.bot).post(`/messages/${await newest(t)}/reactions`, { emoji_name: 'zulip' }),
      );
    },
    act: async (t) =>
      ok(t.as(t.fx.bot).delete(`/messages/${await newest(t)}/reactions`, { emoji_name: 'zulip' })),
  });
  assert.deepEqual(told(seen, 'reaction'), ALL_VIEWERS);
});

test('a reaction by a reader outside a public channel: its readers and the reactor', async () => {
  let target = 0;
  const seen = await runContract({
    changes: [],
    setup: async (t) => {
      target = await sendToChannel(t, t.fx.admin, t.fx.channels.design, 'd', 'design news');
      // A newer message for everyone: the reactor's new historical row is not their newest.
      await sendToChannel(t, t.fx.owner, t.fx.channels.general, 'g', 'later');
    },
    act: (t) =>
      ok(t.as(t.fx.member2).post(`/messages/${target}/reactions`, { emoji_name: 'tada' })),
  });
  assert.deepEqual(told(seen, 'reaction'), ['admin', 'member', 'member2']);
});

test('a reaction in a private channel: its subscribers only', async () => {
  const seen = await runContract({
    changes: [],
    setup: async (t) => {
      await sendToChannel(t, t.fx.owner, t.fx.channels.private, 'p', 'hush');
    },
    act: async (t) =>
      ok(t.as(t.fx.member).post(`/messages/${await newest(t)}/reactions`, { emoji_name: 'joy' })),
  });
  assert.deepEqual(told(seen, 'reaction'), ['owner', 'member']);
});

/** Unread messages for everyone in two general topics, one of them the empty topic. */
async function unreadTopics(t: TestApp): Promise<void> {
  await sendToChannel(t, t.fx.owner, t.fx.channels.general, 'noise', 'one');
  await sendToChannel(t, t.fx.owner, t.fx.channels.general, 'NOISE', 'two');
  await sendToChannel(t, t.fx.owner, t.fx.channels.general, '', 'three');
}

test('POST /user_topics: muting a topic with unread messages', async () => {
  await runContract({
    changes: ['member'],
    setup: unreadTopics,
    act: (t) =>
      ok(
        t.as(t.fx.member).post('/user_topics', {
          stream_id: t.fx.channels.general.id,
          topic: 'Noise',
          visibility_policy: 1,
        }),
      ),
  });
});

test('POST /user_topics: muting the empty topic', async () => {
  await runContract({
    changes: ['guest'],
    setup: unreadTopics,
    act: (t) =>
      ok(
        t.as(t.fx.guest).post('/user_topics', {
          stream_id: t.fx.channels.general.id,
          topic: '',
          visibility_policy: 1,
        }),
      ),
  });
});

test('POST /user_topics: following and clearing', async () => {
  const mute = (t: TestApp, policy: number) =>
    ok(
      t.as(t.fx.member).post('/user_topics', {
        stream_id: t.fx.channels.general.id,
        topic: 'noise',
        visibility_policy: policy,
      }),
    );
  await runContract({
    changes: ['member'],
    setup: async (t) => {
      await unreadTopics(t);
      await mute(t, 1);
    },
    act: (t) => mute(t, 3),
  });
  await runContract({
    changes: ['member'],
    setup: async (t) => {
      await unreadTopics(t);
      await mute(t, 1);
    },
    act: (t) => mute(t, 0),
  });
});

test('POST /user_topics: unmuting a topic of a muted channel', async () => {
  await runContract({
    changes: ['member'],
    setup: async (t) => {
      await unreadTopics(t);
      await ok(
        t.as(t.fx.member).post('/users/me/subscriptions/properties', {
          subscription_data: [
            { stream_id: t.fx.channels.general.id, property: 'is_muted', value: true },
          ],
        }),
      );
    },
    act: (t) =>
      ok(
        t.as(t.fx.member).post('/user_topics', {
          stream_id: t.fx.channels.general.id,
          topic: 'noise',
          visibility_policy: 2,
        }),
      ),
  });
});

test('PATCH /users/me/subscriptions/muted_topics (legacy)', async () => {
  await runContract({
    changes: ['member2'],
    setup: unreadTopics,
    act: (t) =>
      ok(
        t.as(t.fx.member2).patch('/users/me/subscriptions/muted_topics', {
          stream: 'general',
          topic: 'noise',
          op: 'add',
        }),
      ),
  });
});

test('renaming a channel renames it in the legacy muted list', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    setup: async (t) => {
      await ok(
        t.as(t.fx.member).post('/user_topics', {
          stream_id: t.fx.channels.general.id,
          topic: 'noise',
          visibility_policy: 1,
        }),
      );
    },
    act: (t) =>
      ok(t.as(t.fx.owner).patch(`/streams/${t.fx.channels.general.id}`, { new_name: 'lobby' })),
  });
});

test('POST and DELETE /users/me/alert_words', async () => {
  await runContract({
    changes: ['moderator'],
    act: (t) => ok(t.as(t.fx.moderator).post('/users/me/alert_words', { alert_words: ['ping'] })),
  });
  await runContract({
    changes: ['moderator'],
    setup: (t) =>
      ok(t.as(t.fx.moderator).post('/users/me/alert_words', { alert_words: ['a', 'b'] })),
    act: (t) => ok(t.as(t.fx.moderator).delete('/users/me/alert_words', { alert_words: ['A'] })),
  });
});
