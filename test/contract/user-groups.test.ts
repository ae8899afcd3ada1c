// Event contract of user groups: every user_group op reaches everyone and turns each
// viewer's realm_user_groups into a fresh snapshot's (deactivation as an update for
// clients with include_deactivated_groups, as a removal for the others), and deactivated
// users leave and rejoin groups with their account.
import { test } from 'node:test';
import type { TestApp } from '../support/app.ts';
import { systemGroups } from '../support/channels.ts';
import { createGroup } from '../support/user-groups.ts';
import { ALL_VIEWERS, ok, runContract, type ViewerKey } from './harness.ts';

async function groupId(t: TestApp, name: string): Promise<number> {
  const row = await t.ctx.db
    .selectFrom('user_groups')
    .select('id')
    .where('name', '=', name)
    .where('realm_id', '=', t.fx.realm.id)
    .executeTakeFirstOrThrow();
  return row.id;
}

const withTeam = async (t: TestApp): Promise<void> => {
  const sub = await createGroup(t, t.fx.member, 'sub', { members: [t.fx.moderator.id] });
  await createGroup(t, t.fx.member, 'team', { members: [t.fx.member2.id], subgroups: [sub] });
};

test('POST /user_groups/create: the new group reaches everyone', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    setup: withTeam,
    act: async (t) =>
      ok(
        t.as(t.fx.member).post('/user_groups/create', {
          name: 'new',
          description: 'd',
          members: [t.fx.guest.id, t.fx.member.id],
          subgroups: [await groupId(t, 'team')],
          can_join_group: { direct_members: [t.fx.bot.id], direct_subgroups: [] },
        }),
      ),
  });
});

test('PATCH /user_groups/{id}: name, description and settings reach everyone', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    setup: withTeam,
    act: async (t) => {
      const g = await systemGroups(t);
      await ok(
        t.as(t.fx.member).patch(`/user_groups/${await groupId(t, 'team')}`, {
          name: 'crew',
          description: 'new',
          can_mention_group: { new: g['role:members'] },
          can_manage_group: { new: { direct_members: [t.fx.admin.id], direct_subgroups: [] } },
        }),
      );
    },
  });
});

test('POST /user_groups/{id}/members: members and subgroups added and removed', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    setup: withTeam,
    act: async (t) => {
      const team = await groupId(t, 'team');
      const sub = await groupId(t, 'sub');
      await ok(
        t.as(t.fx.member).post(`/user_groups/${team}/members`, {
          add: [t.fx.guest.id],
          delete: [t.fx.member2.id],
          delete_subgroups: [sub],
        }),
      );
      await ok(t.as(t.fx.member).post(`/user_groups/${sub}/subgroups`, { add: [team] }));
    },
  });
});

test('POST /user_groups/{id}/deactivate: an update or a removal, by capability', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    setup: withTeam,
    act: async (t) =>
      ok(t.as(t.fx.member).post(`/user_groups/${await groupId(t, 'team')}/deactivate`)),
  });
});

const othersThanMember2: ViewerKey[] = ALL_VIEWERS.filter((v) => v !== 'member2');

test('deactivating a user hides them from their groups', async () => {
  await runContract({
    viewers: othersThanMember2,
    changes: othersThanMember2,
    setup: withTeam,
    act: (t) => ok(t.as(t.fx.admin).delete(`/users/${t.fx.member2.id}`)),
  });
});

test('reactivating a user shows them in their groups again', async () => {
  await runContract({
    viewers: othersThanMember2,
    changes: othersThanMember2,
    setup: async (t) => {
      await withTeam(t);
      await ok(t.as(t.fx.admin).delete(`/users/${t.fx.member2.id}`));
    },
    act: (t) => ok(t.as(t.fx.admin).post(`/users/${t.fx.member2.id}/reactivate`)),
  });
});
