// The register snapshot's message summaries: unread messages grouped by conversation,
// and the recent direct-message conversations. Pure: the caller loads the rows.
import { FLAG_BITS } from './message-flags.ts';

/** At most this many unread messages are summarized (old_unreads_missing beyond). */
export const MAX_UNREAD_MESSAGES = 50000;
/** Recent conversations come from this many most recent direct messages. */
export const RECENT_CONVERSATIONS_MESSAGES = 1000;

const TOPIC_POLICY = { muted: 1, unmuted: 2, followed: 3 } as const;

export interface UnreadInput {
  message_id: number;
  flags: number;
  channel_id: number | null;
  topic: string;
  recipient_id: number;
}

export interface UnreadContext {
  userId: number;
  /** Channels the user is actively subscribed to; unreads elsewhere are left out. */
  subscribed: Set<number>;
  mutedChannels: Set<number>;
  /** Visibility policy by `${channel_id}:${lower-cased topic}`. */
  topicPolicies: Map<string, number>;
  /** Participants of each direct-message conversation. */
  participants: Map<number, number[]>;
  /** The empty topic's name for clients without empty_topic_name, or null to keep "". */
  emptyTopicName: string | null;
  /** More unread messages exist than the rows given. */
  truncated: boolean;
}

export const topicPolicyKey = (channelId: number, topic: string): string =>
  `${channelId}:${topic.toLowerCase()}`;

function isMuted(u: UnreadInput, c: UnreadContext): boolean {
  const policy = c.topicPolicies.get(topicPolicyKey(u.channel_id!, u.topic));
  if (policy === TOPIC_POLICY.muted) return true;
  if (policy === TOPIC_POLICY.unmuted || policy === TOPIC_POLICY.followed) return false;
  return c.mutedChannels.has(u.channel_id!);
}

const MENTION = FLAG_BITS.mentioned;
const WILDCARD = FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned;

/** unread_msgs: {pms, streams, huddles, mentions, count, old_unreads_missing}. */
export function summarizeUnreads(rows: UnreadInput[], c: UnreadContext): Record<string, unknown> {
  const pms = new Map<number, number[]>();
  const streams = new Map<string, { stream_id: number; topic: string; ids: number[] }>();
  const huddles = new Map<string, number[]>();
  const mentions: number[] = [];
  let count = 0;
  for (const u of rows) {
    if (u.channel_id !== null) {
      if (!c.subscribed.has(u.channel_id)) continue;
      const muted = isMuted(u, c);
      const key = `${u.channel_id}\u0000${u.topic}`;
      const entry = streams.get(key) ?? { stream_id: u.channel_id, topic: u.topic, ids: [] };
      entry.ids.push(u.message_id);
      streams.set(key, entry);
      if (!muted) count++;
      if (u.flags & MENTION || (u.flags & WILDCARD && !muted)) mentions.push(u.message_id);
      continue;
    }
    count++;
    if (u.flags & (MENTION | WILDCARD)) mentions.push(u.message_id);
    const people = c.participants.get(u.recipient_id) ?? [c.userId];
    if (people.length <= 2) {
      const other = people.find((id) => id !== c.userId) ?? c.userId;
      pms.set(other, [...(pms.get(other) ?? []), u.message_id]);
    } else {
      const key = [...people].sort((a, b) => a - b).join(',');
      huddles.set(key, [...(huddles.get(key) ?? []), u.message_id]);
    }
  }
  const sortIds = (ids: number[]) => [...ids].sort((a, b) => a - b);
  const shownTopic = (t: string) => (t === '' && c.emptyTopicName !== null ? c.emptyTopicName : t);
  return {
    pms: [...pms]
      .sort(([a], [b]) => a - b)
      .map(([other, ids]) => ({
        other_user_id: other,
        sender_id: other,
        unread_message_ids: sortIds(ids),
      })),
    streams: [...streams.values()]
      .map((s) => ({
        stream_id: s.stream_id,
        topic: shownTopic(s.topic),
        unread_message_ids: sortIds(s.ids),
      }))
      .sort(
        (a, b) => a.stream_id - b.stream_id || (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0),
      ),
    huddles: [...huddles]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, ids]) => ({ user_ids_string: key, unread_message_ids: sortIds(ids) })),
    mentions: sortIds(mentions),
    count,
    old_unreads_missing: c.truncated,
  };
}

/**
 * message_details of a "mark unread" event: what a client needs to put these messages back
 * into unread_msgs by the same rules as summarizeUnreads (channel rows must be in
 * subscribed channels). Topics are kept as stored; event shaping renames the empty one.
 */
export function unreadMessageDetails(
  rows: UnreadInput[],
  c: UnreadContext,
): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const u of rows) {
    let d: Record<string, unknown>;
    let mentioned: boolean;
    if (u.channel_id !== null) {
      const muted = isMuted(u, c);
      d = { type: 'stream', stream_id: u.channel_id, topic: u.topic, unmuted_stream_msg: !muted };
      mentioned = (u.flags & MENTION) !== 0 || ((u.flags & WILDCARD) !== 0 && !muted);
    } else {
      const people = c.participants.get(u.recipient_id) ?? [c.userId];
      d = {
        type: 'private',
        user_ids: people.filter((id) => id !== c.userId).sort((a, b) => a - b),
      };
      mentioned = (u.flags & (MENTION | WILDCARD)) !== 0;
    }
    if (mentioned) d.mentioned = true;
    out[String(u.message_id)] = d;
  }
  return out;
}

/** recent_private_conversations: one entry per conversation, most recent first. */
export function summarizeRecentConversations(
  rows: Array<{ recipient_id: number; message_id: number }>,
  participants: Map<number, number[]>,
  userId: number,
): Array<{ user_ids: number[]; max_message_id: number }> {
  const latest = new Map<number, number>();
  for (const r of rows)
    latest.set(r.recipient_id, Math.max(latest.get(r.recipient_id) ?? 0, r.message_id));
  return [...latest]
    .sort(([, a], [, b]) => b - a)
    .map(([recipientId, max]) => ({
      user_ids: (participants.get(recipientId) ?? [])
        .filter((id) => id !== userId)
        .sort((a, b) => a - b),
      max_message_id: max,
    }));
}
