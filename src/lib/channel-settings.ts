// Channel group-permission settings: each holds a user-group id, combined with the
// organization's own settings (an organization administrator can always administer).
import { memoByText } from './memo.ts';
import { badRequest } from './errors.ts';
import { badValue } from './params.ts';
import type { SystemGroupName } from './roles.ts';

export interface ChannelGroupSettingSpec {
  /** A system group, or 'creator' for an anonymous group holding only the channel's creator. */
  default: SystemGroupName | 'creator';
  forbidden?: readonly SystemGroupName[];
}

export const CHANNEL_GROUP_SETTINGS = {
  can_add_subscribers_group: { default: 'role:nobody', forbidden: ['role:internet'] },
  can_administer_channel_group: {
    default: 'creator',
    forbidden: ['role:internet', 'role:everyone'],
  },
  can_remove_subscribers_group: { default: 'role:administrators', forbidden: ['role:internet'] },
  can_send_message_group: { default: 'role:everyone', forbidden: ['role:internet'] },
  can_subscribe_group: { default: 'role:nobody', forbidden: ['role:internet'] },
  can_delete_any_message_group: {
    default: 'role:nobody',
    forbidden: ['role:internet', 'role:everyone'],
  },
  can_delete_own_message_group: { default: 'role:nobody', forbidden: ['role:internet'] },
  can_move_messages_out_of_channel_group: { default: 'role:nobody', forbidden: ['role:internet'] },
  can_move_messages_within_channel_group: { default: 'role:nobody', forbidden: ['role:internet'] },
  can_resolve_topics_group: { default: 'role:nobody', forbidden: ['role:internet'] },
} satisfies Record<string, ChannelGroupSettingSpec>;

export type ChannelGroupSettingName = keyof typeof CHANNEL_GROUP_SETTINGS;
export const CHANNEL_GROUP_SETTING_NAMES = Object.keys(
  CHANNEL_GROUP_SETTINGS,
) as ChannelGroupSettingName[];
export type ChannelGroupSettings = Record<ChannelGroupSettingName, number>;

export const CHANNEL_TOPICS_POLICIES = [
  'inherit',
  'allow_empty_topic',
  'disable_empty_topic',
  'empty_topic_only',
] as const;
export type ChannelTopicsPolicy = (typeof CHANNEL_TOPICS_POLICIES)[number];

export const MAX_CHANNEL_NAME_LENGTH = 60;
export const MAX_CHANNEL_DESCRIPTION_LENGTH = 1024;
export const MAX_TOPIC_LENGTH = 60;
export const MAX_MESSAGE_LENGTH = 10000;

/** Stored settings JSON → group ids (missing entries are -1, which no one is a member of). */
export function readChannelSettings(stored: string): Readonly<ChannelGroupSettings> {
  return parsedChannelSettings(stored);
}

// Access checks read a channel's settings once per user and setting (deciding who sees a
// channel in an organization of 10,000 parsed the same text 20,000 times); the result is
// frozen because every caller shares it.
const parsedChannelSettings = memoByText((stored: string): Readonly<ChannelGroupSettings> => {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(stored) as Record<string, unknown>;
  } catch {
    parsed = {};
  }
  const out = {} as ChannelGroupSettings;
  for (const name of CHANNEL_GROUP_SETTING_NAMES) {
    const v = parsed[name];
    out[name] = typeof v === 'number' ? v : -1;
  }
  return Object.freeze(out);
}, 1000);

/**
 * The legacy stream_post_policy derived from can_send_message_group's system group:
 * 1 any user, 2 administrators, 3 full members, 4 moderators (1 for anything else).
 */
export function streamPostPolicyFor(sendGroupName: string | null): number {
  switch (sendGroupName) {
    case 'role:administrators':
      return 2;
    case 'role:fullmembers':
      return 3;
    case 'role:moderators':
      return 4;
    default:
      return 1;
  }
}

// Surrogates and Unicode non-characters are not printable; neither are control characters.
const UNPRINTABLE = /[\p{Cc}\p{Cs}\uFDD0-\uFDEF]/u;

function isNonCharacter(cp: number): boolean {
  return (cp & 0xfffe) === 0xfffe;
}

/** 1-based position of the first unprintable character, or null. */
export function unprintablePosition(text: string): number | null {
  let position = 0;
  for (const ch of text) {
    position += 1;
    if (UNPRINTABLE.test(ch) || isNonCharacter(ch.codePointAt(0)!)) return position;
  }
  return null;
}

/** A channel name as the reference server checks it (the caller trims it first). */
export function checkChannelName(name: string): string {
  if (name.trim() === '') throw badRequest("Channel name can't be empty.");
  if ([...name].length > MAX_CHANNEL_NAME_LENGTH) {
    throw badRequest(`Channel name too long (limit: ${MAX_CHANNEL_NAME_LENGTH} characters).`);
  }
  const position = unprintablePosition(name);
  if (position !== null) {
    throw badRequest(`Invalid character in channel name, at position ${position}.`);
  }
  return name;
}

/** Descriptions are one line: newlines become spaces. */
export function normalizeChannelDescription(raw: string): string {
  return raw.replace(/\r?\n/g, ' ');
}

/** Private channels keep their history from new subscribers unless told otherwise; public ones share it. */
export function historyPublicToSubscribersFor(
  inviteOnly: boolean,
  requested: boolean | null | undefined,
): boolean {
  return inviteOnly ? (requested ?? false) : true;
}

/**
 * message_retention_days as clients send it: a positive number of days, "unlimited" (-1,
 * keep forever) or "realm_default" (null, inherit the organization's setting).
 */
export function parseMessageRetentionDays(value: string | number): number | null {
  if (value === 'realm_default') return null;
  if (value === 'unlimited') return -1;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return value;
  throw badValue('message_retention_days', value);
}

/** Subscription colors: "#" and three to six hex digits. */
export function isValidColor(value: string): boolean {
  return /^#[0-9a-fA-F]{3,6}$/.test(value);
}

/** Per-user subscription settings clients may change, and the type of each value. */
export const SUBSCRIPTION_PROPERTIES = {
  color: 'color',
  is_muted: 'bool',
  in_home_view: 'bool',
  pin_to_top: 'bool',
  desktop_notifications: 'bool',
  audible_notifications: 'bool',
  push_notifications: 'bool',
  email_notifications: 'bool',
  wildcard_mentions_notify: 'bool',
} as const;
export type SubscriptionProperty = keyof typeof SUBSCRIPTION_PROPERTIES;

/** Channels with this many subscribers may get partial_subscribers under include_subscribers=partial. */
export const MIN_PARTIAL_SUBSCRIBERS_CHANNEL_SIZE = 250;

export const MAX_DEFAULT_CHANNEL_GROUP_NAME_LENGTH = 60;
export const MAX_DEFAULT_CHANNEL_GROUP_DESCRIPTION_LENGTH = 1024;

/** A default channel group's name, as the reference server checks it. */
export function checkDefaultChannelGroupName(name: string): string {
  if (name.trim() === '') throw badRequest(`Invalid default channel group name '${name}'`);
  if ([...name].length > MAX_DEFAULT_CHANNEL_GROUP_NAME_LENGTH) {
    throw badRequest(
      `Default channel group name too long (limit: ${MAX_DEFAULT_CHANNEL_GROUP_NAME_LENGTH} characters)`,
    );
  }
  if (name.includes('\u0000')) {
    throw badRequest(`Default channel group name '${name}' contains NULL (0x00) characters.`);
  }
  return name;
}

/** The settings whose groups also let their members see a private channel exist. */
export const METADATA_GRANTING_SETTINGS: readonly ChannelGroupSettingName[] = [
  'can_administer_channel_group',
  'can_add_subscribers_group',
  'can_subscribe_group',
];

/** Changing these needs access to the channel's messages, not only to its existence. */
export const CONTENT_ACCESS_SETTINGS: readonly ChannelGroupSettingName[] = [
  'can_add_subscribers_group',
  'can_subscribe_group',
];
