// Event contract of PATCH /realm: names, scalar settings (with the older keys clients
// derive from them) and group-permission settings (with the user's own permissions).
import { test } from 'node:test';
import { listSystemGroups } from '../../src/store/user-groups.ts';
import type { TestApp } from '../support/app.ts';
import { ALL_VIEWERS, ok, runContract } from './harness.ts';

async function systemGroupId(t: TestApp, name: string): Promise<number> {
  const groups = await listSystemGroups(t.ctx.db, t.fx.realm.id);
  return groups.find((g) => g.name === name)!.id;
}

test('PATCH /realm: name and description', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    act: (t) =>
      ok(t.as(t.fx.admin).patch('/realm', { name: 'Renamed Org', description: 'Now *here*.' })),
  });
});

test('PATCH /realm: scalar settings and the keys derived from them', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    act: (t) =>
      ok(
        t.as(t.fx.owner).patch('/realm', {
          allow_message_editing: false,
          message_content_edit_limit_seconds: 3600,
          message_edit_history_visibility_policy: 'none',
          topics_policy: 'disable_empty_topic',
          waiting_period_threshold: 3,
          presence_disabled: true,
          default_language: 'fr',
        }),
      ),
  });
});

test('PATCH /realm: the empty-topic display name', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    act: (t) => ok(t.as(t.fx.admin).patch('/realm', { empty_topic_display_name: 'lobby' })),
  });
});

test('PATCH /realm: a system-group permission changes what members may do', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    act: async (t) =>
      ok(
        t.as(t.fx.admin).patch('/realm', {
          can_create_public_channel_group: { new: await systemGroupId(t, 'role:administrators') },
          can_add_subscribers_group: { new: await systemGroupId(t, 'role:moderators') },
        }),
      ),
  });
});

test('PATCH /realm: an anonymous-group permission naming one member', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    act: async (t) =>
      ok(
        t.as(t.fx.owner).patch('/realm', {
          can_invite_users_group: {
            new: {
              direct_members: [t.fx.member.id],
              direct_subgroups: [await systemGroupId(t, 'role:administrators')],
            },
          },
        }),
      ),
  });
});
