// Subscriptions: the caller's list, subscribing and unsubscribing (oneself or others, creating
// missing channels on the way), and per-user subscription settings.
import { Type } from 'typebox';
import { getSubscriptionStatus, listSubscriptions } from '../../actions/channel-directory.ts';
import {
  subscribe,
  unsubscribe,
  updateSubscriptionProperties,
} from '../../actions/subscriptions.ts';
import type { GroupSettingValue } from '../../actions/group-settings.ts';
import { defineRoute } from '../route.ts';
import { UserIdPath } from '../schemas/common.ts';
import {
  ChannelNames,
  Principals,
  PropertyValue,
  StreamIdPath,
  SubscriptionRequests,
  groupSettingParams,
  pickGroupSettings,
} from '../schemas/channels.ts';

export const subscriptionsRoutes = [
  defineRoute({
    method: 'GET',
    url: '/users/me/subscriptions',
    summary: "Get the caller's subscriptions",
    tags: ['channels'],
    auth: 'user',
    params: Type.Object({
      include_subscribers: Type.Union([Type.Boolean(), Type.Literal('partial')], {
        default: false,
      }),
    }),
    handler: async ({ ctx, actor, params }) => ({
      subscriptions: await listSubscriptions(ctx, actor, params.include_subscribers),
    }),
  }),
  defineRoute({
    method: 'POST',
    url: '/users/me/subscriptions',
    summary: 'Subscribe users to channels, creating the channels that do not exist yet',
    tags: ['channels'],
    auth: 'user',
    params: Type.Object({
      subscriptions: SubscriptionRequests,
      principals: Type.Optional(Principals),
      authorization_errors_fatal: Type.Boolean({ default: true }),
      announce: Type.Boolean({ default: false }),
      invite_only: Type.Boolean({ default: false }),
      is_web_public: Type.Boolean({ default: false }),
      is_default_stream: Type.Boolean({ default: false }),
      history_public_to_subscribers: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
      message_retention_days: Type.Union([Type.Integer(), Type.String({ maxLength: 40 })], {
        default: 'realm_default',
      }),
      topics_policy: Type.Optional(Type.String({ maxLength: 100 })),
      folder_id: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
      ...groupSettingParams(false),
    }),
    handler: async ({ ctx, actor, params }) =>
      ({
        ...(await subscribe(ctx, actor, {
          ...params,
          groupSettings: pickGroupSettings<GroupSettingValue>(params),
        })),
      }) as Record<string, unknown>,
  }),
  defineRoute({
    method: 'DELETE',
    url: '/users/me/subscriptions',
    summary: 'Unsubscribe users from channels',
    tags: ['channels'],
    auth: 'user',
    params: Type.Object({
      subscriptions: ChannelNames,
      principals: Type.Optional(Principals),
    }),
    handler: async ({ ctx, actor, params }) =>
      unsubscribe(ctx, actor, params.subscriptions, params.principals),
  }),
  defineRoute({
    method: 'POST',
    url: '/users/me/subscriptions/properties',
    summary: "Change the caller's settings for channels they are subscribed to",
    tags: ['channels'],
    auth: 'user',
    params: Type.Object({
      subscription_data: Type.Array(
        Type.Object(
          {
            stream_id: Type.Integer(),
            property: Type.String({ maxLength: 100 }),
            value: PropertyValue,
          },
          { additionalProperties: false },
        ),
        { maxItems: 1000 },
      ),
    }),
    handler: async ({ ctx, actor, params }) => {
      await updateSubscriptionProperties(ctx, actor, params.subscription_data);
      return {};
    },
  }),
  defineRoute({
    method: 'PATCH',
    url: '/users/me/subscriptions/:stream_id',
    summary: "Change one of the caller's settings for a channel they are subscribed to",
    tags: ['channels'],
    auth: 'user',
    path: StreamIdPath,
    params: Type.Object({ property: Type.String({ maxLength: 100 }), value: PropertyValue }),
    handler: async ({ ctx, actor, path, params }) => {
      await updateSubscriptionProperties(ctx, actor, [
        { stream_id: path.stream_id as number, property: params.property, value: params.value },
      ]);
      return {};
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/users/:user_id/subscriptions/:stream_id',
    summary: 'Whether a user is subscribed to a channel',
    tags: ['channels'],
    auth: 'user',
    path: Type.Object({ ...UserIdPath.properties, ...StreamIdPath.properties }),
    handler: async ({ ctx, actor, path }) => ({
      is_subscribed: await getSubscriptionStatus(
        ctx,
        actor,
        path.user_id as number,
        path.stream_id as number,
      ),
    }),
  }),
];
