// Event contract of the channel actions: each fixture user's snapshot with the action's
// events applied equals a fresh snapshot, and only the users who can see a change see one.
import { test } from 'node:test';
import { listSystemGroups } from '../../src/store/user-groups.ts';
import type { TestApp } from '../support/app.ts';
import { ok, runContract, type ViewerKey } from './harness.ts';

const ALL_BUT_GUEST: ViewerKey[] = ['owner', 'admin', 'moderator', 'member', 'member2', 'bot'];
const EVERYONE: ViewerKey[] = [...ALL_BUT_GUEST, 'guest'];

const group = async (t: TestApp, name: string): Promise<number> =>
  (await listSystemGroups(t.ctx.db, t.fx.realm.id)).find((g) => g.name === name)!.id;

test('PATCH /streams/{id}: renaming a channel everyone sees', async () => {
  await runContract({
    changes: EVERYONE,
    act: (t) =>
      ok(t.as(t.fx.admin).patch(`/streams/${t.fx.channels.general.id}`, { new_name: 'lobby' })),
  });
});

test('PATCH /streams/{id}: a public channel’s description', async () => {
  await runContract({
    changes: ALL_BUT_GUEST,
    act: (t) =>
      ok(
        t
          .as(t.fx.admin)
          .patch(`/streams/${t.fx.channels.design.id}`, { description: 'New **look**' }),
      ),
  });
});

test('PATCH /streams/{id}: a private channel becomes public', async () => {
  await runContract({
    changes: ALL_BUT_GUEST,
    act: (t) =>
      ok(t.as(t.fx.owner).patch(`/streams/${t.fx.channels.private.id}`, { is_private: false })),
  });
});

test('PATCH /streams/{id}: a public channel becomes private', async () => {
  await runContract({
    changes: ALL_BUT_GUEST,
    act: (t) =>
      ok(t.as(t.fx.admin).patch(`/streams/${t.fx.channels.design.id}`, { is_private: true })),
  });
});

test('PATCH /streams/{id}: who may post, with the legacy post policy', async () => {
  await runContract({
    changes: EVERYONE,
    act: async (t) =>
      ok(
        t.as(t.fx.owner).patch(`/streams/${t.fx.channels.general.id}`, {
          can_send_message_group: { new: await group(t, 'role:administrators') },
        }),
      ),
  });
});

test('PATCH /streams/{id}: a group setting lets a member see a private channel', async () => {
  await runContract({
    changes: ['owner', 'admin', 'moderator', 'member', 'member2'],
    act: (t) =>
      ok(
        t.as(t.fx.moderator).patch(`/streams/${t.fx.channels.secret.id}`, {
          can_add_subscribers_group: {
            new: { direct_members: [t.fx.member.id], direct_subgroups: [] },
          },
        }),
      ),
  });
});

test('PATCH /streams/{id}: retention and topics policy', async () => {
  await runContract({
    changes: ALL_BUT_GUEST,
    act: async (t) => {
      const url = `/streams/${t.fx.channels.design.id}`;
      await ok(t.as(t.fx.owner).patch(url, { message_retention_days: 30 }));
      await ok(
        t.as(t.fx.owner).patch(url, { topics_policy: 'disable_empty_topic', folder_id: null }),
      );
    },
  });
});

test('DELETE /streams/{id}: archiving', async () => {
  await runContract({
    changes: ALL_BUT_GUEST,
    act: (t) => ok(t.as(t.fx.admin).delete(`/streams/${t.fx.channels.design.id}`)),
  });
});

const renameArchived = {
  setup: (t: TestApp) => ok(t.as(t.fx.admin).delete(`/streams/${t.fx.channels.design.id}`)),
  act: (t: TestApp) =>
    ok(t.as(t.fx.admin).patch(`/streams/${t.fx.channels.design.id}`, { new_name: 'old design' })),
};

test('PATCH /streams/{id}: renaming an archived channel, for clients that show archived ones', async () => {
  await runContract({
    ...renameArchived,
    changes: ALL_BUT_GUEST,
    forms: ['modern', 'subscribers'],
  });
});

// For the others archiving was a deletion: they know no such channel, and hear nothing.
test('PATCH /streams/{id}: renaming an archived channel, for clients that do not', async () => {
  await runContract({ ...renameArchived, changes: [], forms: ['legacy'] });
});

test('PATCH /streams/{id}: unarchiving', async () => {
  await runContract({
    changes: ALL_BUT_GUEST,
    setup: (t) => ok(t.as(t.fx.admin).delete(`/streams/${t.fx.channels.design.id}`)),
    act: (t) =>
      ok(t.as(t.fx.admin).patch(`/streams/${t.fx.channels.design.id}`, { is_archived: false })),
  });
});

test('POST /users/me/subscriptions: joining a channel', async () => {
  await runContract({
    changes: ALL_BUT_GUEST,
    act: (t) =>
      ok(
        t.as(t.fx.member2).post('/users/me/subscriptions', { subscriptions: [{ name: 'design' }] }),
      ),
  });
});

test('POST /users/me/subscriptions: creating a private channel for others', async () => {
  await runContract({
    changes: ['owner', 'admin', 'member', 'member2'],
    act: (t) =>
      ok(
        t.as(t.fx.member).post('/users/me/subscriptions', {
          subscriptions: [{ name: 'plans' }],
          invite_only: true,
          principals: [t.fx.member2.id],
        }),
      ),
  });
});

test('POST /users/me/subscriptions: a new channel announced by the Notification Bot', async () => {
  await runContract({
    // Everyone sees the new channel and general's post; administrators also see the bot.
    changes: EVERYONE,
    setup: async (t) => {
      await ok(
        t
          .as(t.fx.admin)
          .patch('/realm', { new_stream_announcements_stream_id: t.fx.channels.general.id }),
      );
    },
    act: (t) =>
      ok(
        t.as(t.fx.member).post('/users/me/subscriptions', {
          subscriptions: [{ name: 'ideas' }],
          announce: true,
        }),
      ),
  });
});

test('DELETE /users/me/subscriptions: leaving a public channel', async () => {
  await runContract({
    changes: ALL_BUT_GUEST,
    act: (t) =>
      ok(t.as(t.fx.member).delete('/users/me/subscriptions', { subscriptions: ['design'] })),
  });
});

test('DELETE /users/me/subscriptions: leaving a private channel', async () => {
  await runContract({
    changes: ['owner', 'admin', 'member'],
    act: (t) =>
      ok(t.as(t.fx.member).delete('/users/me/subscriptions', { subscriptions: ['private'] })),
  });
});

test('POST /users/me/subscriptions/properties: muting and recoloring', async () => {
  await runContract({
    changes: ['member'],
    act: (t) =>
      ok(
        t.as(t.fx.member).post('/users/me/subscriptions/properties', {
          subscription_data: [
            { stream_id: t.fx.channels.general.id, property: 'is_muted', value: true },
            { stream_id: t.fx.channels.general.id, property: 'color', value: '#123456' },
            { stream_id: t.fx.channels.design.id, property: 'push_notifications', value: true },
          ],
        }),
      ),
  });
});

test('POST /default_streams and default channel groups', async () => {
  await runContract({
    changes: EVERYONE,
    act: async (t) => {
      await ok(t.as(t.fx.admin).post('/default_streams', { stream_id: t.fx.channels.design.id }));
      await ok(
        t.as(t.fx.admin).post('/default_stream_groups/create', {
          group_name: 'starters',
          description: 'Start here',
          stream_names: ['general', 'announce'],
        }),
      );
    },
  });
});
