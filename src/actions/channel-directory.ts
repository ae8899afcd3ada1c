// Reading channels and subscriptions: GET /streams and its relatives, and the subscription
// lists GET /users/me/subscriptions and the register snapshot share.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { MIN_PARTIAL_SUBSCRIBERS_CHANNEL_SIZE } from '../lib/channel-settings.ts';
import { presentSubscription } from '../lib/presenters/channels.ts';
import { isGuest } from '../lib/roles.ts';
import * as channelsStore from '../store/channels.ts';
import type { Q } from '../store/db.ts';
import type { ChannelRow, RealmRow, UserRow } from '../store/schema.ts';
import {
  accessChannelById,
  accessChannelByName,
  invalidChannelName,
  listChannelAccess,
  type ChannelAccess,
} from './channel-access.ts';
import { notificationDefaults } from './channels.ts';
import { presentChannelRows, subscriberCounts } from './channel-present.ts';
import { accessUserById } from './users.ts';

export interface StreamFilters {
  include_public: boolean;
  include_web_public: boolean;
  include_subscribed: boolean;
  exclude_archived: boolean;
  include_all: boolean;
  include_all_active: boolean;
  include_default: boolean;
  include_owner_subscribed: boolean;
  include_can_access_content: boolean;
}

const byName = (a: Record<string, unknown>, b: Record<string, unknown>): number => {
  const x = String(a.name);
  const y = String(b.name);
  return x < y ? -1 : x > y ? 1 : 0;
};

/** GET /streams: the union of the sources the filters name, by name. */
export async function getStreams(
  ctx: AppContext,
  actor: Actor,
  filters: StreamFilters,
): Promise<Record<string, unknown>[]> {
  const { user, realm } = actor;
  let all = await listChannelAccess(ctx.db, realm, user);
  if (filters.exclude_archived) all = all.filter((a) => a.channel.is_archived === 0);
  const includeAll = filters.include_all || filters.include_all_active;
  // Guests reach public channels only through their subscriptions.
  const includePublic = filters.include_public && !isGuest(user);
  let chosen: ChannelAccess[];
  if (includeAll) {
    chosen = all.filter((a) => a.metadata);
  } else {
    const ownerChannels = new Set<number>();
    if (filters.include_owner_subscribed && user.is_bot && user.bot_owner_id !== null) {
      for (const s of await channelsStore.listUserSubscriptions(ctx.db, user.bot_owner_id)) {
        if (s.active === 1) ownerChannels.add(s.channel_id);
      }
    }
    chosen = all.filter((a) => {
      const c = a.channel;
      if (ownerChannels.has(c.id)) return true;
      if (filters.include_can_access_content) return a.content;
      return (
        (filters.include_subscribed && a.subscribed) ||
        (includePublic && c.invite_only === 0) ||
        (filters.include_web_public && c.is_web_public === 1 && c.is_archived === 0)
      );
    });
  }
  const presented = await presentChannelRows(
    ctx.db,
    realm.id,
    chosen.map((a) => a.channel),
  );
  if (filters.include_default) {
    const defaults = new Set(await channelsStore.listDefaultChannelIds(ctx.db, realm.id));
    for (const p of presented) p.is_default = defaults.has(p.stream_id as number);
  }
  return presented.sort(byName);
}

/** GET /streams/{id}. */
export async function getStream(
  ctx: AppContext,
  actor: Actor,
  id: number,
): Promise<Record<string, unknown>> {
  const { channel } = await accessChannelById(ctx, actor, id);
  return (await presentChannelRows(ctx.db, actor.realm.id, [channel]))[0];
}

/** GET /get_stream_id. */
export async function getStreamId(ctx: AppContext, actor: Actor, name: string): Promise<number> {
  const { channel } = await accessChannelByName(ctx, actor, name, {
    content: true,
    notFound: invalidChannelName,
  });
  return channel.id;
}

/** GET /streams/{id}/members: whoever may see the channel may see its subscribers. */
export async function getSubscribers(ctx: AppContext, actor: Actor, id: number): Promise<number[]> {
  const { channel } = await accessChannelById(ctx, actor, id);
  return channelsStore.listSubscriberIds(ctx.db, channel.id);
}

/** GET /users/{user_id}/subscriptions/{stream_id}. */
export async function getSubscriptionStatus(
  ctx: AppContext,
  actor: Actor,
  userId: number,
  channelId: number,
): Promise<boolean> {
  const { channel } = await accessChannelById(ctx, actor, channelId);
  const target = await accessUserById(ctx, actor, userId);
  const sub = await channelsStore.getSubscription(ctx.db, target.id, channel.id);
  return sub?.active === 1;
}

export interface SubscriptionListOptions {
  includeSubscribers: boolean | 'partial';
  /** Client capability notification_settings_null: null stands for "inherit". */
  notificationSettingsNull: boolean;
  includeArchived: boolean;
}

export interface SubscriptionLists {
  subscriptions: Record<string, unknown>[];
  unsubscribed: Record<string, unknown>[];
  never_subscribed: Record<string, unknown>[];
}

/** The channels a user may know exist, presented, with their active subscribers if asked. */
export interface VisibleChannels {
  channels: ChannelRow[];
  /** The channel objects, in the order of channels; shared, so never changed. */
  presented: Record<string, unknown>[];
  /** Null when read without the lists: the channel objects need only the counts. */
  subscribers: Map<number, number[]> | null;
}

export async function readVisibleChannels(
  db: Q,
  realm: RealmRow,
  user: UserRow,
  includeArchived: boolean,
  withSubscribers: boolean,
): Promise<VisibleChannels> {
  const channels = (await listChannelAccess(db, realm, user))
    .filter((a) => a.metadata && (includeArchived || a.channel.is_archived === 0))
    .map((a) => a.channel);
  const ids = channels.map((c) => c.id);
  // Counting is far cheaper than handing over every id: a register of 200 channels of 100
  // subscribers reads 20,000 of them only when the client asked for the lists.
  const subscribers = withSubscribers
    ? await channelsStore.listSubscriberIdsByChannel(db, realm.id, ids)
    : null;
  const counts = subscribers
    ? subscriberCounts(subscribers)
    : await channelsStore.countSubscribersByChannel(db, realm.id, ids);
  const presented = await presentChannelRows(db, realm.id, channels, counts);
  return { channels, presented, subscribers };
}

/**
 * The user's subscriptions, former subscriptions and other channels they can see, each by
 * name. Subscriber lists go with channels whose existence the user may see. A register
 * passes the visible channels it has read for its other sections.
 */
export async function gatherSubscriptions(
  db: Q,
  realm: RealmRow,
  user: UserRow,
  opts: SubscriptionListOptions,
  visible?: VisibleChannels,
): Promise<SubscriptionLists> {
  const {
    channels,
    presented,
    subscribers: allSubscribers,
  } = visible ??
  (await readVisibleChannels(
    db,
    realm,
    user,
    opts.includeArchived,
    opts.includeSubscribers !== false,
  ));
  const rows = new Map(
    (await channelsStore.listUserSubscriptions(db, user.id)).map((s) => [s.channel_id, s]),
  );
  if (opts.includeSubscribers !== false && !allSubscribers) {
    throw new Error('the visible channels were read without the subscriber lists asked for');
  }
  const subscribers = opts.includeSubscribers ? allSubscribers : null;
  const defaults = notificationDefaults(user);
  const out: SubscriptionLists = { subscriptions: [], unsubscribed: [], never_subscribed: [] };
  channels.forEach((channel, i) => {
    const row = rows.get(channel.id);
    const ids = subscribers?.get(channel.id) ?? [];
    const partial =
      opts.includeSubscribers === 'partial' && ids.length >= MIN_PARTIAL_SUBSCRIBERS_CHANNEL_SIZE;
    const subscriberFields = !subscribers
      ? {}
      : partial
        ? { partialSubscribers: ids }
        : { subscribers: ids };
    if (!row) {
      const p = { ...presented[i] };
      if (subscriberFields.subscribers) p.subscribers = subscriberFields.subscribers;
      if (subscriberFields.partialSubscribers)
        p.partial_subscribers = subscriberFields.partialSubscribers;
      out.never_subscribed.push(p);
      return;
    }
    const sub = presentSubscription(presented[i], row, {
      notificationSettingsNull: opts.notificationSettingsNull,
      defaults,
      ...subscriberFields,
    });
    (row.active === 1 ? out.subscriptions : out.unsubscribed).push(sub);
  });
  out.subscriptions.sort(byName);
  out.unsubscribed.sort(byName);
  out.never_subscribed.sort(byName);
  return out;
}

/** GET /users/me/subscriptions: active subscriptions to channels that are not archived. */
export async function listSubscriptions(
  ctx: AppContext,
  actor: Actor,
  includeSubscribers: boolean | 'partial',
): Promise<Record<string, unknown>[]> {
  const lists = await gatherSubscriptions(ctx.db, actor.realm, actor.user, {
    includeSubscribers,
    notificationSettingsNull: true,
    includeArchived: false,
  });
  return lists.subscriptions;
}
