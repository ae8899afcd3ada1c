// Channels: creation and subscription (the base other channel actions build on).
import type { AppContext } from '../context.ts';
import {
  CHANNEL_GROUP_SETTINGS,
  CHANNEL_GROUP_SETTING_NAMES,
  normalizeChannelName,
  readChannelSettings,
  streamPostPolicyFor,
  MAX_CHANNEL_DESCRIPTION_LENGTH,
  type ChannelGroupSettings,
  type ChannelTopicsPolicy,
} from '../lib/channel-settings.ts';
import { badRequest } from '../lib/errors.ts';
import {
  pickSubscriptionColor,
  presentChannel,
  presentSubscription,
  type NotificationDefaults,
  type PresentedGroupSettings,
} from '../lib/presenters/channels.ts';
import { renderPlainDescription } from '../lib/presenters/server.ts';
import { readUserSettings } from '../lib/user-settings.ts';
import { unixNow } from '../infra/clock.ts';
import * as channelsStore from '../store/channels.ts';
import type { Q } from '../store/db.ts';
import type { ChannelRow, RealmRow, SubscriptionRow, UserRow } from '../store/schema.ts';
import * as groups from '../store/user-groups.ts';
import * as usersStore from '../store/users.ts';
import { usersWhoCanSeeChannel } from './channel-access.ts';
import {
  presentGroupSetting,
  resolveGroupSetting,
  type GroupSettingValue,
} from './group-settings.ts';
import type { Work } from './transaction.ts';

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

export function checkChannelName(raw: string): string {
  const name = normalizeChannelName(raw);
  if (name === null)
    throw badRequest(
      raw.trim() === '' ? 'Channel name cannot be blank.' : `Invalid channel name '${raw}'`,
    );
  return name;
}

export function checkChannelDescription(raw: string): string {
  if ([...raw].length > MAX_CHANNEL_DESCRIPTION_LENGTH) {
    throw badRequest(
      `Channel description is too long (limit: ${MAX_CHANNEL_DESCRIPTION_LENGTH} characters)`,
    );
  }
  return raw.replace(/\r?\n/g, ' ');
}

/** Create a channel inside the caller's transaction; announce it with announceNewChannel. */
export async function doCreateChannel(
  ctx: AppContext,
  work: Work,
  realm: RealmRow,
  creator: UserRow | null,
  params: NewChannelParams,
): Promise<ChannelRow> {
  const name = checkChannelName(params.name);
  if (await channelsStore.getChannelByName(work.db, realm.id, name))
    throw badRequest(`Channel '${name}' already exists`);
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
    rendered_description: renderPlainDescription(description),
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

/** The channel object clients see (group settings presented, derived legacy fields filled). */
export async function presentChannelRow(
  db: Q,
  realmId: number,
  channel: ChannelRow,
): Promise<Record<string, unknown>> {
  const settings = readChannelSettings(channel.settings);
  const groupSettings = {} as PresentedGroupSettings;
  for (const key of CHANNEL_GROUP_SETTING_NAMES)
    groupSettings[key] = await presentGroupSetting(db, realmId, settings[key]);
  const sendGroup = await groups.getGroup(db, realmId, settings.can_send_message_group);
  const first = await db
    .selectFrom('messages')
    .select((eb) => eb.fn.min<number>('id').as('id'))
    .where('channel_id', '=', channel.id)
    .executeTakeFirst();
  const subscribers = await channelsStore.listSubscriberIds(db, channel.id);
  return presentChannel(channel, {
    groupSettings,
    streamPostPolicy: streamPostPolicyFor(sendGroup?.is_system_group ? sendGroup.name : null),
    firstMessageId: first?.id ?? null,
    subscriberCount: subscribers.length,
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

/**
 * Subscribe users (inside the caller's transaction) and queue the events: subscription add
 * to each new subscriber, peer_add to the others who can see the channel, and stream create
 * to new subscribers who could not see a private channel before.
 * Returns the ids actually subscribed (already-subscribed users are skipped).
 */
export async function doSubscribeUsers(
  ctx: AppContext,
  work: Work,
  realm: RealmRow,
  channel: ChannelRow,
  users: UserRow[],
): Promise<number[]> {
  const before = new Set(await usersWhoCanSeeChannel(work.db, realm, channel));
  const added: UserRow[] = [];
  for (const user of users) {
    const existing = await channelsStore.getSubscription(work.db, user.id, channel.id);
    if (existing?.active === 1) continue;
    const used = (await channelsStore.listUserSubscriptions(work.db, user.id)).map((s) => s.color);
    const row: SubscriptionRow = existing
      ? { ...existing, active: 1 }
      : {
          user_id: user.id,
          channel_id: channel.id,
          active: 1,
          is_muted: 0,
          pin_to_top: 0,
          color: pickSubscriptionColor(used),
          desktop_notifications: null,
          audible_notifications: null,
          push_notifications: null,
          email_notifications: null,
          wildcard_mentions_notify: null,
        };
    await channelsStore.upsertSubscription(work.db, row);
    added.push(user);
  }
  if (added.length === 0) return [];
  const presented = await presentChannelRow(work.db, realm.id, channel);
  const subscribers = await channelsStore.listSubscriberIds(work.db, channel.id);
  const after = await usersWhoCanSeeChannel(work.db, realm, channel);
  for (const user of added) {
    const sub = (await channelsStore.getSubscription(work.db, user.id, channel.id))!;
    // Settings that inherit are sent as null; shaping substitutes the defaults for clients
    // without notification_settings_null (see events/shaping.ts).
    const subscription = presentSubscription(presented, sub, {
      notificationSettingsNull: true,
      defaults: notificationDefaults(user),
      subscribers,
    });
    work.emitOnCommit(
      { type: 'subscription', op: 'add', subscriptions: [subscription] },
      [user.id],
      {
        perUser: { [user.id]: { __notification_defaults: notificationDefaults(user) } },
      },
    );
    if (!before.has(user.id))
      work.emitOnCommit({ type: 'stream', op: 'create', streams: [presented] }, [user.id]);
  }
  const addedIds = added.map((u) => u.id);
  const peers = after.filter((id) => !addedIds.includes(id));
  work.emitOnCommit(
    { type: 'subscription', op: 'peer_add', stream_ids: [channel.id], user_ids: addedIds },
    peers,
  );
  return addedIds;
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
