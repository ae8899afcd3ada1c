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
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { readChannelSettings, type ChannelGroupSettingName } from '../lib/channel-settings.ts';
import { badRequest, JsonableError } from '../lib/errors.ts';
import { isAdmin, isGuest } from '../lib/roles.ts';
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
  user: UserRow,
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

/** A channel of the actor's realm by id, which the actor may at least know exists. */
export async function accessChannelById(
  ctx: AppContext,
  actor: Actor,
  id: number,
  opts: { content?: boolean } = {},
): Promise<ChannelAccess> {
  const channel = await channels.getChannel(ctx.db, actor.realm.id, id);
  if (!channel) throw invalidChannelId();
  const access = await getChannelAccess(ctx.db, actor.user, channel);
  if (!access.metadata || (opts.content && !access.content)) throw invalidChannelId();
  return access;
}

/** A channel by name; unknown and invisible channels are reported alike. */
export async function accessChannelByName(
  ctx: AppContext,
  actor: Actor,
  name: string,
  opts: { content?: boolean } = {},
): Promise<ChannelAccess> {
  const channel = await channels.getChannelByName(ctx.db, actor.realm.id, name);
  if (!channel) throw channelDoesNotExist(name);
  const access = await getChannelAccess(ctx.db, actor.user, channel);
  if (!access.metadata || (opts.content && !access.content)) throw channelDoesNotExist(name);
  return access;
}

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
  const [users, subscribers, ...members] = await Promise.all([
    usersStore.listUsers(db, realm.id),
    channels.listSubscriberIds(db, channel.id),
    ...grantGroups.map((g) => groups.listRecursiveMembers(db, g)),
  ]);
  const subscribed = new Set(subscribers);
  const out: number[] = [];
  for (const u of users) {
    if (!u.is_active) continue;
    // Only the channel's own groups matter here, so membership comes from their member lists.
    const groupIds = new Set(grantGroups.filter((_, i) => members[i].includes(u.id)));
    if (computeChannelAccess(channel, u, subscribed.has(u.id), groupIds).metadata) out.push(u.id);
  }
  return out;
}
