// Users: listing, profiles, creation, role and name changes, deactivation.
import { Type } from 'typebox';
import * as users from '../../actions/users.ts';
import * as activation from '../../actions/user-activation.ts';
import { presentOwnUser, presentUsersFor, presentUserFor } from '../../actions/user-directory.ts';
import { ROLES } from '../../lib/roles.ts';
import { defineRoute } from '../route.ts';
import { ClientGravatar, IncludeCustomProfileFields, UserIdPath } from '../schemas/common.ts';

const ListOptions = Type.Object({
  client_gravatar: ClientGravatar,
  include_custom_profile_fields: IncludeCustomProfileFields,
});

export const usersRoutes = [
  defineRoute({
    method: 'GET',
    url: '/users',
    summary: 'Get all users of the organization, including bots and deactivated users',
    tags: ['users'],
    auth: 'user',
    params: Type.Object({
      client_gravatar: ClientGravatar,
      include_custom_profile_fields: IncludeCustomProfileFields,
      user_ids: Type.Optional(Type.Array(Type.Integer(), { maxItems: 10000 })),
    }),
    handler: async ({ ctx, actor, params }) => ({
      members: await presentUsersFor(ctx, actor, {
        clientGravatar: params.client_gravatar,
        includeProfileData: params.include_custom_profile_fields,
        userIds: params.user_ids,
      }),
    }),
  }),
  defineRoute({
    method: 'GET',
    url: '/users/me',
    summary: "Get the caller's own user object",
    tags: ['users'],
    auth: 'user',
    keepsAnswer: true,
    handler: async ({ ctx, actor }) => presentOwnUser(ctx, actor),
  }),
  defineRoute({
    method: 'GET',
    url: '/users/:user_id_or_email',
    summary: 'Get a user by id or by email',
    tags: ['users'],
    auth: 'user',
    path: Type.Object({ user_id_or_email: Type.String({ minLength: 1, maxLength: 254 }) }),
    params: ListOptions,
    handler: async ({ ctx, actor, path, params }) => {
      const key = path.user_id_or_email as string;
      const target = /^\d+$/.test(key)
        ? await users.accessUserById(ctx, actor, Number(key))
        : await users.accessUserByEmail(ctx, actor, key);
      return {
        user: await presentUserFor(ctx, actor, target, {
          clientGravatar: params.client_gravatar,
          includeProfileData: params.include_custom_profile_fields,
        }),
      };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/users',
    summary: 'Create a user (administrators)',
    tags: ['users'],
    auth: 'user',
    params: Type.Object({
      email: Type.String({ maxLength: 254 }),
      // Bound the request only; the name and password checks word their own errors.
      password: Type.String({ maxLength: 1000 }),
      full_name: Type.String({ maxLength: 1000 }),
    }),
    handler: async ({ ctx, actor, params }) => ({
      user_id: (await users.createUserByAdmin(ctx, actor, params)).id,
    }),
  }),
  defineRoute({
    method: 'PATCH',
    url: '/users/:user_id',
    summary:
      "Change a user's name, role or custom profile data (administrators; owners for owner changes)",
    tags: ['users'],
    auth: 'user',
    path: UserIdPath,
    params: Type.Object({
      // Bounds the request only; longer names get the name check's own message.
      full_name: Type.Optional(Type.String({ maxLength: 1000 })),
      role: Type.Optional(Type.Union(ROLES.map((r) => Type.Literal(r)))),
      profile_data: Type.Optional(
        Type.Array(
          Type.Object({
            id: Type.Integer({ minimum: 0, maximum: 2147483647 }),
            value: Type.Unknown(),
          }),
          {
            maxItems: 1000,
          },
        ),
      ),
    }),
    handler: async ({ ctx, actor, path, params }) => {
      await users.updateUserByAdmin(ctx, actor, path.user_id as number, params);
      return {};
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/users/me',
    summary: "Deactivate the caller's own account",
    tags: ['users'],
    auth: 'user',
    handler: async ({ ctx, actor }) => {
      await activation.deactivateSelf(ctx, actor);
      return {};
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/users/:user_id',
    summary: 'Deactivate a user (administrators; owners for owners)',
    tags: ['users'],
    auth: 'user',
    path: UserIdPath,
    params: Type.Object({
      deactivation_notification_comment: Type.Optional(Type.String({ maxLength: 2000 })),
    }),
    handler: async ({ ctx, actor, path }) => {
      await activation.deactivateUser(ctx, actor, path.user_id as number);
      return {};
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/users/:user_id/reactivate',
    summary: 'Reactivate a deactivated user (administrators)',
    tags: ['users'],
    auth: 'user',
    path: UserIdPath,
    handler: async ({ ctx, actor, path }) => {
      await activation.reactivateUser(ctx, actor, path.user_id as number);
      return {};
    },
  }),
];
