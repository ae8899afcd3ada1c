// The Markdown dialect: markdown-it configured like the reference's syntax, plus tokens for
// mentions, channel links and emoji. Parsing never looks anything up, so the same token stream
// serves both the scan (which names to look up) and the render (with the looked-up rows).

import MarkdownItParser from 'markdown-it';
import type { MarkdownIt, StateCore, StateInline, Token } from 'markdown-it';
import { emojiCodeForText, emojiNameForCode } from './emoji-data.ts';

export const USER_MENTION = 'parley_user_mention';
export const GROUP_MENTION = 'parley_group_mention';
export const CHANNEL_LINK = 'parley_channel_link';
export const EMOJI = 'parley_emoji';
export const UNICODE_EMOJI = 'parley_unicode_emoji';

export interface MentionMeta {
  name: string;
  silent: boolean;
  /** Inside a quote, where the reference renders every mention silently. */
  quoted?: boolean;
}
export interface ChannelLinkMeta {
  channel: string;
  topic?: string;
  messageId?: number;
}
export interface EmojiMeta {
  name: string;
}
export interface UnicodeEmojiMeta {
  name: string;
  code: string;
}

/** @**Full Name|id** or @**|id**: an id that disambiguates (or replaces) the name. */
export const MENTION_ID_SYNTAX = /^(.+)?\|(\d+)$/s;

const QUOTE_FENCE_LANGUAGES = new Set(['quote', 'quoted']);

/** The first word of a fence's info string: the code language, or "quote". */
export function fenceLanguage(info: string): string {
  return info.trim().split(/\s+/)[0] ?? '';
}

// The reference accepts mention and channel-link syntax only at the start or after whitespace
// or one of these characters, so "a@**b**" or "x#**y**" stay plain text.
function mayStartMention(src: string, pos: number): boolean {
  return pos === 0 || /[\s'"({[/<]/.test(src[pos - 1]);
}

const ASTERISK = 0x2a;

/** The name between `start` and the next '*', if non-empty and on one line. */
function starredName(src: string, start: number): { name: string; end: number } | null {
  const end = src.indexOf('*', start);
  if (end <= start) return null;
  const name = src.slice(start, end);
  return name.includes('\n') ? null : { name, end };
}

// @**Full Name**, @**Name|id**, @_**silent**, @*group*, @_*silent group*.
function mentionRule(state: StateInline, silentMode: boolean): boolean {
  const src = state.src;
  const start = state.pos;
  if (src.charCodeAt(start) !== 0x40 || !mayStartMention(src, start)) return false;
  let p = start + 1;
  const silent = src.charCodeAt(p) === 0x5f;
  if (silent) p++;
  if (src.charCodeAt(p) !== ASTERISK) return false;
  const isUser = src.charCodeAt(p + 1) === ASTERISK;
  const found = starredName(src, p + (isUser ? 2 : 1));
  if (!found || (isUser && src.charCodeAt(found.end + 1) !== ASTERISK)) return false;
  const end = found.end + (isUser ? 2 : 1);
  if (!silentMode) {
    const token = state.push(isUser ? USER_MENTION : GROUP_MENTION, '', 0);
    token.content = src.slice(start, end);
    token.meta = { name: found.name, silent } satisfies MentionMeta;
  }
  state.pos = end;
  return true;
}

// #**channel**, #**channel>topic**, #**channel>topic@message_id**.
function channelLinkRule(state: StateInline, silentMode: boolean): boolean {
  const src = state.src;
  const start = state.pos;
  if (src.charCodeAt(start) !== 0x23 || !mayStartMention(src, start)) return false;
  if (src.charCodeAt(start + 1) !== ASTERISK || src.charCodeAt(start + 2) !== ASTERISK) {
    return false;
  }
  const found = starredName(src, start + 3);
  if (!found || src.charCodeAt(found.end + 1) !== ASTERISK) return false;
  const sep = found.name.indexOf('>');
  if (sep === 0) return false;
  const meta: ChannelLinkMeta = { channel: sep < 0 ? found.name : found.name.slice(0, sep) };
  if (sep > 0) {
    const rest = found.name.slice(sep + 1);
    const near = /^(.*)@(\d+)$/s.exec(rest);
    const messageId = near ? Number(near[2]) : NaN;
    if (near && Number.isSafeInteger(messageId)) {
      meta.topic = near[1];
      meta.messageId = messageId;
    } else {
      meta.topic = rest;
    }
  }
  const end = found.end + 2;
  if (!silentMode) {
    const token = state.push(CHANNEL_LINK, '', 0);
    token.content = src.slice(start, end);
    token.meta = { ...meta };
  }
  state.pos = end;
  return true;
}

const EMOJI_SYNTAX = /:([\p{L}\p{N}\p{M}_+-]+):/uy;

// :name: — built-in or realm emoji, decided at render time.
function emojiRule(state: StateInline, silentMode: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x3a) return false;
  EMOJI_SYNTAX.lastIndex = state.pos;
  const m = EMOJI_SYNTAX.exec(state.src);
  if (!m) return false;
  if (!silentMode) {
    const token = state.push(EMOJI, '', 0);
    token.content = m[0];
    token.meta = { name: m[1] } satisfies EmojiMeta;
  }
  state.pos += m[0].length;
  return true;
}

// The reference has no underscore emphasis, so snake_case and __init__ stay as typed.
function literalUnderscores(state: StateInline, silentMode: boolean): boolean {
  const src = state.src;
  let end = state.pos;
  while (src.charCodeAt(end) === 0x5f) end++;
  if (end === state.pos) return false;
  if (!silentMode) state.pending += src.slice(state.pos, end);
  state.pos = end;
  return true;
}

// ```quote fences hold Markdown, not code: replace each with a blockquote of its parsed
// content. Replaced tokens are revisited, so quote fences nested inside expand too.
function expandQuoteFences(state: StateCore): void {
  const tokens = state.tokens;
  for (let i = 0; i < tokens.length; i++) {
    const fence = tokens[i];
    if (fence.type !== 'fence' || !QUOTE_FENCE_LANGUAGES.has(fenceLanguage(fence.info))) continue;
    const inner: Token[] = [];
    state.md.block.parse(fence.content, state.md, state.env, inner);
    const open = new state.Token('blockquote_open', 'blockquote', 1);
    const close = new state.Token('blockquote_close', 'blockquote', -1);
    open.block = close.block = true;
    open.map = fence.map;
    tokens.splice(i, 1, open, ...inner, close);
  }
}

// Mentions quoted from another message must not notify anyone again.
function silenceQuotedMentions(state: StateCore): void {
  let depth = 0;
  for (const token of state.tokens) {
    if (token.type === 'blockquote_open') depth++;
    else if (token.type === 'blockquote_close') depth--;
    else if (token.type === 'inline' && depth > 0 && token.children) {
      for (const child of token.children) {
        if (child.type === USER_MENTION || child.type === GROUP_MENTION) {
          (child.meta as unknown as MentionMeta).quoted = true;
        }
      }
    }
  }
}

const EMOJI_UNIT = String.raw`(?:\p{Regional_Indicator}\p{Regional_Indicator}|\p{Emoji}(?:\p{Emoji_Modifier}|\uFE0F\u20E3?|[\u{E0020}-\u{E007E}]+\u{E007F})?)`;
const POSSIBLE_EMOJI = new RegExp(`${EMOJI_UNIT}(?:\\u200D${EMOJI_UNIT})*`, 'gu');
// Characters such as digits or '©' are emoji only when asked to be (with U+FE0F).
const TEXT_PRESENTATION = /^\P{Emoji_Presentation}\u20E3?$/u;

/** Text split into plain runs and known Unicode emoji, or null when it holds none. */
function splitUnicodeEmoji(text: string): Array<string | UnicodeEmojiMeta> | null {
  let parts: Array<string | UnicodeEmojiMeta> | null = null;
  let last = 0;
  for (const m of text.matchAll(POSSIBLE_EMOJI)) {
    if (TEXT_PRESENTATION.test(m[0])) continue;
    const code = emojiCodeForText(m[0]);
    const name = emojiNameForCode(code);
    if (!name) continue;
    parts ??= [];
    if (m.index > last) parts.push(text.slice(last, m.index));
    parts.push({ name, code });
    last = m.index + m[0].length;
  }
  if (parts && last < text.length) parts.push(text.slice(last));
  return parts;
}

// Pasted Unicode emoji render like their :name: form, as the reference does.
function markUnicodeEmoji(state: StateCore): void {
  for (const block of state.tokens) {
    if (block.type !== 'inline' || !block.children) continue;
    const out: Token[] = [];
    let linkDepth = 0;
    for (const child of block.children) {
      if (child.type === 'link_open') linkDepth++;
      if (child.type === 'link_close') linkDepth--;
      const parts =
        child.type === 'text' && linkDepth === 0 ? splitUnicodeEmoji(child.content) : null;
      if (!parts) {
        out.push(child);
        continue;
      }
      for (const part of parts) {
        const token = new state.Token(typeof part === 'string' ? 'text' : UNICODE_EMOJI, '', 0);
        token.level = child.level;
        if (typeof part === 'string') token.content = part;
        else {
          token.content = `:${part.name}:`;
          token.meta = { ...part };
        }
        out.push(token);
      }
    }
    block.children = out;
  }
}

function createParser(): MarkdownIt {
  const md = new MarkdownItParser('default', {
    html: false,
    linkify: true,
    breaks: true,
    typographer: false,
  });
  // Like the reference: no inline images (an image link stays a link), no setext headings,
  // no reference-style link definitions, no raw HTML.
  md.disable(['image', 'lheading', 'reference', 'html_block', 'html_inline']);
  md.linkify.set({ fuzzyLink: true, fuzzyEmail: true, fuzzyIP: false });
  md.linkify.add('ftp:', null).add('//', null);

  md.inline.ruler.after('linkify', 'parley_mention', mentionRule);
  md.inline.ruler.after('parley_mention', 'parley_channel_link', channelLinkRule);
  md.inline.ruler.after('parley_channel_link', 'parley_emoji', emojiRule);
  md.inline.ruler.before('emphasis', 'parley_underscore', literalUnderscores);
  md.core.ruler.after('block', 'parley_quote_fences', expandQuoteFences);
  md.core.ruler.push('parley_unicode_emoji', markUnicodeEmoji);
  md.core.ruler.push('parley_quoted_mentions', silenceQuotedMentions);
  return md;
}

/** The shared parser. Rules keep no state between calls, so one instance serves every call. */
export const markdown = createParser();

export function parseMarkdown(content: string): Token[] {
  return markdown.parse(content, {});
}
