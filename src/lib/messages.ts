// Message rules that need no database: content and topic normalization, the sending
// client's name, conversation keys, resolved topics, edit history entries.
import {
  MAX_MESSAGE_LENGTH,
  MAX_TOPIC_LENGTH,
  type ChannelTopicsPolicy,
} from './channel-settings.ts';
import { badRequest } from './errors.ts';

export const RESOLVED_TOPIC_PREFIX = '✔ ';
/** What older clients send for the empty topic. */
export const LEGACY_EMPTY_TOPIC = '(no topic)';
export const MAX_MESSAGES_PER_FETCH = 5000;

/** A silent mention: names the user in a notice without notifying them. */
export const silentMention = (u: { id: number; full_name: string }): string =>
  `@_**${u.full_name}|${u.id}**`;

/** The topic of the Notification Bot's new-channel announcements. */
export const NEW_CHANNELS_TOPIC = 'new channels';

/** The announcement of channels someone created, linking each. */
export function newChannelsAnnouncement(
  creator: { id: number; full_name: string },
  channelNames: string[],
): string {
  const links = channelNames.map((n) => `#**${n}**`).join(', ');
  return channelNames.length > 1
    ? `${silentMention(creator)} created the following channels: ${links}.`
    : `${silentMention(creator)} created a new channel ${links}.`;
}

const cut = (text: string, max: number, marker: string): string => {
  const chars = [...text];
  if (chars.length <= max) return text;
  return chars.slice(0, max - [...marker].length).join('') + marker;
};

/** Message content as stored: trailing space and leading newlines removed, over-long cut. */
export function normalizeContent(raw: string): string {
  const body = raw.trimEnd().replace(/^\n+/, '');
  if (body === '') throw badRequest('Message must not be empty');
  if (body.includes('\u0000')) throw badRequest('Message must not contain null bytes');
  return cut(body, MAX_MESSAGE_LENGTH, '\n[message truncated]');
}

/** Position (1-based) of the first control, surrogate or unassigned character, if any. */
function firstUnprintable(text: string): number | null {
  let i = 0;
  for (const ch of text) {
    i += 1;
    if (/[\p{Cc}\p{Cs}\p{Cn}]/u.test(ch)) return i;
  }
  return null;
}

/**
 * A channel topic as stored: trimmed, over-long cut, the legacy "(no topic)" and the
 * organization's display name for the empty topic read as the empty topic.
 */
export function normalizeTopic(raw: string, emptyTopicDisplayName: string): string {
  const topic = raw.trim();
  if (topic.includes('\u0000')) throw badRequest('Topic must not contain null bytes');
  const bad = firstUnprintable(topic);
  if (bad !== null) throw badRequest(`Invalid character in topic, at position ${bad}!`);
  if (topic === LEGACY_EMPTY_TOPIC || topic === emptyTopicDisplayName) return '';
  return cut(topic, MAX_TOPIC_LENGTH, '...');
}

/** The empty-topic rule in force for a channel: its own policy, or the organization's. */
export function effectiveTopicsPolicy(
  channelPolicy: string,
  realmPolicy: string,
): Exclude<ChannelTopicsPolicy, 'inherit'> {
  const policy = channelPolicy === 'inherit' ? realmPolicy : channelPolicy;
  return policy === 'disable_empty_topic' || policy === 'empty_topic_only'
    ? policy
    : 'allow_empty_topic';
}

/** Refuse a topic the channel's policy does not allow. */
export function checkTopicAllowed(
  topic: string,
  channelPolicy: string,
  realmPolicy: string,
  emptyTopicDisplayName: string,
): void {
  const policy = effectiveTopicsPolicy(channelPolicy, realmPolicy);
  if (topic === '' && policy === 'disable_empty_topic') {
    throw channelPolicy === 'inherit'
      ? badRequest('Topics are required in this organization.')
      : badRequest(`Sending messages to ${emptyTopicDisplayName} is not allowed in this channel.`);
  }
  if (topic !== '' && policy === 'empty_topic_only') {
    throw badRequest(`Only ${emptyTopicDisplayName} is allowed in this channel.`);
  }
}

export const isResolvedTopic = (topic: string): boolean => topic.startsWith(RESOLVED_TOPIC_PREFIX);

export function unresolvedTopic(topic: string): string {
  let t = topic;
  while (t.startsWith(RESOLVED_TOPIC_PREFIX)) t = t.slice(RESOLVED_TOPIC_PREFIX.length);
  return t;
}

/** Whether a topic change only marks the topic resolved or unresolved. */
export function isResolveOnlyChange(oldTopic: string, newTopic: string): boolean {
  if (isResolvedTopic(oldTopic) === isResolvedTopic(newTopic)) return false;
  return unresolvedTopic(oldTopic) === unresolvedTopic(newTopic);
}

/** The key of a direct-message conversation: its sorted participant ids. */
export function directKey(userIds: Iterable<number>): string {
  return [...new Set(userIds)].sort((a, b) => a - b).join(',');
}

/** Clients whose users read what they send: their own messages start read. */
const UI_CLIENTS = new Set([
  'website',
  'parleyweb',
  'parleydesktop',
  'parleymobile',
  'parleyterminal',
  'zulipandroid',
  'zulipios',
  'zulipdesktop',
  'zulipmobile',
  'zulipelectron',
  'zulipterminal',
  'zulipflutter',
  'snipe',
  'ios',
  'android',
]);

/** The sending client's name from its User-Agent ("ZulipMobile/27.1 (Android)" → "ZulipMobile"). */
export function clientNameFromUserAgent(userAgent: string | undefined): string {
  const match = /^([^/ ]*[^0-9/(]*)/.exec(userAgent?.trim() ?? '');
  const name = match?.[1].trim() ?? '';
  return name === '' ? 'Unspecified' : name.slice(0, 30);
}

export function defaultReadBySender(clientName: string): boolean {
  const name = clientName.toLowerCase();
  return UI_CLIENTS.has(name) || name.includes('desktop app');
}

/** One stored edit-history entry (the list is kept most recent first). */
export interface EditHistoryEntry {
  user_id: number | null;
  timestamp: number;
  prev_content?: string;
  prev_rendered_content?: string;
  prev_topic?: string;
  topic?: string;
  prev_stream?: number;
  stream?: number;
}

export function readEditHistory(stored: string | null): EditHistoryEntry[] {
  if (!stored) return [];
  try {
    const parsed = JSON.parse(stored) as unknown;
    return Array.isArray(parsed) ? (parsed as EditHistoryEntry[]) : [];
  } catch {
    return [];
  }
}

export const isMoveEntry = (e: EditHistoryEntry): boolean =>
  e.prev_topic !== undefined || e.prev_stream !== undefined;

/** A snapshot of GET /messages/{id}/history: the message as it was after one edit. */
export interface HistorySnapshot {
  user_id: number | null;
  timestamp: number;
  topic: string;
  content: string;
  rendered_content: string;
  prev_topic?: string;
  prev_content?: string;
  prev_rendered_content?: string;
  content_html_diff?: string;
  prev_stream?: number;
  stream?: number;
}

/**
 * The snapshots of a message's history, oldest first: the original, then the state
 * after each edit with what that edit changed.
 */
export function historySnapshots(
  current: { content: string; rendered_content: string; topic: string },
  sent: { sender_id: number; date_sent: number },
  history: EditHistoryEntry[],
): HistorySnapshot[] {
  let content = current.content;
  let rendered = current.rendered_content;
  let topic = current.topic;
  const out: HistorySnapshot[] = [];
  for (const entry of history) {
    const snap: HistorySnapshot = {
      user_id: entry.user_id,
      timestamp: entry.timestamp,
      topic,
      content,
      rendered_content: rendered,
    };
    if (entry.prev_topic !== undefined) {
      topic = entry.prev_topic;
      snap.prev_topic = topic;
    }
    if (entry.prev_content !== undefined) {
      snap.prev_content = entry.prev_content;
      snap.prev_rendered_content = entry.prev_rendered_content ?? '';
      snap.content_html_diff = htmlDiff(snap.prev_rendered_content, rendered);
      content = entry.prev_content;
      rendered = snap.prev_rendered_content;
    }
    if (entry.prev_stream !== undefined) {
      snap.prev_stream = entry.prev_stream;
      if (entry.stream !== undefined) snap.stream = entry.stream;
    }
    out.push(snap);
  }
  out.push({
    user_id: sent.sender_id,
    timestamp: sent.date_sent,
    topic,
    content,
    rendered_content: rendered,
  });
  return out.reverse();
}

/** HTML split into tags and words (with their trailing space), the units the diff compares. */
function diffTokens(html: string): string[] {
  return html.match(/<[^>]*>|[^<\s]+\s*|\s+/g) ?? [];
}

/**
 * The new rendering with inserted and deleted words marked, for showing an edit. A
 * longest-common-subsequence diff over words; tags are kept from the new side.
 */
export function htmlDiff(before: string, after: string): string {
  const a = diffTokens(before);
  const b = diffTokens(after);
  // Very long messages are shown as replaced wholesale rather than diffed quadratically.
  if (a.length * b.length > 4_000_000) {
    return `<div><span class="highlight_text_inserted">${after}</span><span class="highlight_text_deleted">${before}</span></div>`;
  }
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () =>
    new Array<number>(b.length + 1).fill(0),
  );
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const isTag = (t: string): boolean => t.startsWith('<');
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push(b[j]);
      i++;
      j++;
    } else if (j < b.length && (i === a.length || lcs[i][j + 1] >= lcs[i + 1][j])) {
      out.push(isTag(b[j]) ? b[j] : `<span class="highlight_text_inserted">${b[j]}</span>`);
      j++;
    } else {
      if (!isTag(a[i])) out.push(`<span class="highlight_text_deleted">${a[i]}</span>`);
      i++;
    }
  }
  return `<div>${out.join('')}</div>`;
}
