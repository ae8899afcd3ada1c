// Who may see a channel exist (metadata) and who may read its messages (content).
// The one place these rules live; every channel and message route asks here.
//
// - Administrators see every channel's metadata; other members see public and web-public
//   channels, channels they are subscribed to, and private channels whose add-subscribers,
//   subscribe or administer group holds them. Guests see only their subscriptions and
//   web-public channels.
// - Content: subscribers; any member for public channels; anyone for web-public ones;
//   members of a private channel's add-subscribers or subscribe group. An administrator
//   who is not subscribed to a private channel sees its metadata, not its messages.
// - Archived channels keep these rules, but the access* lookups report them as unknown
//   unless the caller allows archived channels (administration, unsubscribing).
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { readChannelSettings, type ChannelGroupSettingName } from '../lib/channel-settings.ts';
import { badRequest, JsonableError } from '../lib/errors.ts';
import { isAdmin, isGuest, type HasRole } from '../lib/roles.ts';
import * as channels from '../store/channels.ts';
import type { Q } from '../store/db.ts';
import type { ChannelRow, RealmRow, UserRow } from '../store/schema.ts';
import * as groups from '../store/user-groups.ts';
import * as usersStore from '../store/users.ts';

export interface ChannelAccess {
  channel: ChannelRow;
  subscribed: boolean;
  metadata: boolean;
  content: boolean;
}

/** The groups a user is in (directly or through subgroups); callers reuse it across checks. */
export async function groupIdsOf(db: Q, user: UserRow): Promise<Set<number>> {
  return new Set(user.is_active ? await groups.listGroupIdsContainingUser(db, user.id) : []);
}

export function inChannelGroup(
  channel: ChannelRow,
  setting: ChannelGroupSettingName,
  groupIds: Set<number>,
): boolean {
  return groupIds.has(readChannelSettings(channel.settings)[setting]);
}

export function computeChannelAccess(
  channel: ChannelRow,
  user: HasRole,
  subscribed: boolean,
  groupIds: Set<number>,
): ChannelAccess {
  const isPublic = channel.invite_only === 0;
  const webPublic = channel.is_web_public === 1;
  const guest = isGuest(user);
  const inPrivateGrant =
    inChannelGroup(channel, 'can_add_subscribers_group', groupIds) ||
    inChannelGroup(channel, 'can_subscribe_group', groupIds);
  const content = subscribed || webPublic || (!guest && (isPublic || inPrivateGrant));
  const metadata =
    content ||
    isAdmin(user) ||
    (!guest && inChannelGroup(channel, 'can_administer_channel_group', groupIds));
  return { channel, subscribed, metadata, content };
}

export async function getChannelAccess(
  db: Q,
  user: UserRow,
  channel: ChannelRow,
  groupIds?: Set<number>,
): Promise<ChannelAccess> {
  const sub = await channels.getSubscription(db, user.id, channel.id);
  return computeChannelAccess(
    channel,
    user,
    sub?.active === 1,
    groupIds ?? (await groupIdsOf(db, user)),
  );
}

export const invalidChannelId = (): JsonableError => badRequest('Invalid channel ID');

export function channelDoesNotExist(name: string): JsonableError {
  return new JsonableError(`Channel '${name}' does not exist`, 'STREAM_DOES_NOT_EXIST', 400, {
    stream: name,
  });
}

export const cannotAdministerChannel = (): JsonableError =>
  new JsonableError(
    'You do not have permission to administer this channel.',
    'CANNOT_ADMINISTER_CHANNEL',
    400,
  );

export interface AccessOptions {
  /** Require access to the messages, not only to the channel's existence. */
  content?: boolean;
  /** Archived channels count too (by default they are reported as unknown). */
  allowArchived?: boolean;
}

function allowed(access: ChannelAccess, opts: AccessOptions): boolean {
  if (access.channel.is_archived === 1 && !opts.allowArchived) return false;
  return opts.content ? access.content : access.metadata;
}

/** accessChannelById on a given database handle (an open transaction, say). */
export async function loadChannelAccessById(
  db: Q,
  actor: Actor,
  id: number,
  opts: AccessOptions = {},
): Promise<ChannelAccess> {
  const channel = await channels.getChannel(db, actor.realm.id, id);
  if (!channel) throw invalidChannelId();
  const access = await getChannelAccess(db, actor.user, channel);
  if (!allowed(access, opts)) throw invalidChannelId();
  return access;
}

/** A channel of the actor's realm by id, which the actor may at least know exists. */
export async function accessChannelById(
  ctx: AppContext,
  actor: Actor,
  id: number,
  opts: AccessOptions = {},
): Promise<ChannelAccess> {
  return loadChannelAccessById(ctx.db, actor, id, opts);
}

/**
 * A channel by name; unknown and invisible channels are reported alike, by default as
 * STREAM_DOES_NOT_EXIST (message sending), or with the error notFound makes.
 */
export async function accessChannelByName(
  ctx: AppContext,
  actor: Actor,
  name: string,
  opts: AccessOptions & { notFound?: (name: string) => JsonableError } = {},
): Promise<ChannelAccess> {
  const notFound = opts.notFound ?? channelDoesNotExist;
  const channel = await channels.getChannelByName(ctx.db, actor.realm.id, name);
  if (!channel) throw notFound(name);
  const access = await getChannelAccess(ctx.db, actor.user, channel);
  if (!allowed(access, opts)) throw notFound(name);
  return access;
}

/** The error GET /get_stream_id and the default-group routes give for unknown names. */
export const invalidChannelName = (name: string): JsonableError =>
  badRequest(`Invalid channel name '${name}'`);

/** Organization administrators, and members of the channel's administer group. */
export async function canAdministerChannel(
  db: Q,
  user: UserRow,
  channel: ChannelRow,
  groupIds?: Set<number>,
): Promise<boolean> {
  if (isAdmin(user)) return true;
  if (isGuest(user)) return false;
  return inChannelGroup(
    channel,
    'can_administer_channel_group',
    groupIds ?? (await groupIdsOf(db, user)),
  );
}

/**
 * A channel the actor may administer (PATCH and DELETE /streams/{id}); archived ones too.
 * Users who may read the channel learn they cannot administer it; others that it is unknown.
 */
export async function accessChannelForAdministration(
  db: Q,
  actor: Actor,
  id: number,
): Promise<ChannelAccess> {
  const channel = await channels.getChannel(db, actor.realm.id, id);
  if (!channel) throw invalidChannelId();
  const groupIds = await groupIdsOf(db, actor.user);
  const access = await getChannelAccess(db, actor.user, channel, groupIds);
  if (await canAdministerChannel(db, actor.user, channel, groupIds)) return access;
  throw access.content ? cannotAdministerChannel() : invalidChannelId();
}

/**
 * Whether the user may subscribe others to a channel they can read: the organization's
 * add-subscribers group, administrators, and the channel's administer and add-subscribers groups.
 */
export function canAddSubscribers(
  user: UserRow,
  channel: ChannelRow,
  groupIds: Set<number>,
  realmGrants: boolean,
): boolean {
  if (isGuest(user)) return false;
  if (realmGrants || isAdmin(user)) return true;
  return (
    inChannelGroup(channel, 'can_administer_channel_group', groupIds) ||
    inChannelGroup(channel, 'can_add_subscribers_group', groupIds)
  );
}

/**
 * Whether the user may unsubscribe others: administrators; the channel's administer group;
 * members of its remove-subscribers group who can see the channel.
 */
export function canRemoveSubscribers(
  user: UserRow,
  access: ChannelAccess,
  groupIds: Set<number>,
): boolean {
  if (isAdmin(user)) return true;
  if (isGuest(user)) return false;
  if (inChannelGroup(access.channel, 'can_administer_channel_group', groupIds)) return true;
  return (
    access.metadata && inChannelGroup(access.channel, 'can_remove_subscribers_group', groupIds)
  );
}

/** Every channel of the realm with the user's access to it (one query per table, not per channel). */
export async function listChannelAccess(
  db: Q,
  realm: RealmRow,
  user: UserRow,
): Promise<ChannelAccess[]> {
  const [all, subs, groupIds] = await Promise.all([
    channels.listChannels(db, realm.id),
    channels.listUserSubscriptions(db, user.id),
    groupIdsOf(db, user),
  ]);
  const active = new Set(subs.filter((s) => s.active === 1).map((s) => s.channel_id));
  return all.map((c) => computeChannelAccess(c, user, active.has(c.id), groupIds));
}

/**
 * Active users who can see that the channel exists: the recipients of stream events.
 * Public channels: every member (guests only when subscribed or the channel is web-public);
 * private channels: subscribers, administrators and the channel's administer group.
 */
export async function usersWhoCanSeeChannel(
  db: Q,
  realm: RealmRow,
  channel: ChannelRow,
): Promise<number[]> {
  const settings = readChannelSettings(channel.settings);
  const grantGroups = [
    settings.can_add_subscribers_group,
    settings.can_subscribe_group,
    settings.can_administer_channel_group,
  ];
  // Ids and roles only: the first message of a channel in an organization of 10,000 read
  // every full user row (about 45 ms) just to decide this.
  const [users, subscribers, ...members] = await Promise.all([
    usersStore.listActiveRoles(db, realm.id),
    channels.listSubscriberIds(db, channel.id),
    ...grantGroups.map((g) => groups.listRecursiveMembers(db, g)),
  ]);
  const subscribed = new Set(subscribers);
  // Sets, not the lists: a large organization's member groups hold thousands each.
  const memberSets = members.map((ids) => new Set(ids));
  const out: number[] = [];
  for (const u of users) {
    // Only the channel's own groups matter here, so membership comes from their member lists.
    const groupIds = new Set(grantGroups.filter((_, i) => memberSets[i].has(u.id)));
    if (computeChannelAccess(channel, u, subscribed.has(u.id), groupIds).metadata) out.push(u.id);
  }
  return out;
}
