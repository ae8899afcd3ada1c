// The caller's push registration tokens (stored; Parley has no push service).
import { Type } from 'typebox';
import { addPushToken, removePushToken } from '../../actions/push-tokens.ts';
import { defineRoute } from '../route.ts';

// Longer tokens get the action's own error, as the reference server answers.
const Token = () => Type.String();

export const pushTokensRoutes = [
  defineRoute({
    method: 'POST',
    url: '/users/me/android_gcm_reg_id',
    summary: 'Register an Android push token (deprecated)',
    tags: ['users'],
    auth: 'user',
    params: Type.Object({ token: Token() }),
    handler: async ({ ctx, actor, params }) => {
      await addPushToken(ctx, actor, 'gcm', params.token, null);
      return {};
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/users/me/android_gcm_reg_id',
    summary: 'Remove an Android push token',
    tags: ['users'],
    auth: 'user',
    params: Type.Object({ token: Token() }),
    handler: async ({ ctx, actor, params }) => {
      await removePushToken(ctx, actor, 'gcm', params.token);
      return {};
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/users/me/apns_device_token',
    summary: 'Register an iOS push token',
    tags: ['users'],
    auth: 'user',
    params: Type.Object({ token: Token(), appid: Type.String() }),
    handler: async ({ ctx, actor, params }) => {
      await addPushToken(ctx, actor, 'apns', params.token, params.appid);
      return {};
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/users/me/apns_device_token',
    summary: 'Remove an iOS push token',
    tags: ['users'],
    auth: 'user',
    params: Type.Object({ token: Token() }),
    handler: async ({ ctx, actor, params }) => {
      await removePushToken(ctx, actor, 'apns', params.token);
      return {};
    },
  }),
];
