// Bots: creation, listing, changes, deactivation, API keys and configuration files.
import { Type } from 'typebox';
import * as bots from '../../actions/bots.ts';
import { ROLES } from '../../lib/roles.ts';
import { defineRoute, type RawReply } from '../route.ts';

const BotIdPath = Type.Object({
  bot_id: Type.Integer({ minimum: 1, maximum: 2147483647 }),
});

/** Embedded bots' configuration: string keys to string values. */
const ConfigData = Type.Unsafe<Record<string, string>>(
  Type.Object({}, { additionalProperties: Type.String({ maxLength: 10000 }) }),
);
const PayloadUrl = Type.String({ maxLength: 2000 });
const ChannelName = Type.String({ maxLength: 200 });

export const botsRoutes = [
  defineRoute({
    method: 'GET',
    url: '/bots',
    summary: 'The bots the caller may manage: their own, or every bot for administrators',
    tags: ['bots'],
    auth: 'user',
    handler: async ({ ctx, actor }) => ({ bots: await bots.getBots(ctx, actor) }),
  }),
  defineRoute({
    method: 'POST',
    url: '/bots',
    summary: 'Create a bot owned by the caller',
    tags: ['bots'],
    auth: 'user',
    params: Type.Object({
      full_name: Type.String({ maxLength: 200 }),
      short_name: Type.String({ maxLength: 100 }),
      bot_type: Type.Integer({ default: 1 }),
      payload_url: Type.Optional(PayloadUrl),
      interface_type: Type.Integer({ default: 1 }),
      service_name: Type.Optional(Type.String({ maxLength: 100 })),
      config_data: Type.Optional(ConfigData),
      default_sending_stream: Type.Optional(ChannelName),
      default_events_register_stream: Type.Optional(ChannelName),
      default_all_public_streams: Type.Boolean({ default: false }),
    }),
    handler: async ({ ctx, actor, params }) => bots.createBot(ctx, actor, params),
  }),
  defineRoute({
    method: 'PATCH',
    url: '/bots/:bot_id',
    summary: "Change a bot's name, role, owner, defaults or service (owner or administrators)",
    tags: ['bots'],
    auth: 'user',
    path: BotIdPath,
    params: Type.Object({
      full_name: Type.Optional(Type.String({ maxLength: 200 })),
      role: Type.Optional(Type.Union(ROLES.map((r) => Type.Literal(r)))),
      bot_owner_id: Type.Optional(Type.Integer()),
      service_payload_url: Type.Optional(PayloadUrl),
      service_interface: Type.Optional(Type.Integer()),
      config_data: Type.Optional(ConfigData),
      default_sending_stream: Type.Optional(ChannelName),
      default_events_register_stream: Type.Optional(ChannelName),
      default_all_public_streams: Type.Optional(Type.Boolean()),
    }),
    handler: async ({ ctx, actor, path, params }) =>
      bots.updateBot(ctx, actor, path.bot_id as number, params),
  }),
  defineRoute({
    method: 'DELETE',
    url: '/bots/:bot_id',
    summary: 'Deactivate a bot (owner or administrators)',
    tags: ['bots'],
    auth: 'user',
    path: BotIdPath,
    handler: async ({ ctx, actor, path }) => {
      await bots.deactivateBot(ctx, actor, path.bot_id as number);
      return {};
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/bots/:bot_id/api_key/regenerate',
    summary: "Replace a bot's API key (owner or administrators)",
    tags: ['bots'],
    auth: 'user',
    path: BotIdPath,
    handler: async ({ ctx, actor, path }) => ({
      api_key: await bots.regenerateBotApiKey(ctx, actor, path.bot_id as number),
    }),
  }),
  defineRoute({
    method: 'GET',
    url: '/bots/:bot_id/config',
    summary:
      "Download the bot's client configuration file: API email, key and site, and the " +
      'outgoing webhook token (owner or administrators)',
    tags: ['bots'],
    auth: 'user',
    path: BotIdPath,
    handler: async ({ ctx, actor, path }): Promise<RawReply> => {
      const file = await bots.getBotConfigFile(ctx, actor, path.bot_id as number);
      return {
        raw: true,
        contentType: 'text/plain; charset=utf-8',
        headers: { 'content-disposition': `attachment; filename="${file.filename}"` },
        body: file.content,
      };
    },
  }),
];
