// Public shapes of the Markdown renderer: what the caller looks up and what rendering decides.

/** A user a mention may name. Deactivated users still render, but silently. */
export interface MentionableUser {
  id: number;
  full_name: string;
  is_active: boolean;
}

/** A user group a mention may name. Deactivated groups still render, but silently. */
export interface MentionableGroup {
  id: number;
  name: string;
  deactivated?: boolean;
}

/** A channel the sender may link to (the caller leaves out channels the sender cannot see). */
export interface LinkableChannel {
  id: number;
  name: string;
}

/** A custom emoji of the organization. Deactivated ones do not render in new content. */
export interface RealmEmojiForMarkdown {
  id: number | string;
  name: string;
  source_url: string;
  deactivated: boolean;
}

/**
 * What the caller looked up for the names scanMarkdown returned. Plain lists: the renderer
 * indexes them itself (users and groups and channels case-insensitively, emoji exactly).
 */
export interface MarkdownLookups {
  users?: readonly MentionableUser[];
  groups?: readonly MentionableGroup[];
  channels?: readonly LinkableChannel[];
  realmEmoji?: readonly RealmEmojiForMarkdown[];
  /** The organization's URL, e.g. "https://chat.example.com": links into it become relative. */
  realmUrl?: string;
}

/** The names a message refers to, for the caller to look up before rendering. */
export interface MarkdownScan {
  /** Names in @**Name** and @_**Name** (as typed; look them up case-insensitively). */
  userNames: string[];
  /** Ids in @**Name|id** and @**|id**. */
  userIds: number[];
  /** Names in @*group* and @_*group* (as typed; look them up case-insensitively). */
  groupNames: string[];
  /** Channel names in #**channel** and #**channel>topic** (as typed; case-insensitive). */
  channelNames: string[];
  /** Names in :name: (realm emoji names are matched exactly). */
  emojiNames: string[];
  /** The text outside code, for matching alert words with findAlertWords. */
  plainText: string;
  isMeMessage: boolean;
}

/** The result of rendering a message. Id lists are sorted and free of duplicates. */
export interface RenderedMarkdown {
  html: string;
  /** Users mentioned directly and not silently (the "mentioned" flag). */
  mentionedUserIds: number[];
  /** Users mentioned silently, from a quote, or while deactivated: no flag, no notification. */
  silentlyMentionedUserIds: number[];
  /** Groups mentioned not silently; their members get the "mentioned" flag. */
  mentionedGroupIds: number[];
  /** @**all**, @**everyone**, @**channel** or @**stream**, not silent and not quoted. */
  streamWildcard: boolean;
  /** @**topic**, not silent and not quoted. */
  topicWildcard: boolean;
  isMeMessage: boolean;
  /** Any link, including channel and topic links (as the reference's has:link). */
  hasLink: boolean;
  /** A link to an uploaded image of this organization (by file extension). */
  hasImage: boolean;
  /** A link to an upload of this organization; the caller checks the uploads exist. */
  hasAttachment: boolean;
  /** Every link target, in order of appearance, without duplicates. */
  linkUrls: string[];
  /** Path ids of linked uploads ("2/ab/cdef/file.png"), to claim as the message's attachments. */
  attachmentPathIds: string[];
}

export interface TopicLink {
  text: string;
  url: string;
}
