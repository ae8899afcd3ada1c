// The caller's muted users (listed only by /register).
import { Type } from 'typebox';
import { muteUser, unmuteUser } from '../../actions/muted-users.ts';
import { defineRoute } from '../route.ts';

const MutedUserPath = Type.Object({
  muted_user_id: Type.Integer({ minimum: 0, maximum: 2147483647 }),
});

export const mutedUsersRoutes = [
  defineRoute({
    method: 'POST',
    url: '/users/me/muted_users/:muted_user_id',
    summary: 'Mute a user; their existing messages become read',
    tags: ['users'],
    auth: 'user',
    path: MutedUserPath,
    handler: async ({ ctx, actor, path }) => {
      await muteUser(ctx, actor, path.muted_user_id as number);
      return {};
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/users/me/muted_users/:muted_user_id',
    summary: 'Unmute a user',
    tags: ['users'],
    auth: 'user',
    path: MutedUserPath,
    handler: async ({ ctx, actor, path }) => {
      await unmuteUser(ctx, actor, path.muted_user_id as number);
      return {};
    },
  }),
];
