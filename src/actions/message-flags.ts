// Personal message flags: read, starred and collapsed, changed by message ids, over a
// narrow, or in bulk (everything, a channel, a topic).
//
// Every unread message stays in a channel the user is subscribed to: marking unread skips
// messages of other channels and names those channels. A readable message the user never
// received gets a historical delivery row the first time a flag change makes a difference.
// Events list only the messages whose flag actually changed, one event per change, so a
// queue replays read and unread in the order they happened.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { badRequest } from '../lib/errors.ts';
import { EDITABLE_FLAGS, FLAG_BITS, KNOWN_FLAGS, type FlagName } from '../lib/message-flags.ts';
import { HISTORICAL_FLAGS } from '../lib/presenters/messages.ts';
import { topicPolicyKey, unreadMessageDetails } from '../lib/unreads.ts';
import * as channelsStore from '../store/channels.ts';
import type { Q } from '../store/db.ts';
import * as flagsStore from '../store/message-flags.ts';
import * as messagesStore from '../store/messages.ts';
import type { MessageRow } from '../store/schema.ts';
import * as userTopicsStore from '../store/user-topics.ts';
import { loadChannelAccessById } from './channel-access.ts';
import { filterReadableMessages, invalidMessage } from './message-access.ts';
import { findAnchoredRange, resolveNarrow } from './message-fetch.ts';
import { topicNamedIn } from './message-present.ts';
import { accessCurrentActor } from './permissions.ts';
import type { GenericEvent } from '../events/types.ts';
import { withTransaction, type Work } from './transaction.ts';

/** At most this many messages are changed by one flags-for-narrow request. */
export const MAX_MESSAGES_PER_UPDATE = 5000;

export interface FlagChange {
  op: string;
  flag: string;
}

interface CheckedChange {
  op: 'add' | 'remove';
  flag: FlagName;
  bit: number;
}

/** The reference server's checks, in its order: known flag, editable flag, operation. */
function checkFlagChange(p: FlagChange): CheckedChange {
  if (!KNOWN_FLAGS.includes(p.flag)) throw badRequest(`Invalid flag: '${p.flag}'`);
  if (!(EDITABLE_FLAGS as string[]).includes(p.flag)) {
    throw badRequest(`Flag not editable: '${p.flag}'`);
  }
  if (p.op !== 'add' && p.op !== 'remove') {
    throw badRequest(`Invalid message flag operation: '${p.op}'`);
  }
  const flag = p.flag as FlagName;
  return { op: p.op, flag, bit: FLAG_BITS[flag] };
}

const marksUnread = (c: CheckedChange): boolean => c.flag === 'read' && c.op === 'remove';

interface Applied {
  changed: number[];
  ignoredChannels: number[];
}

/**
 * Apply a checked change to messages the actor may flag (rows: the messages; flags: the
 * actor's bits, absent without a delivery row) and queue the event.
 */
async function applyFlagChange(
  work: Work,
  actor: Actor,
  change: CheckedChange,
  rows: MessageRow[],
  flags: Map<number, number>,
): Promise<Applied> {
  const db = work.db;
  let targets = rows;
  let ignoredChannels: number[] = [];
  if (marksUnread(change)) {
    const subscribed = await activeSubscriptions(db, actor.user.id);
    const skipped = rows.filter((m) => m.channel_id !== null && !subscribed.has(m.channel_id));
    ignoredChannels = [...new Set(skipped.map((m) => m.channel_id!))].sort((a, b) => a - b);
    targets = rows.filter((m) => !skipped.includes(m));
  }
  const add = change.op === 'add';
  const changed: number[] = [];
  const toUpdate: number[] = [];
  const historical: messagesStore.UserMessageRow[] = [];
  for (const m of targets) {
    const before = flags.get(m.id);
    const old = before ?? HISTORICAL_FLAGS;
    const now = add ? old | change.bit : old & ~change.bit;
    if (now === old) continue;
    changed.push(m.id);
    if (before === undefined) {
      historical.push({ user_id: actor.user.id, message_id: m.id, flags: now });
    } else {
      toUpdate.push(m.id);
    }
  }
  await flagsStore.updateFlagBit(db, actor.user.id, toUpdate, change.bit, add);
  await messagesStore.insertUserMessages(db, historical);
  changed.sort((a, b) => a - b);
  if (changed.length > 0) {
    const event: GenericEvent = {
      type: 'update_message_flags',
      op: change.op,
      // Deprecated name of op, still read by older clients.
      operation: change.op,
      flag: change.flag,
      messages: changed,
      all: false,
    };
    if (marksUnread(change)) {
      const byId = new Map(rows.map((m) => [m.id, m]));
      event.message_details = await messageDetails(
        db,
        actor,
        changed.map((id) => byId.get(id)!),
      );
    }
    work.emitOnCommit(event, [actor.user.id]);
  }
  return { changed, ignoredChannels };
}

async function activeSubscriptions(db: Q, userId: number): Promise<Set<number>> {
  const subs = await channelsStore.listUserSubscriptions(db, userId);
  return new Set(subs.filter((s) => s.active === 1).map((s) => s.channel_id));
}

/** What clients need to put newly unread messages back into unread_msgs. */
async function messageDetails(
  db: Q,
  actor: Actor,
  rows: MessageRow[],
): Promise<Record<string, Record<string, unknown>>> {
  const userId = actor.user.id;
  const subs = (await channelsStore.listUserSubscriptions(db, userId)).filter(
    (s) => s.active === 1,
  );
  const policies = await userTopicsStore.listUserTopics(db, userId);
  const participants = await messagesStore.listDirectParticipants(
    db,
    rows.filter((m) => m.channel_id === null).map((m) => m.recipient_id),
  );
  const flags = await messagesStore.getUserMessageFlags(
    db,
    userId,
    rows.map((m) => m.id),
  );
  return unreadMessageDetails(
    rows.map((m) => ({
      message_id: m.id,
      flags: flags.get(m.id) ?? 0,
      channel_id: m.channel_id,
      topic: m.topic,
      recipient_id: m.recipient_id,
    })),
    {
      userId,
      subscribed: new Set(subs.map((s) => s.channel_id)),
      mutedChannels: new Set(subs.filter((s) => s.is_muted === 1).map((s) => s.channel_id)),
      topicPolicies: new Map(
        policies.map((p) => [topicPolicyKey(p.channel_id, p.topic_name), p.visibility_policy]),
      ),
      participants,
      emptyTopicName: null,
      truncated: false,
    },
  );
}

function flagsResponse(change: CheckedChange, applied: Applied): Record<string, unknown> {
  return marksUnread(change)
    ? { ignored_because_not_subscribed_channels: applied.ignoredChannels }
    : {};
}

/**
 * POST /messages/flags. A message the actor received can always be flagged (even after
 * losing access to its channel, as the reference server allows); any other must be readable.
 */
export async function updateMessageFlags(
  ctx: AppContext,
  actor: Actor,
  p: FlagChange & { messages: number[] },
): Promise<Record<string, unknown>> {
  const change = checkFlagChange(p);
  return withTransaction(ctx, actor.realm.id, async (work) => {
    const db = work.db;
    // Which messages the actor may read is decided by their role as it is now.
    const me = await accessCurrentActor(db, actor);
    const ids = [...new Set(p.messages)];
    const rows = await messagesStore.listMessagesByIds(db, me.realm.id, ids);
    if (rows.length !== ids.length) throw invalidMessage();
    const flags = await messagesStore.getUserMessageFlags(db, me.user.id, ids);
    const unreceived = rows.filter((m) => !flags.has(m.id));
    const readable = await filterReadableMessages(db, me.user, unreceived);
    if (readable.length !== unreceived.length) throw invalidMessage();
    const applied = await applyFlagChange(work, me, change, rows, flags);
    return { messages: applied.changed, ...flagsResponse(change, applied) };
  });
}

export interface NarrowFlagChange extends FlagChange {
  anchor: number | string;
  includeAnchor: boolean;
  numBefore: number;
  numAfter: number;
  narrow: unknown[];
}

/** POST /messages/flags/narrow: the range GET /messages would return, at most 5000. */
export async function updateMessageFlagsForNarrow(
  ctx: AppContext,
  actor: Actor,
  p: NarrowFlagChange,
): Promise<Record<string, unknown>> {
  const change = checkFlagChange(p);
  if (p.numBefore > 0 && p.numAfter > 0 && !p.includeAnchor) {
    throw badRequest('The anchor can only be excluded at an end of the range');
  }
  // As the reference server does: shrink the request to the limit, favouring num_after.
  const numBefore = Math.min(
    p.numBefore,
    Math.max(MAX_MESSAGES_PER_UPDATE - p.numAfter, MAX_MESSAGES_PER_UPDATE / 2),
  );
  const numAfter = Math.min(p.numAfter, MAX_MESSAGES_PER_UPDATE - numBefore);
  return withTransaction(ctx, actor.realm.id, async (work) => {
    const db = work.db;
    // The narrow is resolved with the actor's role as it is now (what a guest may read).
    const me = await accessCurrentActor(db, actor);
    const narrow = await resolveNarrow(db, me, p.narrow);
    const range = await findAnchoredRange(db, narrow, {
      anchor: p.anchor,
      useFirstUnreadAnchor: false,
      includeAnchor: p.includeAnchor,
      numBefore,
      numAfter,
    });
    const ids = range.found.map((f) => f.id);
    const rows = await messagesStore.listMessagesByIds(db, me.realm.id, ids);
    const flags = await messagesStore.getUserMessageFlags(db, me.user.id, ids);
    const applied = await applyFlagChange(work, me, change, rows, flags);
    return {
      processed_count: ids.length,
      updated_count: applied.changed.length,
      first_processed_id: ids.length > 0 ? ids[0] : null,
      last_processed_id: ids.length > 0 ? ids[ids.length - 1] : null,
      found_oldest: range.foundOldest,
      found_newest: range.foundNewest,
      ...flagsResponse(change, applied),
    };
  });
}

/**
 * Mark the user's unread messages read; one event naming them (or all:true for all). Also
 * used by muted-users.ts for a muted sender's messages. actor is as accessCurrentActor read
 * them inside work's transaction.
 */
export async function markRead(
  work: Work,
  actor: Actor,
  where: { recipientId?: number; topic?: string; senderId?: number } | 'all',
): Promise<void> {
  const userId = actor.user.id;
  const ids = await flagsStore.listUnreadMessageIds(work.db, userId, where === 'all' ? {} : where);
  if (ids.length === 0) return;
  await flagsStore.updateFlagBit(work.db, userId, ids, FLAG_BITS.read, true);
  work.emitOnCommit(
    {
      type: 'update_message_flags',
      op: 'add',
      operation: 'add',
      flag: 'read',
      messages: where === 'all' ? [] : ids,
      all: where === 'all',
    },
    [userId],
  );
}

/** POST /mark_all_as_read: done in one transaction, so always complete. */
export async function markAllAsRead(ctx: AppContext, actor: Actor): Promise<{ complete: true }> {
  await withTransaction(ctx, actor.realm.id, async (work) => {
    // A user deactivated since marks nothing (architecture.md, Actions).
    const me = await accessCurrentActor(work.db, actor);
    await markRead(work, me, 'all');
  });
  return { complete: true };
}

/** POST /mark_stream_as_read and /mark_topic_as_read (topic: a topic the user has messages in). */
export async function markChannelAsRead(
  ctx: AppContext,
  actor: Actor,
  channelId: number,
  topicName?: string,
): Promise<void> {
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const me = await accessCurrentActor(work.db, actor);
    const { channel } = await loadChannelAccessById(work.db, me, channelId, {
      content: true,
      allowArchived: true,
    });
    let topic: string | undefined;
    if (topicName !== undefined) {
      topic = topicNamedIn(me.realm, topicName);
      const mine = await messagesStore.listTopicMessages(work.db, channel.id, topic, {
        onlyWithRowOf: me.user.id,
        limit: 1,
      });
      if (mine.length === 0) throw badRequest(`No such topic '${topicName}'`);
    }
    await markRead(work, me, { recipientId: channel.recipient_id!, topic });
  });
}
