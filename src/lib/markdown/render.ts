// Rendering: resolve the parsed tokens against the caller's lookups (deciding the HTML of each
// mention, link and emoji, and the message's flags), then let markdown-it print them.

import MarkdownIt from 'markdown-it';
import type { Token } from 'markdown-it';
import { emojiCodeForName } from './emoji-data.ts';
import {
  CHANNEL_LINK,
  EMOJI,
  GROUP_MENTION,
  MENTION_ID_SYNTAX,
  UNICODE_EMOJI,
  USER_MENTION,
  fenceLanguage,
  markdown,
  type ChannelLinkMeta,
  type EmojiMeta,
  type MentionMeta,
  type UnicodeEmojiMeta,
} from './parser.ts';
import type {
  LinkableChannel,
  MarkdownLookups,
  MentionableGroup,
  MentionableUser,
  RealmEmojiForMarkdown,
} from './types.ts';
import {
  channelNarrowUrl,
  isImagePath,
  isNarrowLink,
  isSafeImageSrc,
  safeLinkHref,
  topicNarrowUrl,
  uploadPathId,
} from './urls.ts';

const escapeHtml = markdown.utils.escapeHtml;

export const STREAM_WILDCARDS = new Set(['all', 'everyone', 'stream', 'channel']);
export const TOPIC_WILDCARD = 'topic';
/** How the reference shows the empty topic inside a topic link. */
const EMPTY_TOPIC_LINK_NAME = 'general chat';

interface LookupIndex {
  usersByName: Map<string, MentionableUser>;
  usersById: Map<number, MentionableUser>;
  groupsByName: Map<string, MentionableGroup>;
  channelsByName: Map<string, LinkableChannel>;
  realmEmoji: Map<string, RealmEmojiForMarkdown>;
  realmUrl?: string;
}

function indexBy<T>(rows: readonly T[] | undefined, key: (row: T) => string): Map<string, T> {
  const map = new Map<string, T>();
  for (const row of rows ?? []) {
    const k = key(row);
    if (!map.has(k)) map.set(k, row);
  }
  return map;
}

function indexLookups(lookups: MarkdownLookups): LookupIndex {
  // With several users of one name, @**Name** means the earliest account (use @**Name|id**).
  const users = [...(lookups.users ?? [])].sort((a, b) => a.id - b.id);
  return {
    usersByName: indexBy(users, (u) => u.full_name.toLowerCase()),
    usersById: new Map(users.map((u) => [u.id, u])),
    groupsByName: indexBy(lookups.groups, (g) => g.name.toLowerCase()),
    channelsByName: indexBy(lookups.channels, (c) => c.name.toLowerCase()),
    realmEmoji: indexBy(
      lookups.realmEmoji?.filter((e) => !e.deactivated && isSafeImageSrc(e.source_url)),
      (e) => e.name,
    ),
    realmUrl: lookups.realmUrl,
  };
}

/** Attributes in name order, as the reference prints them. */
function tag(name: string, attrs: Record<string, string>): string {
  const parts = Object.keys(attrs)
    .sort()
    .map((k) => ` ${k}="${escapeHtml(attrs[k])}"`);
  return `<${name}${parts.join('')}>`;
}

function emojiTitle(name: string): string {
  return name.replace(/_/g, ' ');
}

export function unicodeEmojiHtml(name: string, code: string): string {
  const title = emojiTitle(name);
  const attrs = { 'aria-label': title, class: `emoji emoji-${code}`, role: 'img', title };
  return `${tag('span', attrs)}:${escapeHtml(name)}:</span>`;
}

function realmEmojiHtml(emoji: RealmEmojiForMarkdown): string {
  const attrs = {
    alt: `:${emoji.name}:`,
    class: 'emoji',
    src: emoji.source_url,
    title: emojiTitle(emoji.name),
  };
  return tag('img', attrs);
}

/** Collects what one rendering decided while the tokens are resolved. */
export class Resolution {
  readonly mentionedUserIds = new Set<number>();
  readonly silentlyMentionedUserIds = new Set<number>();
  readonly mentionedGroupIds = new Set<number>();
  readonly linkUrls = new Set<string>();
  readonly attachmentPathIds = new Set<string>();
  streamWildcard = false;
  topicWildcard = false;
  hasImage = false;
  private readonly index: LookupIndex;

  constructor(lookups: MarkdownLookups) {
    this.index = indexLookups(lookups);
  }

  /** Sets `meta.html` on every token whose output depends on lookups or on the link policy. */
  resolve(tokens: Token[]): void {
    for (const block of tokens) {
      if (block.type === 'inline' && block.children) this.resolveInline(block.children);
    }
  }

  private resolveInline(children: Token[]): void {
    const openLinks: Token[] = [];
    for (let i = 0; i < children.length; i++) {
      const token = children[i];
      switch (token.type) {
        case USER_MENTION:
          setHtml(token, this.userMention(token.meta as unknown as MentionMeta));
          break;
        case GROUP_MENTION:
          setHtml(token, this.groupMention(token.meta as unknown as MentionMeta));
          break;
        case CHANNEL_LINK:
          setHtml(token, this.channelLink(token.meta as unknown as ChannelLinkMeta));
          break;
        case EMOJI:
          setHtml(token, this.emoji((token.meta as unknown as EmojiMeta).name));
          break;
        case UNICODE_EMOJI: {
          const meta = token.meta as unknown as UnicodeEmojiMeta;
          setHtml(token, unicodeEmojiHtml(meta.name, meta.code));
          break;
        }
        case 'link_open': {
          const href = this.link(String(token.attrGet('href') ?? ''));
          openLinks.push(token);
          setHtml(token, href === null ? '' : linkOpenHtml(href));
          // An empty link text shows the target, as the reference does.
          if (href !== null && children[i + 1]?.type === 'link_close') {
            const text = new MarkdownIt.Token('text', '', 0);
            text.content = href;
            children.splice(i + 1, 0, text);
          }
          break;
        }
        case 'link_close': {
          const open = openLinks.pop();
          setHtml(token, open?.meta?.html === '' ? '' : '</a>');
          break;
        }
      }
    }
  }

  private link(raw: string): string | null {
    const href = safeLinkHref(raw, this.index.realmUrl);
    if (href === null) return null;
    this.linkUrls.add(href);
    const upload = uploadPathId(href);
    if (upload !== null) {
      this.attachmentPathIds.add(upload);
      if (isImagePath(upload)) this.hasImage = true;
    }
    return href;
  }

  private userMention(meta: MentionMeta): string | null {
    const silent = meta.silent || meta.quoted === true;
    const name = meta.name;
    if (STREAM_WILDCARDS.has(name) || name === TOPIC_WILDCARD) {
      const stream = name !== TOPIC_WILDCARD;
      if (!silent && stream) this.streamWildcard = true;
      if (!silent && !stream) this.topicWildcard = true;
      const cls = stream ? 'user-mention channel-wildcard-mention' : 'topic-mention';
      const attrs: Record<string, string> = { class: silent ? `${cls} silent` : cls };
      if (stream) attrs['data-user-id'] = '*';
      return `${tag('span', attrs)}${escapeHtml(silent ? name : `@${name}`)}</span>`;
    }
    const user = this.findUser(name);
    if (!user) return null;
    const quiet = silent || !user.is_active;
    (quiet ? this.silentlyMentionedUserIds : this.mentionedUserIds).add(user.id);
    const attrs = {
      class: quiet ? 'user-mention silent' : 'user-mention',
      'data-user-id': `${user.id}`,
    };
    const text = quiet ? user.full_name : `@${user.full_name}`;
    return `${tag('span', attrs)}${escapeHtml(text)}</span>`;
  }

  private findUser(name: string): MentionableUser | undefined {
    const byId = MENTION_ID_SYNTAX.exec(name);
    if (byId) {
      const user = this.index.usersById.get(Number(byId[2]));
      if (user) return byId[1] === undefined || byId[1] === user.full_name ? user : undefined;
    }
    // A full name may itself end in "|digits".
    return this.index.usersByName.get(name.toLowerCase());
  }

  private groupMention(meta: MentionMeta): string | null {
    const group = this.index.groupsByName.get(meta.name.toLowerCase());
    if (!group) return null;
    const quiet = meta.silent || meta.quoted === true || group.deactivated === true;
    if (!quiet) this.mentionedGroupIds.add(group.id);
    const cls = quiet ? 'user-group-mention silent' : 'user-group-mention';
    const attrs = { class: cls, 'data-user-group-id': `${group.id}` };
    return `${tag('span', attrs)}${escapeHtml(quiet ? group.name : `@${group.name}`)}</span>`;
  }

  private channelLink(meta: ChannelLinkMeta): string | null {
    const channel = this.index.channelsByName.get(meta.channel.toLowerCase());
    if (!channel) return null;
    const id = `${channel.id}`;
    const prefix = `#${escapeHtml(channel.name)}`;
    let attrs: Record<string, string>;
    let text = prefix;
    if (meta.topic === undefined) {
      attrs = {
        class: 'stream',
        'data-stream-id': id,
        href: channelNarrowUrl(channel.id, channel.name),
      };
    } else {
      const href = topicNarrowUrl(channel.id, channel.name, meta.topic);
      const topic =
        meta.topic === '' ? `<em>${EMPTY_TOPIC_LINK_NAME}</em>` : escapeHtml(meta.topic);
      text = `${prefix} &gt; ${topic}`;
      if (meta.messageId === undefined) {
        attrs = { class: 'stream-topic', 'data-stream-id': id, href };
      } else {
        attrs = { class: 'message-link', href: `${href}/near/${meta.messageId}` };
        text += ' @ 💬';
      }
    }
    this.linkUrls.add(attrs.href);
    return `${tag('a', attrs)}${text}</a>`;
  }

  private emoji(name: string): string | null {
    const realm = this.index.realmEmoji.get(name);
    if (realm) return realmEmojiHtml(realm);
    const code = emojiCodeForName(name);
    return code === undefined ? null : unicodeEmojiHtml(name, code);
  }
}

function setHtml(token: Token, html: string | null): void {
  if (html !== null) token.meta = { ...token.meta, html };
}

function linkOpenHtml(href: string): string {
  // Links into the app open in place; every other link opens a new, unrelated browsing context.
  if (isNarrowLink(href)) return tag('a', { href });
  return tag('a', { href, rel: 'noopener noreferrer', target: '_blank' });
}

// The reference's display names (Pygments lexer names) for common code-block languages:
// "Display=alias alias", separated by '|'. Other languages keep the name as typed.
const LANGUAGES = `Bash=bash sh shell zsh|C=c|C++=cpp c++|C#=csharp c# cs|CSS=css|Clojure=clojure clj|
  Dart=dart|Diff=diff patch|Docker=docker dockerfile|Elixir=elixir|Erlang=erlang|Go=go golang|
  GraphQL=graphql|Haskell=haskell hs|HTML=html|INI=ini|Java=java|JavaScript=javascript js|
  JSON=json|Julia=julia|Kotlin=kotlin kt|TeX=tex latex|Lua=lua|Makefile=makefile make|
  Markdown=markdown md|Objective-C=objective-c objc|OCaml=ocaml|Perl=perl pl|PHP=php|
  PowerShell=powershell ps1|Python=python py python3 py3|R=r|Ruby=ruby rb|Rust=rust rs|
  Scala=scala|SCSS=scss|SQL=sql|Swift=swift|Text only=text|TOML=toml|TypeScript=typescript ts|
  VB.net=vb.net vbnet|XML=xml|YAML=yaml yml`;

const LANGUAGE_NAMES = new Map(
  LANGUAGES.split('|').flatMap((entry) => {
    const [display, aliases] = entry.trim().split('=');
    return aliases.split(' ').map((alias) => [alias, display] as const);
  }),
);

function languageDisplayName(language: string): string {
  return LANGUAGE_NAMES.get(language.toLowerCase()) ?? language;
}

function codeBlockHtml(content: string, language: string): string {
  const attrs: Record<string, string> = { class: 'codehilite' };
  if (language !== '') attrs['data-code-language'] = languageDisplayName(language);
  const body = content
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n');
  return `${tag('div', attrs)}<pre><span></span><code>${escapeHtml(body)}</code></pre></div>\n`;
}

function customTokenHtml(tokens: Token[], idx: number): string {
  const html = tokens[idx].meta?.html;
  return typeof html === 'string' ? html : escapeHtml(tokens[idx].content);
}

/** Prints resolved tokens. */
export function renderTokens(tokens: Token[]): string {
  return markdown.renderer.render(tokens, markdown.options, {});
}

const rules = markdown.renderer.rules;
rules.fence = (tokens, idx) => codeBlockHtml(tokens[idx].content, fenceLanguage(tokens[idx].info));
rules.code_block = (tokens, idx) => codeBlockHtml(tokens[idx].content, '');
rules.s_open = () => '<del>';
rules.s_close = () => '</del>';
rules.link_open = customTokenHtml;
rules.link_close = customTokenHtml;
for (const type of [USER_MENTION, GROUP_MENTION, CHANNEL_LINK, EMOJI, UNICODE_EMOJI]) {
  rules[type] = customTokenHtml;
}
