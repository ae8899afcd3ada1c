// Register snapshot sections of the channels area: subscriptions, the channels the user can
// see, and the default channels and default channel groups. Each is built from the same
// read helpers the HTTP routes use, so a snapshot and a fresh GET agree.
import type { AppContext } from '../../context.ts';
import type { SnapshotRequest, SnapshotSection } from '../initial-state.ts';
// The snapshot composes the channels area's read-only helpers, as initial-state.ts does.
// eslint-disable-next-line no-restricted-imports
import {
  gatherSubscriptions,
  readVisibleChannels,
  type VisibleChannels,
} from '../../actions/channel-directory.ts';
// eslint-disable-next-line no-restricted-imports
import { listDefaultChannelGroups, listDefaultChannels } from '../../actions/default-channels.ts';

const wants =
  (type: string) =>
  (req: SnapshotRequest): boolean =>
    req.fetch === null || req.fetch.includes(type);

/**
 * The visible channels, read once per register for both sections below: presenting a few
 * hundred channels and their subscriber lists is the largest part of a snapshot.
 */
const visibleByRequest = new WeakMap<SnapshotRequest, Promise<VisibleChannels>>();

function visibleChannels(ctx: AppContext, req: SnapshotRequest): Promise<VisibleChannels> {
  let visible = visibleByRequest.get(req);
  if (!visible) {
    // Without the capability, archived channels are gone as far as the client knows.
    const archived = req.client.capabilities.archived_channels;
    const lists = req.includeSubscribers !== false;
    visible = readVisibleChannels(ctx.db, req.actor.realm, req.actor.user, archived, lists);
    visibleByRequest.set(req, visible);
  }
  return visible;
}

/** subscriptions, unsubscribed, never_subscribed. */
async function subscriptionSection(
  ctx: AppContext,
  req: SnapshotRequest,
): Promise<Record<string, unknown>> {
  const { capabilities } = req.client;
  return {
    ...(await gatherSubscriptions(
      ctx.db,
      req.actor.realm,
      req.actor.user,
      {
        includeSubscribers: req.includeSubscribers,
        notificationSettingsNull: capabilities.notification_settings_null,
        includeArchived: capabilities.archived_channels,
      },
      await visibleChannels(ctx, req),
    )),
  };
}

/** streams: every channel the user may know exists, by name. */
async function streamSection(
  ctx: AppContext,
  req: SnapshotRequest,
): Promise<Record<string, unknown>> {
  const { channels, presented } = await visibleChannels(ctx, req);
  const byName = channels
    .map((channel, i) => ({ name: channel.name, i }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { streams: byName.map(({ i }) => presented[i]) };
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
