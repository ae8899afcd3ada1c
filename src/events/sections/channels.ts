// Register snapshot sections of the channels area: subscriptions, the channels the user can
// see, and the default channels and default channel groups. Each is built from the same
// read helpers the HTTP routes use, so a snapshot and a fresh GET agree.
import type { AppContext } from '../../context.ts';
import type { SnapshotRequest, SnapshotSection } from '../initial-state.ts';
// The snapshot composes the channels area's read-only helpers, as initial-state.ts does.
// eslint-disable-next-line no-restricted-imports
import { gatherSubscriptions } from '../../actions/channel-directory.ts';
// eslint-disable-next-line no-restricted-imports
import { listChannelAccess } from '../../actions/channel-access.ts';
// eslint-disable-next-line no-restricted-imports
import { presentChannelRows } from '../../actions/channels.ts';
// eslint-disable-next-line no-restricted-imports
import { listDefaultChannelGroups, listDefaultChannels } from '../../actions/default-channels.ts';

const wants =
  (type: string) =>
  (req: SnapshotRequest): boolean =>
    req.fetch === null || req.fetch.includes(type);

/** subscriptions, unsubscribed, never_subscribed. */
async function subscriptionSection(
  ctx: AppContext,
  req: SnapshotRequest,
): Promise<Record<string, unknown>> {
  const { capabilities } = req.client;
  return {
    ...(await gatherSubscriptions(ctx.db, req.actor.realm, req.actor.user, {
      includeSubscribers: req.includeSubscribers,
      notificationSettingsNull: capabilities.notification_settings_null,
      // Without the capability, archived channels are gone as far as the client knows.
      includeArchived: capabilities.archived_channels,
    })),
  };
}

/** streams: every channel the user may know exists, by name. */
async function streamSection(
  ctx: AppContext,
  req: SnapshotRequest,
): Promise<Record<string, unknown>> {
  const { realm, user } = req.actor;
  const archived = req.client.capabilities.archived_channels;
  const channels = (await listChannelAccess(ctx.db, realm, user))
    .filter((a) => a.metadata && (archived || a.channel.is_archived === 0))
    .map((a) => a.channel)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { streams: await presentChannelRows(ctx.db, realm.id, channels) };
}

export const CHANNEL_SECTIONS: SnapshotSection[] = [
  { include: wants('subscription'), build: subscriptionSection },
  { include: wants('stream'), build: streamSection },
  {
    include: wants('default_streams'),
    build: async (ctx, req) => ({
      realm_default_streams: await listDefaultChannels(ctx.db, req.actor.realm),
    }),
  },
  {
    include: wants('default_stream_groups'),
    build: async (ctx, req) => ({
      realm_default_stream_groups: await listDefaultChannelGroups(ctx.db, req.actor.realm),
    }),
  },
];
