// Who may read a message, and who hears about changes to it.
//
// A direct message: its participants (they have a delivery row). A channel message: users
// with content access to the channel (channel-access.ts); when the channel's history is not
// shared with subscribers, only those among them who received the message.
import type { Actor } from '../lib/actor.ts';
import { badRequest, type JsonableError } from '../lib/errors.ts';
import { isGuest } from '../lib/roles.ts';
import * as channelsStore from '../store/channels.ts';
import type { Q } from '../store/db.ts';
import * as messagesStore from '../store/messages.ts';
import type { ChannelRow, MessageRow, UserRow } from '../store/schema.ts';
import * as usersStore from '../store/users.ts';
import { getChannelAccess, groupIdsOf, type ChannelAccess } from './channel-access.ts';

export const invalidMessage = (): JsonableError => badRequest('Invalid message(s)');

export interface MessageAccess {
  message: MessageRow;
  channel: ChannelRow | null;
  /** The actor's flags, or undefined when they have no row (shared history). */
  flags: number | undefined;
}

/** Whether content access to the channel lets the user read a message with or without a row. */
export function canReadChannelMessage(access: ChannelAccess, hasRow: boolean): boolean {
  return access.content && (access.channel.history_public_to_subscribers === 1 || hasRow);
}

/**
 * A message the actor may read, or "Invalid message(s)". With modifying, messages of
 * archived channels are refused too: they can be read, not changed.
 */
export async function accessMessage(
  db: Q,
  actor: Actor,
  id: number,
  opts: { modifying?: boolean } = {},
): Promise<MessageAccess> {
  const message = await messagesStore.getMessage(db, actor.realm.id, id);
  if (!message) throw invalidMessage();
  const flags = (await messagesStore.getUserMessageFlags(db, actor.user.id, [id])).get(id);
  if (message.channel_id === null) {
    if (flags === undefined) throw invalidMessage();
    return { message, channel: null, flags };
  }
  const channel = await channelsStore.getChannel(db, actor.realm.id, message.channel_id);
  if (!channel) throw invalidMessage();
  if (opts.modifying && channel.is_archived === 1) throw invalidMessage();
  const access = await getChannelAccess(db, actor.user, channel);
  if (!canReadChannelMessage(access, flags !== undefined)) throw invalidMessage();
  return { message, channel, flags };
}

/**
 * The subset of these messages the user may read, each with the user's flags (undefined
 * without a row). Channel access is computed once per channel.
 */
export async function filterReadableMessages(
  db: Q,
  user: UserRow,
  rows: MessageRow[],
): Promise<Array<{ message: MessageRow; flags: number | undefined }>> {
  const flags = await messagesStore.getUserMessageFlags(
    db,
    user.id,
    rows.map((r) => r.id),
  );
  const channelIds = [...new Set(rows.map((r) => r.channel_id).filter((c) => c !== null))];
  const channels = await channelsStore.listChannelsByIds(db, user.realm_id, channelIds);
  const groupIds = await groupIdsOf(db, user);
  const access = new Map<number, ChannelAccess>();
  for (const c of channels) access.set(c.id, await getChannelAccess(db, user, c, groupIds));
  const out: Array<{ message: MessageRow; flags: number | undefined }> = [];
  for (const message of rows) {
    const f = flags.get(message.id);
    const readable =
      message.channel_id === null
        ? f !== undefined
        : access.has(message.channel_id) &&
          canReadChannelMessage(access.get(message.channel_id)!, f !== undefined);
    if (readable) out.push({ message, flags: f });
  }
  return out;
}

/**
 * Active users told about changes to these messages (edits, deletions, reactions), all
 * in one conversation: direct messages → users with a row; a channel whose history is not
 * shared → its subscribers with a row; a private channel → its subscribers; a public
 * channel → its subscribers and the members (not guests) with a row.
 */
export async function messageAudience(
  db: Q,
  channel: ChannelRow | null,
  messageIds: number[],
): Promise<number[]> {
  const rows = await messagesStore.listUserMessages(db, messageIds);
  const holders = new Set(rows.map((r) => r.user_id));
  if (!channel) return [...holders].sort((a, b) => a - b);
  const subscribers = await channelsStore.listSubscriberIds(db, channel.id);
  let out: number[];
  if (channel.history_public_to_subscribers === 0) {
    out = subscribers.filter((id) => holders.has(id));
  } else if (channel.invite_only === 1) {
    out = subscribers;
  } else {
    const members = await nonGuestIds(db, channel.realm_id, [...holders]);
    out = [...new Set([...subscribers, ...members])];
  }
  return out.sort((a, b) => a - b);
}

async function nonGuestIds(db: Q, realmId: number, ids: number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  return (await usersStore.listUsersByIds(db, realmId, ids))
    .filter((u) => !isGuest(u))
    .map((u) => u.id);
}
