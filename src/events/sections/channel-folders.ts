// Register snapshot section of channel folders: all of them, archived ones included, in
// order.
import type { SnapshotSection } from '../initial-state.ts';
// The snapshot composes the folders area's read-only helper, as initial-state.ts does.
// eslint-disable-next-line no-restricted-imports
import { listChannelFolders } from '../../actions/channel-folders.ts';

export const CHANNEL_FOLDERS_SECTION: SnapshotSection = {
  include: (req) => req.fetch === null || req.fetch.includes('channel_folders'),
  build: async (ctx, req) => ({
    channel_folders: await listChannelFolders(ctx.db, req.actor.realm, true),
  }),
};
