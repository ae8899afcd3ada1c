// Parley's Markdown: scan a message for the names it refers to, then render it with the rows the
// caller looked up. Pure: no database, clock or network.

import type { Token } from 'markdown-it';
import {
  CHANNEL_LINK,
  EMOJI,
  GROUP_MENTION,
  MENTION_ID_SYNTAX,
  USER_MENTION,
  markdown,
  parseMarkdown,
} from './parser.ts';
import type { ChannelLinkMeta, EmojiMeta, MentionMeta } from './parser.ts';
import { Resolution, STREAM_WILDCARDS, TOPIC_WILDCARD, renderTokens } from './render.ts';
import { sanitizeRenderedHtml } from './sanitize.ts';
import type { MarkdownLookups, MarkdownScan, RenderedMarkdown, TopicLink } from './types.ts';

export type * from './types.ts';
export { emojiCodeForName, emojiNameForCode, isKnownEmojiName } from './emoji-data.ts';

/** A /me status message; the reference decides on the source alone. */
export function isMeMessage(content: string): boolean {
  return content.startsWith('/me ');
}

/**
 * Content parsed once for both its scan and its rendering: a message is scanned for the
 * names to look up, then rendered with them, and parsing is most of either. Rendering
 * changes the tokens (it resolves links and mentions in place), so a parsed text is
 * rendered once, after any scan. Plain text has no tokens (null): see PLAIN_TEXT.
 */
export interface ParsedMarkdown {
  readonly content: string;
  readonly tokens: Token[] | null;
}

/**
 * One line of ASCII words and punctuation, which Markdown renders as one paragraph of the
 * same text: it starts with a letter (no list, heading, quote or code block), holds
 * none of the characters that begin inline syntax (mentions, channel links, emphasis, code,
 * links, HTML), no dot or colon that a letter follows (no fuzzy link, e-mail or emoji
 * name), and no white space at its end (trimmed by the parser). Much chat is like this, and
 * skipping the parser and the sanitizer for it took a third off a plain send's CPU
 * (docs/performance-history.md, session 8).
 * test/lib/markdown.test.ts checks that both paths give the same result for such text.
 */
const PLAIN_TEXT = /^[A-Za-z](?:[A-Za-z0-9 ,'?!"();/-]|[.:](?= |$))*(?<! )$/;

export function parseContent(content: string): ParsedMarkdown {
  return { content, tokens: PLAIN_TEXT.test(content) ? null : parseMarkdown(content) };
}

const parsedOf = (source: string | ParsedMarkdown): ParsedMarkdown =>
  typeof source === 'string' ? parseContent(source) : source;

/** The names and ids the content refers to outside code, for the caller to look up. */
export function scanMarkdown(source: string | ParsedMarkdown): MarkdownScan {
  const { content, tokens } = parsedOf(source);
  if (tokens === null) {
    return {
      userNames: [],
      userIds: [],
      groupNames: [],
      channelNames: [],
      emojiNames: [],
      plainText: content,
      isMeMessage: false,
    };
  }
  const userNames = new Set<string>();
  const userIds = new Set<number>();
  const groupNames = new Set<string>();
  const channelNames = new Set<string>();
  const emojiNames = new Set<string>();
  for (const block of tokens) {
    for (const token of block.children ?? []) {
      if (token.type === USER_MENTION) {
        const { name } = token.meta as unknown as MentionMeta;
        if (STREAM_WILDCARDS.has(name) || name === TOPIC_WILDCARD) continue;
        const byId = MENTION_ID_SYNTAX.exec(name);
        const id = byId ? Number(byId[2]) : NaN;
        if (Number.isSafeInteger(id)) userIds.add(id);
        // A full name may itself end in "|digits", so the whole text is a name candidate too.
        userNames.add(name);
      } else if (token.type === GROUP_MENTION) {
        groupNames.add((token.meta as unknown as MentionMeta).name);
      } else if (token.type === CHANNEL_LINK) {
        channelNames.add((token.meta as unknown as ChannelLinkMeta).channel);
      } else if (token.type === EMOJI) {
        emojiNames.add((token.meta as unknown as EmojiMeta).name);
      }
    }
  }
  return {
    userNames: [...userNames],
    userIds: [...userIds],
    groupNames: [...groupNames],
    channelNames: [...channelNames],
    emojiNames: [...emojiNames],
    plainText: plainTextOf(tokens),
    isMeMessage: isMeMessage(content),
  };
}

/** The text a reader sees outside code: inline text, link text and mention syntax. */
function plainTextOf(tokens: Token[]): string {
  const lines: string[] = [];
  for (const block of tokens) {
    if (block.type !== 'inline' || !block.children) continue;
    let line = '';
    for (const child of block.children) {
      if (child.type === 'softbreak' || child.type === 'hardbreak') line += '\n';
      else if (child.type !== 'code_inline') line += child.content;
    }
    lines.push(line);
  }
  return lines.join('\n');
}

/** Renders message content with the looked-up rows, deciding its mention and link flags. */
export function renderMarkdown(
  source: string | ParsedMarkdown,
  lookups: MarkdownLookups = {},
): RenderedMarkdown {
  const { content, tokens } = parsedOf(source);
  if (tokens === null) return renderPlainText(content);
  const resolution = new Resolution(lookups);
  resolution.resolve(tokens);
  const html = sanitizeRenderedHtml(renderTokens(tokens).replace(/\n+$/, ''));
  const sorted = (ids: Set<number>) => [...ids].sort((a, b) => a - b);
  const mentioned = resolution.mentionedUserIds;
  return {
    html,
    mentionedUserIds: sorted(mentioned),
    // A user both mentioned and quoted is simply mentioned.
    silentlyMentionedUserIds: sorted(resolution.silentlyMentionedUserIds).filter(
      (id) => !mentioned.has(id),
    ),
    mentionedGroupIds: sorted(resolution.mentionedGroupIds),
    streamWildcard: resolution.streamWildcard,
    topicWildcard: resolution.topicWildcard,
    isMeMessage: isMeMessage(content),
    hasLink: resolution.linkUrls.size > 0,
    hasImage: resolution.hasImage,
    hasAttachment: resolution.attachmentPathIds.size > 0,
    linkUrls: [...resolution.linkUrls],
    attachmentPathIds: [...resolution.attachmentPathIds],
  };
}

/** PLAIN_TEXT content as the parser would render it: one paragraph, nothing to escape. */
function renderPlainText(content: string): RenderedMarkdown {
  return {
    html: `<p>${content}</p>`,
    mentionedUserIds: [],
    silentlyMentionedUserIds: [],
    mentionedGroupIds: [],
    streamWildcard: false,
    topicWildcard: false,
    isMeMessage: false,
    hasLink: false,
    hasImage: false,
    hasAttachment: false,
    linkUrls: [],
    attachmentPathIds: [],
  };
}

/** Channel and folder descriptions: the same Markdown, where only the HTML matters. */
export function renderDescription(text: string, lookups: MarkdownLookups = {}): string {
  return renderMarkdown(text, lookups).html;
}

/**
 * Links shown with a topic. The reference links web URLs in topic names, plus matches of the
 * organization's linkifiers (Parley has none yet). Scheme-less hosts get https, as there.
 */
export function renderTopicLinks(topic: string): TopicLink[] {
  const matches = markdown.linkify.match(topic) ?? [];
  return matches
    .filter((m) => m.schema === '' || /^https?:$/i.test(m.schema))
    .map((m) => ({ text: m.raw, url: m.schema === '' ? `https://${m.raw}` : m.raw }));
}

const ENDS_IN_WORD = /[\p{L}\p{N}\p{M}_]$/u;
const STARTS_WITH_WORD = /^[\p{L}\p{N}\p{M}_]/u;

/**
 * Which of a user's alert words occur in text from MarkdownScan.plainText: case-insensitive,
 * as whole words (not inside a longer word). Returns the words as the user wrote them.
 */
export function findAlertWords(plainText: string, words: readonly string[]): string[] {
  const haystack = plainText.toLowerCase();
  const found: string[] = [];
  for (const word of words) {
    const needle = word.trim().toLowerCase();
    if (needle === '' || found.includes(word)) continue;
    for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + 1)) {
      const before = haystack.slice(Math.max(0, at - 2), at);
      const after = haystack.slice(at + needle.length, at + needle.length + 2);
      if (!ENDS_IN_WORD.test(before) && !STARTS_WITH_WORD.test(after)) {
        found.push(word);
        break;
      }
    }
  }
  return found;
}

/** Which alert words occur in message content (outside code). */
export function alertWordMatches(content: string, words: readonly string[]): string[] {
  return words.length === 0 ? [] : findAlertWords(scanMarkdown(content).plainText, words);
}
