// Channels: listing and lookup, settings, archiving, default channels and default channel groups.
import { Type } from 'typebox';
import {
  archiveChannel,
  updateChannel,
  type GroupSettingUpdate,
} from '../../actions/channel-admin.ts';
import {
  getStream,
  getStreamId,
  getStreams,
  getSubscribers,
} from '../../actions/channel-directory.ts';
import {
  addDefaultChannel,
  createDefaultChannelGroup,
  removeDefaultChannel,
  removeDefaultChannelGroup,
  updateDefaultChannelGroup,
  updateDefaultChannelGroupChannels,
} from '../../actions/default-channels.ts';
import { MAX_CHANNEL_DESCRIPTION_LENGTH } from '../../lib/channel-settings.ts';
import { defineRoute } from '../route.ts';
import {
  ChannelNames,
  GroupIdPath,
  MessageRetentionDays,
  StreamIdPath,
  groupSettingParams,
  pickGroupSettings,
} from '../schemas/channels.ts';

const flag = (value: boolean) => Type.Boolean({ default: value });

export const channelsRoutes = [
  defineRoute({
    method: 'GET',
    url: '/streams',
    summary: 'Get the channels the caller can see, by the sources the filters name',
    tags: ['channels'],
    auth: 'user',
    params: Type.Object({
      include_public: flag(true),
      include_web_public: flag(false),
      include_subscribed: flag(true),
      exclude_archived: flag(true),
      include_all: flag(false),
      include_all_active: flag(false),
      include_default: flag(false),
      include_owner_subscribed: flag(false),
      include_can_access_content: flag(false),
    }),
    handler: async ({ ctx, actor, params }) => ({
      streams: await getStreams(ctx, actor, params),
    }),
  }),
  defineRoute({
    method: 'GET',
    url: '/streams/:stream_id',
    summary: 'Get a channel by id',
    tags: ['channels'],
    auth: 'user',
    path: StreamIdPath,
    handler: async ({ ctx, actor, path }) => ({
      stream: await getStream(ctx, actor, path.stream_id as number),
    }),
  }),
  defineRoute({
    method: 'GET',
    url: '/streams/:stream_id/members',
    summary: "Get a channel's subscribers",
    tags: ['channels'],
    auth: 'user',
    path: StreamIdPath,
    handler: async ({ ctx, actor, path }) => ({
      subscribers: await getSubscribers(ctx, actor, path.stream_id as number),
    }),
  }),
  defineRoute({
    method: 'GET',
    url: '/get_stream_id',
    summary: "Get a channel's id from its name",
    tags: ['channels'],
    auth: 'user',
    params: Type.Object({ stream: Type.String({ maxLength: 1000 }) }),
    handler: async ({ ctx, actor, params }) => ({
      stream_id: await getStreamId(ctx, actor, params.stream),
    }),
  }),
  defineRoute({
    method: 'PATCH',
    url: '/streams/:stream_id',
    summary: "Change a channel's name, description, privacy, policies or permissions; unarchive it",
    tags: ['channels'],
    auth: 'user',
    path: StreamIdPath,
    params: Type.Object({
      description: Type.Optional(Type.String({ maxLength: MAX_CHANNEL_DESCRIPTION_LENGTH })),
      new_name: Type.Optional(Type.String({ maxLength: 1000 })),
      is_private: Type.Optional(Type.Boolean()),
      is_web_public: Type.Optional(Type.Boolean()),
      history_public_to_subscribers: Type.Optional(Type.Boolean()),
      is_default_stream: Type.Optional(Type.Boolean()),
      message_retention_days: Type.Optional(MessageRetentionDays),
      is_archived: Type.Optional(Type.Boolean()),
      topics_policy: Type.Optional(Type.String({ maxLength: 100 })),
      folder_id: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
      ...groupSettingParams(true),
    }),
    handler: async ({ ctx, actor, path, params }) => {
      await updateChannel(ctx, actor, path.stream_id as number, {
        ...params,
        groupSettings: pickGroupSettings<GroupSettingUpdate>(params),
      });
      return {};
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/streams/:stream_id',
    summary: 'Archive a channel',
    tags: ['channels'],
    auth: 'user',
    path: StreamIdPath,
    handler: async ({ ctx, actor, path }) => {
      await archiveChannel(ctx, actor, path.stream_id as number);
      return {};
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/default_streams',
    summary: 'Make a channel a default channel for new users (administrators)',
    tags: ['channels'],
    auth: 'user',
    params: Type.Object({ stream_id: Type.Integer() }),
    handler: async ({ ctx, actor, params }) => {
      await addDefaultChannel(ctx, actor, params.stream_id);
      return {};
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/default_streams',
    summary: 'Stop a channel being a default channel (administrators)',
    tags: ['channels'],
    auth: 'user',
    params: Type.Object({ stream_id: Type.Integer() }),
    handler: async ({ ctx, actor, params }) => {
      await removeDefaultChannel(ctx, actor, params.stream_id);
      return {};
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/default_stream_groups/create',
    summary: 'Create a default channel group (administrators)',
    tags: ['channels'],
    auth: 'user',
    params: Type.Object({
      group_name: Type.String({ maxLength: 1000 }),
      description: Type.String({ maxLength: 10000 }),
      stream_names: ChannelNames,
    }),
    handler: async ({ ctx, actor, params }) => {
      await createDefaultChannelGroup(ctx, actor, params);
      return {};
    },
  }),
  defineRoute({
    method: 'PATCH',
    url: '/default_stream_groups/:group_id',
    summary: 'Rename a default channel group or change its description (administrators)',
    tags: ['channels'],
    auth: 'user',
    path: GroupIdPath,
    params: Type.Object({
      new_group_name: Type.Optional(Type.String({ maxLength: 1000 })),
      new_description: Type.Optional(Type.String({ maxLength: 10000 })),
    }),
    handler: async ({ ctx, actor, path, params }) => {
      await updateDefaultChannelGroup(ctx, actor, path.group_id as number, params);
      return {};
    },
  }),
  defineRoute({
    method: 'PATCH',
    url: '/default_stream_groups/:group_id/streams',
    summary: 'Add channels to or remove them from a default channel group (administrators)',
    tags: ['channels'],
    auth: 'user',
    path: GroupIdPath,
    params: Type.Object({ op: Type.String({ maxLength: 100 }), stream_names: ChannelNames }),
    handler: async ({ ctx, actor, path, params }) => {
      await updateDefaultChannelGroupChannels(ctx, actor, path.group_id as number, params);
      return {};
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/default_stream_groups/:group_id',
    summary: 'Delete a default channel group (administrators)',
    tags: ['channels'],
    auth: 'user',
    path: GroupIdPath,
    handler: async ({ ctx, actor, path }) => {
      await removeDefaultChannelGroup(ctx, actor, path.group_id as number);
      return {};
    },
  }),
];
