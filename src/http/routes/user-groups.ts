// User groups: listed by anyone; created, edited and (de)populated as each group's own
// settings allow.
import { Type } from 'typebox';
import {
  createUserGroup,
  deactivateUserGroup,
  isUserGroupMember,
  listUserGroupMembers,
  listUserGroups,
  listUserGroupSubgroups,
  updateUserGroup,
  updateUserGroupMembers,
} from '../../actions/user-groups.ts';
import { GroupSettingUpdate, GroupSettingValue } from '../schemas/common.ts';
import { defineRoute } from '../route.ts';

const Id = () => Type.Integer({ minimum: 0, maximum: 2147483647 });
const Ids = () => Type.Array(Id(), { maxItems: 10000 });
const GroupPath = Type.Object({ user_group_id: Id() });
const setting = <T extends typeof GroupSettingValue | typeof GroupSettingUpdate>(schema: T) => ({
  can_add_members_group: Type.Optional(schema),
  can_join_group: Type.Optional(schema),
  can_leave_group: Type.Optional(schema),
  can_manage_group: Type.Optional(schema),
  can_mention_group: Type.Optional(schema),
  can_remove_members_group: Type.Optional(schema),
});
const MembershipChanges = {
  add: Type.Optional(Ids()),
  delete: Type.Optional(Ids()),
};

export const userGroupsRoutes = [
  defineRoute({
    method: 'GET',
    url: '/user_groups',
    summary: "The organization's user groups",
    tags: ['users'],
    auth: 'user',
    params: Type.Object({ include_deactivated_groups: Type.Optional(Type.Boolean()) }),
    handler: async ({ ctx, actor, params }) => ({
      user_groups: await listUserGroups(
        ctx.db,
        actor.realm,
        params.include_deactivated_groups ?? false,
      ),
    }),
  }),
  defineRoute({
    method: 'POST',
    url: '/user_groups/create',
    summary: 'Create a user group',
    tags: ['users'],
    auth: 'user',
    params: Type.Object({
      name: Type.String(),
      description: Type.String(),
      members: Ids(),
      subgroups: Type.Optional(Ids()),
      ...setting(GroupSettingValue),
    }),
    handler: async ({ ctx, actor, params }) => ({
      group_id: await createUserGroup(ctx, actor, params),
    }),
  }),
  defineRoute({
    method: 'PATCH',
    url: '/user_groups/:user_group_id',
    summary: 'Rename, describe or change the settings of a user group (settings as {new, old})',
    tags: ['users'],
    auth: 'user',
    path: GroupPath,
    params: Type.Object({
      name: Type.Optional(Type.String()),
      description: Type.Optional(Type.String()),
      ...setting(GroupSettingUpdate),
    }),
    handler: async ({ ctx, actor, path, params }) => {
      await updateUserGroup(ctx, actor, path.user_group_id as number, params);
      return {};
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/user_groups/:user_group_id/members',
    summary: 'Add or remove members (and subgroups) of a user group',
    tags: ['users'],
    auth: 'user',
    path: GroupPath,
    params: Type.Object({
      ...MembershipChanges,
      add_subgroups: Type.Optional(Ids()),
      delete_subgroups: Type.Optional(Ids()),
    }),
    handler: async ({ ctx, actor, path, params }) => {
      await updateUserGroupMembers(ctx, actor, path.user_group_id as number, params);
      return {};
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/user_groups/:user_group_id/members',
    summary: 'Members of a user group',
    tags: ['users'],
    auth: 'user',
    path: GroupPath,
    params: Type.Object({ direct_member_only: Type.Optional(Type.Boolean()) }),
    handler: async ({ ctx, actor, path, params }) => ({
      members: await listUserGroupMembers(
        ctx,
        actor,
        path.user_group_id as number,
        params.direct_member_only ?? false,
      ),
    }),
  }),
  defineRoute({
    method: 'GET',
    url: '/user_groups/:user_group_id/members/:user_id',
    summary: 'Whether a user is a member of a user group',
    tags: ['users'],
    auth: 'user',
    path: Type.Object({ user_group_id: Id(), user_id: Id() }),
    params: Type.Object({ direct_member_only: Type.Optional(Type.Boolean()) }),
    handler: async ({ ctx, actor, path, params }) => ({
      is_user_group_member: await isUserGroupMember(
        ctx,
        actor,
        path.user_group_id as number,
        path.user_id as number,
        params.direct_member_only ?? false,
      ),
    }),
  }),
  defineRoute({
    method: 'POST',
    url: '/user_groups/:user_group_id/subgroups',
    summary: 'Add or remove subgroups of a user group',
    tags: ['users'],
    auth: 'user',
    path: GroupPath,
    params: Type.Object(MembershipChanges),
    handler: async ({ ctx, actor, path, params }) => {
      await updateUserGroupMembers(ctx, actor, path.user_group_id as number, {
        add_subgroups: params.add,
        delete_subgroups: params.delete,
      });
      return {};
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/user_groups/:user_group_id/subgroups',
    summary: 'Subgroups of a user group',
    tags: ['users'],
    auth: 'user',
    path: GroupPath,
    params: Type.Object({ direct_subgroup_only: Type.Optional(Type.Boolean()) }),
    handler: async ({ ctx, actor, path, params }) => ({
      subgroups: await listUserGroupSubgroups(
        ctx,
        actor,
        path.user_group_id as number,
        params.direct_subgroup_only ?? false,
      ),
    }),
  }),
  defineRoute({
    method: 'POST',
    url: '/user_groups/:user_group_id/deactivate',
    summary: 'Deactivate a user group nothing uses',
    tags: ['users'],
    auth: 'user',
    path: GroupPath,
    params: Type.Object({}),
    handler: async ({ ctx, actor, path }) => {
      await deactivateUserGroup(ctx, actor, path.user_group_id as number);
      return {};
    },
  }),
];
