// POST, PATCH and DELETE /users/me/subscriptions and the per-user subscription settings:
// who may subscribe or unsubscribe whom, and which channels a subscribe request creates.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import {
  CHANNEL_TOPICS_POLICIES,
  SUBSCRIPTION_PROPERTIES,
  checkChannelName,
  historyPublicToSubscribersFor,
  isValidColor,
  normalizeChannelDescription,
  parseMessageRetentionDays,
  type ChannelGroupSettingName,
  type ChannelTopicsPolicy,
  type SubscriptionProperty,
} from '../lib/channel-settings.ts';
import { badRequest, mustBeOwner } from '../lib/errors.ts';
import { NEW_CHANNELS_TOPIC, newChannelsAnnouncement } from '../lib/messages.ts';
import { readRealmSettings } from '../lib/realm-settings.ts';
import { isAdmin, isGuest, isOwner } from '../lib/roles.ts';
import * as channelsStore from '../store/channels.ts';
import type { Q } from '../store/db.ts';
import type { ChannelRow, RealmRow, SubscriptionRow, UserRow } from '../store/schema.ts';
import {
  accessChannelById,
  canAddSubscribers,
  canRemoveSubscribers,
  computeChannelAccess,
  groupIdsOf,
} from './channel-access.ts';
import {
  announceNewChannel,
  doBulkSubscribe,
  doBulkUnsubscribe,
  doCreateChannel,
  type SubscriptionPair,
} from './channels.ts';
import { checkChannelFolderId } from './channel-folders.ts';
import { addDefaultChannelIn } from './default-channels.ts';
import type { GroupSettingValue } from './group-settings.ts';
import { notificationBot } from './message-reports.ts';
import { sendInternalChannelMessage } from './messages.ts';
import { accessCurrentActor, hasRealmPermission } from './permissions.ts';
import { readingIn, withTransaction, type Work } from './transaction.ts';
import { accessUserByEmail, accessUserById } from './users.ts';

export interface SubscriptionRequest {
  name: string;
  description?: string;
  color?: string;
}

export interface SubscribeParams {
  subscriptions: SubscriptionRequest[];
  principals?: string[] | number[];
  authorization_errors_fatal: boolean;
  announce: boolean;
  invite_only: boolean;
  is_web_public: boolean;
  is_default_stream: boolean;
  history_public_to_subscribers?: boolean | null;
  message_retention_days: string | number;
  topics_policy?: string;
  folder_id?: number | null;
  groupSettings: Partial<Record<ChannelGroupSettingName, GroupSettingValue>>;
}

export interface SubscribeResult {
  subscribed: Record<string, string[]>;
  already_subscribed: Record<string, string[]>;
  unauthorized?: string[];
}

/** The users principals name (ids or emails), active ones only; none means the actor. */
async function resolvePrincipals(
  ctx: AppContext,
  actor: Actor,
  principals: string[] | number[] | undefined,
): Promise<UserRow[]> {
  if (!principals || principals.length === 0) return [actor.user];
  const out = new Map<number, UserRow>();
  for (const p of principals) {
    const user =
      typeof p === 'number'
        ? await accessUserById(ctx, actor, p, { allowDeactivated: false })
        : await accessUserByEmail(ctx, actor, p, { allowDeactivated: false });
    out.set(user.id, user);
  }
  return [...out.values()];
}

/** "name" per user id, in the order the pairs came. */
function namesByUser(pairs: SubscriptionPair[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const { user, channel } of pairs) (out[String(user.id)] ??= []).push(channel.name);
  return out;
}

/** Creating web-public channels needs the organization to allow spectators at all. */
export function webPublicChannelsEnabled(realm: RealmRow): boolean {
  return readRealmSettings(realm.settings).enable_spectator_access === true;
}

/** The reference server's checks on a channel a subscribe request would create. */
async function checkChannelCreation(
  db: Q,
  actor: Actor,
  p: SubscribeParams,
  retentionDays: number | null,
): Promise<void> {
  const can = (setting: Parameters<typeof hasRealmPermission>[2]) =>
    hasRealmPermission(db, actor.user, setting);
  const insufficient = () => badRequest('Insufficient permission');
  if (p.invite_only && !(await can('can_create_private_channel_group'))) throw insufficient();
  if (!p.invite_only && !(await can('can_create_public_channel_group'))) throw insufficient();
  if (p.is_default_stream && !isAdmin(actor.user)) throw insufficient();
  if (p.invite_only && p.is_default_stream)
    throw badRequest('A default channel cannot be private.');
  if (p.is_web_public) {
    if (!webPublicChannelsEnabled(actor.realm))
      throw badRequest('Web-public channels are not enabled.');
    if (!(await can('can_create_web_public_channel_group'))) throw insufficient();
    if (p.invite_only || p.history_public_to_subscribers === false)
      throw badRequest('Invalid parameters');
  }
  if (retentionDays !== null && !isOwner(actor.user)) throw mustBeOwner();
}

/** Clients send topics_policy here as JSON text ("\"inherit\"") or plain. */
export function readTopicsPolicy(raw: string): ChannelTopicsPolicy {
  const value = raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw;
  if (!(CHANNEL_TOPICS_POLICIES as readonly string[]).includes(value))
    throw badRequest('Invalid topics_policy');
  return value as ChannelTopicsPolicy;
}

/**
 * POST /users/me/subscriptions: subscribe the principals (or the actor) to the named
 * channels, creating the missing ones when the actor may create channels.
 */
export async function subscribe(
  ctx: AppContext,
  actor: Actor,
  p: SubscribeParams,
): Promise<SubscribeResult> {
  if (isGuest(actor.user)) throw badRequest('Not allowed for guest users');
  for (const s of p.subscriptions) {
    if (s.color !== undefined && !isValidColor(s.color))
      throw badRequest('add.color is not a valid hex color code');
  }
  const retentionDays = parseMessageRetentionDays(p.message_retention_days);
  const topicsPolicy =
    p.topics_policy === undefined ? undefined : readTopicsPolicy(p.topics_policy);
  // Requests name a channel once, case-insensitively; the first spelling wins.
  const requests = new Map<string, SubscriptionRequest & { name: string }>();
  for (const s of p.subscriptions) {
    const name = checkChannelName(s.name.trim());
    if (!requests.has(name.toLowerCase())) requests.set(name.toLowerCase(), { ...s, name });
  }

  const { result, unauthorized } = await withTransaction(ctx, actor.realm.id, async (work) => {
    // Planned inside: a channel created, archived or made private since, a principal
    // deactivated since, or a change of the actor's own role counts as it would in turn.
    const me = await accessCurrentActor(work.db, actor);
    if (isGuest(me.user)) throw badRequest('Not allowed for guest users');
    await checkChannelFolderId(work.db, me.realm, p.folder_id);
    const users = await resolvePrincipals(readingIn(ctx, work), me, p.principals);
    const othersToo = users.some((u) => u.id !== me.user.id);
    const found = await channelsStore.getChannelsByNames(work.db, me.realm.id, [
      ...requests.keys(),
    ]);
    const missing = [...requests.values()].filter((r) => !found.has(r.name.toLowerCase()));
    if (missing.length > 0) await checkChannelCreation(work.db, me, p, retentionDays);

    const groupIds = await groupIdsOf(work.db, me.user);
    const realmGrants = await hasRealmPermission(work.db, me.user, 'can_add_subscribers_group');
    const mine = new Set(
      (await channelsStore.listUserSubscriptions(work.db, me.user.id))
        .filter((s) => s.active === 1)
        .map((s) => s.channel_id),
    );
    const authorized: ChannelRow[] = [];
    const unauthorized: ChannelRow[] = [];
    for (const r of requests.values()) {
      const channel = found.get(r.name.toLowerCase());
      if (!channel) continue;
      const access = computeChannelAccess(channel, me.user, mine.has(channel.id), groupIds);
      // Archived channels take no new subscribers.
      (access.content && channel.is_archived === 0 ? authorized : unauthorized).push(channel);
    }
    if (unauthorized.length > 0 && p.authorization_errors_fatal)
      throw badRequest(`Unable to access channel (${unauthorized[0].name}).`);
    if (othersToo && authorized.some((c) => !canAddSubscribers(me.user, c, groupIds, realmGrants)))
      throw badRequest('Insufficient permission');

    const created: ChannelRow[] = [];
    for (const r of missing) {
      const inviteOnly = p.invite_only;
      const channel = await doCreateChannel(ctx, work, me.realm, me.user, {
        name: r.name,
        description: normalizeChannelDescription(r.description ?? ''),
        inviteOnly,
        isWebPublic: p.is_web_public,
        historyPublicToSubscribers: historyPublicToSubscribersFor(
          inviteOnly,
          p.history_public_to_subscribers,
        ),
        messageRetentionDays: retentionDays,
        topicsPolicy,
        folderId: p.folder_id,
        groupSettings: p.groupSettings,
      });
      await announceNewChannel(work, me.realm, channel);
      created.push(channel);
    }
    if (p.is_default_stream) {
      for (const c of created) await addDefaultChannelIn(work, me.realm, c);
    }
    if (p.announce) await announceCreatedChannels(ctx, work, me, created);
    const channels = [...authorized, ...created];
    const colors = new Map<number, string>();
    for (const r of requests.values()) {
      const c = channels.find((x) => x.name_key === r.name.toLowerCase());
      if (c && r.color !== undefined) colors.set(c.id, r.color);
    }
    return {
      result: await doBulkSubscribe(work, me.realm, channels, users, colors),
      unauthorized,
    };
  });
  return {
    subscribed: namesByUser(result.added),
    already_subscribed: namesByUser(result.already),
    ...(p.authorization_errors_fatal ? {} : { unauthorized: unauthorized.map((c) => c.name) }),
  };
}

/**
 * The Notification Bot's post about new public channels in the organization's announcement
 * channel, when one is set. Private channels are never announced: their names are theirs.
 */
async function announceCreatedChannels(
  ctx: AppContext,
  work: Work,
  actor: Actor,
  created: ChannelRow[],
): Promise<void> {
  const names = created.filter((c) => c.invite_only === 0).map((c) => c.name);
  const targetId = readRealmSettings(actor.realm.settings).new_stream_announcements_stream_id;
  if (names.length === 0 || typeof targetId !== 'number' || targetId === -1) return;
  const target = await channelsStore.getChannel(work.db, actor.realm.id, targetId);
  // A deleted or archived announcement channel means no announcements, as with reports.
  if (!target || target.is_archived === 1) return;
  const bot = await notificationBot(ctx, work, actor.realm);
  await sendInternalChannelMessage(
    ctx,
    work,
    actor.realm,
    bot,
    target,
    NEW_CHANNELS_TOPIC,
    newChannelsAnnouncement(actor.user, names),
  );
}

/**
 * DELETE /users/me/subscriptions: unsubscribe the principals (or the actor). Unsubscribing
 * anyone but oneself or one's own bots takes the right to remove subscribers.
 */
export async function unsubscribe(
  ctx: AppContext,
  actor: Actor,
  names: string[],
  principals: string[] | number[] | undefined,
): Promise<{ removed: string[]; not_removed: string[] }> {
  const wanted = names.map((n) => checkChannelName(n.trim()));
  const { removed, notSubscribed } = await withTransaction(ctx, actor.realm.id, async (work) => {
    // Read inside: a channel made private or archived since decides who is told what.
    const me = await accessCurrentActor(work.db, actor);
    const users = await resolvePrincipals(readingIn(ctx, work), me, principals);
    const others = users.some((u) => u.id !== me.user.id && u.bot_owner_id !== me.user.id);
    const found = await channelsStore.getChannelsByNames(work.db, me.realm.id, wanted);
    if (others) {
      const groupIds = await groupIdsOf(work.db, me.user);
      const mine = new Set(
        (await channelsStore.listUserSubscriptions(work.db, me.user.id))
          .filter((s) => s.active === 1)
          .map((s) => s.channel_id),
      );
      for (const channel of found.values()) {
        const access = computeChannelAccess(channel, me.user, mine.has(channel.id), groupIds);
        if (!canRemoveSubscribers(me.user, access, groupIds))
          throw badRequest('Insufficient permission');
      }
    }
    const missing = wanted.filter((n) => !found.has(n.toLowerCase()));
    if (missing.length > 0) throw badRequest(`Channel(s) (${missing.join(', ')}) do not exist`);
    const channels: ChannelRow[] = [];
    for (const n of wanted) {
      const c = found.get(n.toLowerCase())!;
      if (!channels.includes(c)) channels.push(c);
    }
    return doBulkUnsubscribe(work, me.realm, channels, users);
  });
  return {
    removed: removed.map((r) => r.channel.name),
    not_removed: notSubscribed.map((r) => r.channel.name),
  };
}

export interface PropertyChange {
  stream_id: number;
  property: string;
  value: boolean | string;
}

/** Check a change's property and value type, as the reference server does before anything else. */
function checkPropertyChange(change: PropertyChange): void {
  const kind = (SUBSCRIPTION_PROPERTIES as Record<string, string>)[change.property];
  if (kind === undefined) throw badRequest(`Unknown subscription property: ${change.property}`);
  if (kind === 'color') {
    if (typeof change.value !== 'string') throw badRequest('color is not a string');
    if (!isValidColor(change.value)) throw badRequest('color is not a valid hex color code');
  } else if (typeof change.value !== 'boolean') {
    throw badRequest(`${change.property} is not a boolean`);
  }
}

/**
 * POST /users/me/subscriptions/properties (and PATCH /users/me/subscriptions/{id}): change
 * the actor's own settings for channels they are subscribed to. All changes apply together.
 */
export async function updateSubscriptionProperties(
  ctx: AppContext,
  actor: Actor,
  changes: PropertyChange[],
): Promise<void> {
  for (const change of changes) checkPropertyChange(change);
  await withTransaction(ctx, actor.realm.id, async (work) => {
    // Inside: an unsubscription or a deactivation committed since leaves nothing to change.
    const me = await accessCurrentActor(work.db, actor);
    for (const change of changes) {
      const { channel } = await accessChannelById(readingIn(ctx, work), me, change.stream_id, {
        content: true,
      });
      const sub = await channelsStore.getSubscription(work.db, me.user.id, channel.id);
      if (sub?.active !== 1) throw badRequest(`Not subscribed to channel ID ${change.stream_id}`);
    }
    for (const { stream_id: streamId, property, value } of changes) {
      const emit = (name: string, v: boolean | string) =>
        work.emitOnCommit(
          { type: 'subscription', op: 'update', property: name, value: v, stream_id: streamId },
          [me.user.id],
        );
      if (property === 'is_muted' || property === 'in_home_view') {
        const muted = property === 'is_muted' ? (value as boolean) : !(value as boolean);
        await channelsStore.updateSubscription(work.db, me.user.id, streamId, {
          is_muted: muted ? 1 : 0,
        });
        // Clients that predate is_muted still read in_home_view.
        emit('in_home_view', !muted);
        emit('is_muted', muted);
        continue;
      }
      const column = property as Exclude<SubscriptionProperty, 'is_muted' | 'in_home_view'>;
      const stored: Partial<SubscriptionRow> =
        column === 'color' ? { color: value as string } : { [column]: value ? 1 : 0 };
      await channelsStore.updateSubscription(work.db, me.user.id, streamId, stored);
      emit(property, value);
    }
  });
}
