// Channels: creation, and subscribing or unsubscribing users, with the events each emits.
// The routes' actions (subscriptions.ts, channel-admin.ts, default-channels.ts) build on
// these; the channel objects clients see are made in channel-present.ts.
import type { AppContext } from '../context.ts';
import {
  CHANNEL_GROUP_SETTINGS,
  CHANNEL_GROUP_SETTING_NAMES,
  checkChannelName,
  normalizeChannelDescription,
  MAX_CHANNEL_DESCRIPTION_LENGTH,
  type ChannelGroupSettings,
  type ChannelTopicsPolicy,
} from '../lib/channel-settings.ts';
import { badRequest } from '../lib/errors.ts';
import {
  pickSubscriptionColor,
  presentSubscription,
  type NotificationDefaults,
} from '../lib/presenters/channels.ts';
import { renderDescription, scanMarkdown } from '../lib/markdown/index.ts';
import { realmUrl } from '../lib/realm-url.ts';
import { isAdmin } from '../lib/roles.ts';
import { readUserSettings } from '../lib/user-settings.ts';
import { unixNow } from '../infra/clock.ts';
import * as channelsStore from '../store/channels.ts';
import type { Q } from '../store/db.ts';
import type { ChannelRow, RealmRow, SubscriptionRow, UserRow } from '../store/schema.ts';
import * as groups from '../store/user-groups.ts';
import * as usersStore from '../store/users.ts';
import {
  computeChannelAccess,
  groupIdsOf,
  listChannelAccess,
  usersWhoCanSeeChannel,
} from './channel-access.ts';
import { resolveGroupSetting, type GroupSettingValue } from './group-settings.ts';
import type { Work } from './transaction.ts';
import { presentChannelRow, presentChannelRows, subscriberCounts } from './channel-present.ts';

export interface NewChannelParams {
  name: string;
  description?: string;
  inviteOnly?: boolean;
  isWebPublic?: boolean;
  historyPublicToSubscribers?: boolean;
  messageRetentionDays?: number | null;
  topicsPolicy?: ChannelTopicsPolicy;
  folderId?: number | null;
  groupSettings?: Partial<Record<keyof ChannelGroupSettings, GroupSettingValue>>;
}

export function checkChannelDescription(raw: string): string {
  if ([...raw].length > MAX_CHANNEL_DESCRIPTION_LENGTH) {
    throw badRequest(
      `Channel description is too long (limit: ${MAX_CHANNEL_DESCRIPTION_LENGTH} characters)`,
    );
  }
  return normalizeChannelDescription(raw);
}

/**
 * A description's HTML: Markdown, with mentions of the organization's users and links to
 * the channels the author can see.
 */
export async function renderChannelDescription(
  ctx: AppContext,
  db: Q,
  realm: RealmRow,
  author: UserRow | null,
  description: string,
): Promise<string> {
  const scan = scanMarkdown(description);
  const wanted = new Set(scan.userNames.map((n) => n.toLowerCase()));
  const users = (await usersStore.listUsers(db, realm.id)).filter(
    (u) => wanted.has(u.full_name.toLowerCase()) || scan.userIds.includes(u.id),
  );
  const names = new Set(scan.channelNames.map((n) => n.toLowerCase()));
  const channels =
    names.size === 0
      ? []
      : author
        ? (await listChannelAccess(db, realm, author))
            .filter((a) => a.metadata && names.has(a.channel.name_key))
            .map((a) => a.channel)
        : [];
  return renderDescription(description, {
    users: users.map((u) => ({ id: u.id, full_name: u.full_name, is_active: u.is_active === 1 })),
    channels: channels.map((c) => ({ id: c.id, name: c.name })),
    realmUrl: realmUrl(ctx.config.externalUrl, realm.string_id),
  });
}

/** No channel of the realm has this name (in any case): inside the transaction that takes it. */
export async function checkChannelNameFree(db: Q, realmId: number, name: string): Promise<void> {
  if (await channelsStore.getChannelByName(db, realmId, name))
    throw badRequest(`Channel '${name}' already exists`);
}

/** Create a channel inside the caller's transaction; announce it with announceNewChannel. */
export async function doCreateChannel(
  ctx: AppContext,
  work: Work,
  realm: RealmRow,
  creator: UserRow | null,
  params: NewChannelParams,
): Promise<ChannelRow> {
  const name = checkChannelName(params.name.trim());
  await checkChannelNameFree(work.db, realm.id, name);
  const description = checkChannelDescription(params.description ?? '');
  const now = unixNow(ctx.clock);
  const systemGroups = await groups.listSystemGroups(work.db, realm.id);
  const systemId = (n: string): number => systemGroups.find((g) => g.name === n)!.id;
  const settings = {} as ChannelGroupSettings;
  for (const key of CHANNEL_GROUP_SETTING_NAMES) {
    const spec = CHANNEL_GROUP_SETTINGS[key];
    const requested = params.groupSettings?.[key];
    if (requested !== undefined) {
      settings[key] = await resolveGroupSetting(
        work.db,
        realm.id,
        key,
        requested,
        spec,
        now,
        creator?.id ?? null,
      );
    } else if (spec.default === 'creator') {
      settings[key] = creator
        ? await resolveGroupSetting(
            work.db,
            realm.id,
            key,
            { direct_members: [creator.id], direct_subgroups: [] },
            spec,
            now,
            creator.id,
          )
        : systemId('role:nobody');
    } else {
      settings[key] = systemId(spec.default);
    }
  }
  const inviteOnly = params.inviteOnly ?? false;
  return channelsStore.insertChannel(work.db, {
    realm_id: realm.id,
    name,
    name_key: name.toLowerCase(),
    description,
    rendered_description: await renderChannelDescription(ctx, work.db, realm, creator, description),
    invite_only: inviteOnly ? 1 : 0,
    is_web_public: params.isWebPublic ? 1 : 0,
    // Public channels always share history with subscribers.
    history_public_to_subscribers:
      !inviteOnly || (params.historyPublicToSubscribers ?? true) ? 1 : 0,
    message_retention_days: params.messageRetentionDays ?? null,
    date_created: now,
    creator_id: creator?.id ?? null,
    is_archived: 0,
    topics_policy: params.topicsPolicy ?? 'inherit',
    folder_id: params.folderId ?? null,
    settings: JSON.stringify(settings),
  });
}

export function notificationDefaults(user: UserRow): NotificationDefaults {
  const s = readUserSettings(user.settings);
  return {
    desktop_notifications: s.enable_stream_desktop_notifications as boolean,
    audible_notifications: s.enable_stream_audible_notifications as boolean,
    push_notifications: s.enable_stream_push_notifications as boolean,
    email_notifications: s.enable_stream_email_notifications as boolean,
    wildcard_mentions_notify: s.wildcard_mentions_notify as boolean,
  };
}

/** A user and a channel: one subscription added, kept or removed. */
export interface SubscriptionPair {
  user: UserRow;
  channel: ChannelRow;
}

/**
 * Subscribe users to channels inside the caller's transaction and queue the events: stream
 * create to new subscribers who could not see a channel before, one subscription add per
 * user with all their new subscriptions, and peer_add to the others who can see each channel.
 * colors maps a channel id to the color a new subscription should take.
 */
export async function doBulkSubscribe(
  work: Work,
  realm: RealmRow,
  channels: ChannelRow[],
  users: UserRow[],
  colors: Map<number, string> = new Map(),
): Promise<{ added: SubscriptionPair[]; already: SubscriptionPair[] }> {
  const before = new Map<number, Set<number>>();
  for (const c of channels)
    before.set(c.id, new Set(await usersWhoCanSeeChannel(work.db, realm, c)));
  const existing = await channelsStore.listSubscriptionRows(
    work.db,
    users.map((u) => u.id),
    channels.map((c) => c.id),
  );
  const added: SubscriptionPair[] = [];
  const already: SubscriptionPair[] = [];
  for (const user of users) {
    const used = (await channelsStore.listUserSubscriptions(work.db, user.id)).map((s) => s.color);
    for (const channel of channels) {
      const row = existing.find((s) => s.user_id === user.id && s.channel_id === channel.id);
      if (row?.active === 1) {
        already.push({ user, channel });
        continue;
      }
      const color = row?.color ?? colors.get(channel.id) ?? pickSubscriptionColor(used);
      used.push(color);
      await channelsStore.upsertSubscription(
        work.db,
        row
          ? { ...row, active: 1 }
          : {
              user_id: user.id,
              channel_id: channel.id,
              active: 1,
              is_muted: 0,
              pin_to_top: 0,
              color,
              desktop_notifications: null,
              audible_notifications: null,
              push_notifications: null,
              email_notifications: null,
              wildcard_mentions_notify: null,
            },
      );
      added.push({ user, channel });
    }
  }
  if (added.length === 0) return { added, already };

  const changed = channels.filter((c) => added.some((a) => a.channel.id === c.id));
  const subscribers = await channelsStore.listSubscriberIdsByChannel(
    work.db,
    realm.id,
    changed.map((c) => c.id),
  );
  const presented = new Map(
    (await presentChannelRows(work.db, realm.id, changed, subscriberCounts(subscribers))).map(
      (p, i) => [changed[i].id, p],
    ),
  );
  const addedTo = (c: ChannelRow): number[] =>
    added.filter((a) => a.channel.id === c.id).map((a) => a.user.id);
  for (const c of changed) {
    const newlyVisible = addedTo(c).filter((id) => !before.get(c.id)!.has(id));
    work.emitOnCommit(
      { type: 'stream', op: 'create', streams: [presented.get(c.id)!] },
      newlyVisible,
    );
  }
  await emitSubscriptionAdds(work, users, added, presented, subscribers);
  for (const c of changed) {
    const ids = addedTo(c).sort((a, b) => a - b);
    const peers = (await usersWhoCanSeeChannel(work.db, realm, c)).filter(
      (id) => !ids.includes(id),
    );
    work.emitOnCommit(
      { type: 'subscription', op: 'peer_add', stream_ids: [c.id], user_ids: ids },
      peers,
    );
  }
  return { added, already };
}

/**
 * One subscription add per user with all their new subscriptions. Settings that inherit are
 * sent as null with the user's defaults beside them; shaping substitutes the defaults for
 * clients without notification_settings_null (see events/shaping.ts).
 */
export async function emitSubscriptionAdds(
  work: Work,
  users: UserRow[],
  pairs: SubscriptionPair[],
  presented: Map<number, Record<string, unknown>>,
  subscribers: Map<number, number[]>,
  marker: Record<string, true> = {},
): Promise<void> {
  for (const user of users) {
    const mine = pairs.filter((a) => a.user.id === user.id);
    if (mine.length === 0) continue;
    const rows = await channelsStore.listSubscriptionRows(
      work.db,
      [user.id],
      mine.map((a) => a.channel.id),
    );
    const defaults = notificationDefaults(user);
    const subscriptions = mine.map(({ channel }) =>
      presentSubscription(
        presented.get(channel.id)!,
        rows.find((r) => r.channel_id === channel.id) as SubscriptionRow,
        { notificationSettingsNull: true, defaults, subscribers: subscribers.get(channel.id) },
      ),
    );
    work.emitOnCommit({ type: 'subscription', op: 'add', subscriptions, ...marker }, [user.id], {
      perUser: { [user.id]: { __notification_defaults: defaults } },
    });
  }
}

/**
 * Subscribe users to one channel (inside the caller's transaction), with the events of
 * doBulkSubscribe. Returns the ids actually subscribed (already-subscribed users are skipped).
 */
export async function doSubscribeUsers(
  _ctx: AppContext,
  work: Work,
  realm: RealmRow,
  channel: ChannelRow,
  users: UserRow[],
): Promise<number[]> {
  const { added } = await doBulkSubscribe(work, realm, [channel], users);
  return added.map((a) => a.user.id);
}

/**
 * Unsubscribe users from channels inside the caller's transaction: subscription remove to
 * each user, stream delete to those who can no longer see a channel, and peer_remove to the
 * others who can see it.
 */
export async function doBulkUnsubscribe(
  work: Work,
  realm: RealmRow,
  channels: ChannelRow[],
  users: UserRow[],
): Promise<{ removed: SubscriptionPair[]; notSubscribed: SubscriptionPair[] }> {
  const existing = await channelsStore.listSubscriptionRows(
    work.db,
    users.map((u) => u.id),
    channels.map((c) => c.id),
  );
  const removed: SubscriptionPair[] = [];
  const notSubscribed: SubscriptionPair[] = [];
  for (const user of users) {
    for (const channel of channels) {
      const row = existing.find((s) => s.user_id === user.id && s.channel_id === channel.id);
      (row?.active === 1 ? removed : notSubscribed).push({ user, channel });
    }
  }
  if (removed.length === 0) return { removed, notSubscribed };
  await channelsStore.deactivateSubscriptions(
    work.db,
    removed.map((r) => ({ userId: r.user.id, channelId: r.channel.id })),
  );
  for (const user of users) {
    const mine = removed.filter((r) => r.user.id === user.id).map((r) => r.channel);
    if (mine.length === 0) continue;
    for (const group of byArchiving(mine)) {
      work.emitOnCommit(
        {
          type: 'subscription',
          op: 'remove',
          subscriptions: group.channels.map((c) => ({ name: c.name, stream_id: c.id })),
          ...group.marker,
        },
        [user.id],
      );
    }
    if (isAdmin(user)) continue;
    const groupIds = await groupIdsOf(work.db, user);
    const lost = mine.filter((c) => !computeChannelAccess(c, user, false, groupIds).metadata);
    if (lost.length > 0) emitChannelDeletion(work, lost, [user.id]);
  }
  for (const channel of channels) {
    const ids = removed
      .filter((r) => r.channel.id === channel.id)
      .map((r) => r.user.id)
      .sort((a, b) => a - b);
    if (ids.length === 0) continue;
    const peers = (await usersWhoCanSeeChannel(work.db, realm, channel)).filter(
      (id) => !ids.includes(id),
    );
    work.emitOnCommit(
      {
        type: 'subscription',
        op: 'peer_remove',
        stream_ids: [channel.id],
        user_ids: ids,
        ...archivedMarker(channel),
      },
      peers,
    );
  }
  return { removed, notSubscribed };
}

/**
 * stream delete: the channels vanish for these users. forArchiving marks the copy clients
 * with archived_channels skip (they get the is_archived update instead; see events/shaping.ts).
 */
export function emitChannelDeletion(
  work: Work,
  channels: ChannelRow[],
  userIds: Iterable<number>,
  opts: { forArchiving?: boolean } = {},
): void {
  // Archiving's own deletion is for the clients that know the channel as active.
  const groups = opts.forArchiving ? [{ channels, marker: {} }] : byArchiving(channels);
  for (const group of groups) {
    work.emitOnCommit(
      {
        type: 'stream',
        op: 'delete',
        streams: group.channels.map((c) => ({ stream_id: c.id })),
        stream_ids: group.channels.map((c) => c.id),
        ...(opts.forArchiving ? { __for_archiving: true } : {}),
        ...group.marker,
      },
      userIds,
    );
  }
}

/**
 * Channels split into the active ones and the archived ones, each with the mark its events
 * carry: events about archived channels reach only clients with archived_channels
 * (events/shaping.ts). Empty groups are left out.
 */
export function byArchiving(
  channels: ChannelRow[],
): Array<{ channels: ChannelRow[]; marker: { __archived_channels?: true } }> {
  return [
    { channels: channels.filter((c) => c.is_archived !== 1), marker: {} },
    {
      channels: channels.filter((c) => c.is_archived === 1),
      marker: { __archived_channels: true as const },
    },
  ].filter((g) => g.channels.length > 0);
}

/** The mark of an event about this one channel (see byArchiving). */
export function archivedMarker(channel: ChannelRow): { __archived_channels?: true } {
  return channel.is_archived === 1 ? { __archived_channels: true } : {};
}

/**
 * Announce a new channel to everyone who can see it now; call it before doSubscribeUsers,
 * which tells new subscribers of a private channel when they gain sight of it.
 */
export async function announceNewChannel(
  work: Work,
  realm: RealmRow,
  channel: ChannelRow,
): Promise<void> {
  const presented = await presentChannelRow(work.db, realm.id, channel);
  work.emitOnCommit(
    { type: 'stream', op: 'create', streams: [presented] },
    await usersWhoCanSeeChannel(work.db, realm, channel),
  );
}

export async function listActiveUsersByIds(
  db: Q,
  realmId: number,
  ids: number[],
): Promise<UserRow[]> {
  return (await usersStore.listUsersByIds(db, realmId, ids)).filter((u) => u.is_active === 1);
}

/** The channels a user may know exist (before a change of role, say). */
export async function visibleChannelIds(
  db: Q,
  realm: RealmRow,
  user: UserRow,
): Promise<Set<number>> {
  return new Set(
    (await listChannelAccess(db, realm, user)).filter((a) => a.metadata).map((a) => a.channel.id),
  );
}

/**
 * After a change that alters which channels a user may see (a new role), inside the caller's
 * transaction: stream create, with the subscriber list, for channels they now see, and
 * stream delete for those they no longer see. before is visibleChannelIds from before.
 */
export async function doAnnounceChannelVisibility(
  work: Work,
  realm: RealmRow,
  user: UserRow,
  before: Set<number>,
): Promise<void> {
  const fresh = (await usersStore.getUserById(work.db, realm.id, user.id)) ?? user;
  const after = await visibleChannelIds(work.db, realm, fresh);
  const all = await channelsStore.listChannels(work.db, realm.id);
  const gained = all.filter((c) => after.has(c.id) && !before.has(c.id));
  const lost = all.filter((c) => before.has(c.id) && !after.has(c.id));
  if (gained.length > 0) {
    for (const group of byArchiving(gained)) {
      work.emitOnCommit(
        {
          type: 'stream',
          op: 'create',
          streams: await presentChannelRows(work.db, realm.id, group.channels),
          ...group.marker,
        },
        [user.id],
      );
    }
    const subscribers = await channelsStore.listSubscriberIdsByChannel(
      work.db,
      realm.id,
      gained.map((c) => c.id),
    );
    for (const c of gained) {
      // Only for clients that keep subscriber lists: the channel's count already has them.
      work.emitOnCommit(
        {
          type: 'subscription',
          op: 'peer_add',
          stream_ids: [c.id],
          user_ids: subscribers.get(c.id) ?? [],
          __only_with_subscribers: true,
          ...archivedMarker(c),
        },
        [user.id],
      );
    }
  }
  if (lost.length > 0) emitChannelDeletion(work, lost, [user.id]);
}

/**
 * After a user is deactivated or reactivated, inside the caller's transaction: their
 * subscriptions leave or rejoin the channels' subscriber counts and lists, as peer events
 * to everyone else who can see each channel.
 */
export async function doAnnounceSubscriberActivation(
  work: Work,
  realm: RealmRow,
  user: UserRow,
  active: boolean,
): Promise<void> {
  const subs = (await channelsStore.listUserSubscriptions(work.db, user.id)).filter(
    (s) => s.active === 1,
  );
  const channels = await channelsStore.listChannelsByIds(
    work.db,
    realm.id,
    subs.map((s) => s.channel_id),
  );
  for (const channel of channels) {
    const peers = (await usersWhoCanSeeChannel(work.db, realm, channel)).filter(
      (id) => id !== user.id,
    );
    work.emitOnCommit(
      {
        type: 'subscription',
        op: active ? 'peer_add' : 'peer_remove',
        stream_ids: [channel.id],
        user_ids: [user.id],
        ...archivedMarker(channel),
      },
      peers,
    );
  }
}
