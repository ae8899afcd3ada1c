// The only place message rows become API JSON: the message object of GET /messages,
// GET /messages/{id}, message events and outgoing-webhook payloads.
import type { MessageRow, ReactionRow, UserRow } from '../../store/schema.ts';
import { flagsToNames, FLAG_BITS } from '../message-flags.ts';
import { isMoveEntry, readEditHistory, type EditHistoryEntry } from '../messages.ts';
import { avatarUrl, canSeeDeliveryEmail, type Viewer } from './users.ts';

export interface TopicLinkJson {
  text: string;
  url: string;
}

/** A message with everything its presentation needs, loaded in bulk by the caller. */
export interface MessageForPresenting {
  row: MessageRow;
  sender: UserRow;
  /** The channel's name, or every participant of the direct-message conversation. */
  recipient: { channelName: string } | { participants: UserRow[] };
  reactions: ReactionRow[];
  topicLinks: TopicLinkJson[];
}

/** What a limited guest sees of a sender they cannot access. */
export interface SenderPlaceholder {
  full_name: string;
  email: string;
  avatar_url: string;
}

export type EditHistoryPolicy = 'all' | 'moves' | 'none';

export interface MessagePresentOptions {
  viewer: Viewer | null;
  /** content as HTML (true) or as the Markdown source. */
  applyMarkdown: boolean;
  clientGravatar: boolean;
  /** False: the empty topic is shown as emptyTopicDisplayName. */
  allowEmptyTopicName: boolean;
  emptyTopicDisplayName: string;
  editHistoryPolicy: EditHistoryPolicy;
  realmStringId: string;
  /** Set when the viewer may not access the sender. */
  senderPlaceholder?: SenderPlaceholder;
  /** Add rendered_content (the outgoing-webhook shape). */
  includeRenderedContent?: boolean;
}

/** Flags of a message the viewer has no row for: visible through shared history. */
export const HISTORICAL_FLAGS = FLAG_BITS.read | FLAG_BITS.historical;

export function presentFlags(bits: number | undefined): string[] {
  return flagsToNames(bits ?? HISTORICAL_FLAGS);
}

export function displayTopic(topic: string, opts: MessagePresentOptions): string {
  return topic === '' && !opts.allowEmptyTopicName ? opts.emptyTopicDisplayName : topic;
}

/** Edit history as the organization lets its members see it, most recent first. */
export function presentEditHistory(
  entries: EditHistoryEntry[],
  opts: MessagePresentOptions,
): Record<string, unknown>[] | undefined {
  if (opts.editHistoryPolicy === 'none' || entries.length === 0) return undefined;
  const visible =
    opts.editHistoryPolicy === 'moves'
      ? entries
          .filter(isMoveEntry)
          .map(({ prev_content: _c, prev_rendered_content: _r, ...rest }) => rest)
      : entries;
  if (visible.length === 0) return undefined;
  return visible.map((e) => {
    const out: Record<string, unknown> = { ...e };
    if (e.prev_topic !== undefined) out.prev_topic = displayTopic(e.prev_topic, opts);
    if (e.topic !== undefined) out.topic = displayTopic(e.topic, opts);
    return out;
  });
}

function presentDisplayRecipient(m: MessageForPresenting): string | Record<string, unknown>[] {
  if ('channelName' in m.recipient) return m.recipient.channelName;
  return [...m.recipient.participants]
    .sort((a, b) => a.id - b.id)
    .map((u) => ({ id: u.id, email: u.email, full_name: u.full_name, is_mirror_dummy: false }));
}

export function presentReactions(reactions: ReactionRow[]): Record<string, unknown>[] {
  return [...reactions]
    .sort((a, b) => a.id - b.id)
    .map((r) => ({
      emoji_name: r.emoji_name,
      emoji_code: r.emoji_code,
      reaction_type: r.reaction_type,
      user_id: r.user_id,
    }));
}

/** The sender's avatar: null where the client computes it (client_gravatar). */
export function senderAvatarUrl(sender: UserRow, opts: MessagePresentOptions): string | null {
  if (opts.senderPlaceholder) return opts.senderPlaceholder.avatar_url;
  if (
    opts.clientGravatar &&
    sender.avatar_source === 'G' &&
    canSeeDeliveryEmail(opts.viewer, sender)
  )
    return null;
  return avatarUrl(sender);
}

/** The message object, without the viewer's flags (callers add them where the API has them). */
export function presentMessage(
  m: MessageForPresenting,
  opts: MessagePresentOptions,
): Record<string, unknown> {
  const { row, sender } = m;
  const isChannel = row.channel_id !== null;
  const out: Record<string, unknown> = {
    id: row.id,
    sender_id: sender.id,
    content: opts.applyMarkdown ? row.rendered_content : row.content,
    recipient_id: row.recipient_id,
    timestamp: row.date_sent,
    client: row.sending_client,
    subject: isChannel ? displayTopic(row.topic, opts) : '',
    topic_links: isChannel ? m.topicLinks : [],
    is_me_message: row.is_me_message === 1,
    reactions: presentReactions(m.reactions),
    submessages: [],
    sender_full_name: opts.senderPlaceholder?.full_name ?? sender.full_name,
    sender_email: opts.senderPlaceholder?.email ?? sender.email,
    sender_realm_str: opts.realmStringId,
    display_recipient: presentDisplayRecipient(m),
    type: isChannel ? 'stream' : 'private',
    avatar_url: senderAvatarUrl(sender, opts),
    content_type: opts.applyMarkdown ? 'text/html' : 'text/x-markdown',
  };
  if (isChannel) out.stream_id = row.channel_id;
  if (opts.includeRenderedContent) out.rendered_content = row.rendered_content;
  const history = presentEditHistory(readEditHistory(row.edit_history), opts);
  if (history) out.edit_history = history;
  if (row.last_edit_time !== null) out.last_edit_timestamp = row.last_edit_time;
  if (row.last_moved_time !== null) out.last_moved_timestamp = row.last_moved_time;
  return out;
}
