// Presence: reporting one's own status and reading everyone's.
import { Type } from 'typebox';
import { doUpdatePresence, fetchRealmPresence, fetchUserPresence } from '../../actions/presence.ts';
import { defineRoute } from '../route.ts';

export const presenceRoutes = [
  defineRoute({
    method: 'POST',
    url: '/users/me/presence',
    summary: 'Update your presence and fetch the presence of others',
    tags: ['users'],
    auth: 'user',
    params: Type.Object({
      // Checked by the action, which names the bad value.
      status: Type.String({ maxLength: 100 }),
      last_update_id: Type.Optional(Type.Integer({ minimum: -1, maximum: 2147483647 })),
      history_limit_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 36500 })),
      ping_only: Type.Optional(Type.Boolean({ default: false })),
      new_user_input: Type.Optional(Type.Boolean({ default: false })),
      slim_presence: Type.Optional(Type.Boolean({ default: false })),
    }),
    handler: async ({ ctx, actor, params }) =>
      doUpdatePresence(ctx, actor, {
        status: params.status,
        lastUpdateId: params.last_update_id,
        historyLimitDays: params.history_limit_days,
        pingOnly: params.ping_only,
        newUserInput: params.new_user_input,
        slimPresence: params.slim_presence,
      }),
  }),
  defineRoute({
    method: 'GET',
    url: '/users/:user_id_or_email/presence',
    summary: "Get a user's presence",
    tags: ['users'],
    auth: 'user',
    path: Type.Object({ user_id_or_email: Type.String({ maxLength: 254 }) }),
    handler: async ({ ctx, actor, path }) =>
      fetchUserPresence(ctx, actor, path.user_id_or_email as string),
  }),
  defineRoute({
    method: 'GET',
    url: '/realm/presence',
    summary: 'Get the presence of all users',
    tags: ['server_and_organizations'],
    auth: 'user',
    handler: async ({ ctx, actor }) => fetchRealmPresence(ctx, actor),
  }),
];
