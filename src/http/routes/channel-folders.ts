// Channel folders: listed by anyone, managed by administrators.
import { Type } from 'typebox';
import {
  createChannelFolder,
  listChannelFolders,
  reorderChannelFolders,
  updateChannelFolder,
} from '../../actions/channel-folders.ts';
import {
  MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH,
  MAX_CHANNEL_FOLDER_NAME_LENGTH,
} from '../../lib/server-limits.ts';
import { defineRoute } from '../route.ts';

const Name = () => Type.String({ maxLength: MAX_CHANNEL_FOLDER_NAME_LENGTH });
const Description = () => Type.String({ maxLength: MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH });
const FolderId = () => Type.Integer({ minimum: 0, maximum: 2147483647 });

export const channelFoldersRoutes = [
  defineRoute({
    method: 'POST',
    url: '/channel_folders/create',
    summary: 'Create a channel folder (administrators)',
    tags: ['channels'],
    auth: 'user',
    params: Type.Object({ name: Name(), description: Description() }),
    handler: async ({ ctx, actor, params }) => ({
      channel_folder_id: await createChannelFolder(ctx, actor, params),
    }),
  }),
  defineRoute({
    method: 'GET',
    url: '/channel_folders',
    summary: "The organization's channel folders, in order",
    tags: ['channels'],
    auth: 'user',
    params: Type.Object({ include_archived: Type.Optional(Type.Boolean()) }),
    handler: async ({ ctx, actor, params }) => ({
      channel_folders: await listChannelFolders(
        ctx.db,
        actor.realm,
        params.include_archived ?? false,
      ),
    }),
  }),
  defineRoute({
    method: 'PATCH',
    url: '/channel_folders',
    summary: 'Reorder the channel folders (administrators); the list names every folder',
    tags: ['channels'],
    auth: 'user',
    params: Type.Object({ order: Type.Array(FolderId(), { maxItems: 10000 }) }),
    handler: async ({ ctx, actor, params }) => {
      await reorderChannelFolders(ctx, actor, params.order);
      return {};
    },
  }),
  defineRoute({
    method: 'PATCH',
    url: '/channel_folders/:channel_folder_id',
    summary: 'Rename, describe, archive or unarchive a channel folder (administrators)',
    tags: ['channels'],
    auth: 'user',
    path: Type.Object({ channel_folder_id: FolderId() }),
    params: Type.Object({
      name: Type.Optional(Name()),
      description: Type.Optional(Description()),
      is_archived: Type.Optional(Type.Boolean()),
    }),
    handler: async ({ ctx, actor, path, params }) => {
      await updateChannelFolder(ctx, actor, path.channel_folder_id as number, params);
      return {};
    },
  }),
];
