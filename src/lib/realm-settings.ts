// Organization settings: one declarative table serves PATCH /realm, the register
// snapshot (as realm_<name>) and realm update events. Group-permission settings hold a
// user-group id (a system group, a named group, or an anonymous group of direct members
// and subgroups) and are shown to clients as a group-setting value.
import { LANGUAGES, safeJson, type SettingValue } from './user-settings.ts';
import { memoByText } from './memo.ts';
import type { SystemGroupName } from './roles.ts';

export interface RealmScalarSpec {
  kind: 'scalar';
  type: 'bool' | 'int' | 'string';
  default: SettingValue | null;
  /** The stored value may be null (an unlimited time limit). */
  nullable?: boolean;
  values?: readonly SettingValue[];
  min?: number;
  max?: number;
  minLength?: number;
  maxLength?: number;
  ownerOnly?: boolean;
  /** Words a client may send instead of a number, and the value each stands for. */
  special?: Readonly<Record<string, SettingValue | null>>;
  /**
   * Refused values are reported the way the reference server's converters report them
   * (REQUEST_VARIABLE_INVALID, "Bad value for 'x': v") rather than "Invalid x".
   */
  converted?: boolean;
  /** The value names a channel (-1 for none) the acting administrator must be able to see. */
  channel?: boolean;
  /** Changes are announced as realm update_dict (the message-editing settings, for history). */
  updateDict?: boolean;
  /** Other parameter names PATCH /realm accepts for the setting. */
  aliases?: readonly string[];
  /** The reference server's message for a refused value, where it is not "Invalid <name>". */
  invalidMessage?: (value: unknown) => string;
}

export interface RealmGroupSpec {
  kind: 'group';
  default: SystemGroupName;
  /** Only these system groups may hold the setting (e.g. can_access_all_users_group). */
  systemGroupsOnly?: readonly SystemGroupName[];
  /** System groups that may never hold it. */
  forbidden?: readonly SystemGroupName[];
  ownerOnly?: boolean;
}

export type RealmSettingSpec = RealmScalarSpec | RealmGroupSpec;

const bool = (d: boolean, extra: Partial<RealmScalarSpec> = {}): RealmScalarSpec => ({
  kind: 'scalar',
  type: 'bool',
  default: d,
  ...extra,
});
/** A time limit in seconds; "unlimited" (stored as null) lifts it. */
const seconds = (d: number | null, extra: Partial<RealmScalarSpec> = {}): RealmScalarSpec => ({
  kind: 'scalar',
  type: 'int',
  default: d,
  nullable: true,
  min: 1,
  special: { unlimited: null },
  converted: true,
  ...extra,
});
const group = (d: SystemGroupName, extra: Partial<RealmGroupSpec> = {}): RealmGroupSpec => ({
  kind: 'group',
  default: d,
  forbidden: ['role:internet'],
  ...extra,
});
const channelRef: RealmScalarSpec = {
  kind: 'scalar',
  type: 'int',
  default: -1,
  min: -1,
  channel: true,
};

export const REALM_TOPICS_POLICIES = ['allow_empty_topic', 'disable_empty_topic'] as const;
export const MESSAGE_EDIT_HISTORY_POLICIES = ['all', 'moves', 'none'] as const;
export const DEFAULT_EMPTY_TOPIC_DISPLAY_NAME = 'general chat';
export const REALM_LANGUAGES = Object.keys(LANGUAGES);
/** 0: none; 1: Jitsi Meet (the only providers a server without credentials offers). */
export const VIDEO_CHAT_PROVIDERS = [0, 1] as const;

export const REALM_SETTINGS = {
  allow_message_editing: bool(true, { updateDict: true }),
  message_content_edit_limit_seconds: seconds(600, { updateDict: true }),
  message_content_delete_limit_seconds: seconds(null),
  move_messages_within_stream_limit_seconds: seconds(604800),
  move_messages_between_streams_limit_seconds: seconds(604800),
  message_edit_history_visibility_policy: {
    kind: 'scalar',
    type: 'string',
    default: 'all',
    values: MESSAGE_EDIT_HISTORY_POLICIES,
  },
  topics_policy: {
    kind: 'scalar',
    type: 'string',
    default: 'allow_empty_topic',
    values: REALM_TOPICS_POLICIES,
  },
  // Shown for the empty topic to clients without the empty_topic_name capability.
  empty_topic_display_name: {
    kind: 'scalar',
    type: 'string',
    default: DEFAULT_EMPTY_TOPIC_DISPLAY_NAME,
    minLength: 1,
    maxLength: 60,
    aliases: ['realm_empty_topic_display_name'],
  },
  moderation_request_channel_id: channelRef,
  new_stream_announcements_stream_id: channelRef,
  signup_announcements_stream_id: channelRef,
  presence_disabled: bool(false),
  enable_read_receipts: bool(true),
  enable_spectator_access: bool(false),
  require_unique_names: bool(false),
  send_welcome_emails: bool(true),
  digest_emails_enabled: bool(false),
  default_language: {
    kind: 'scalar',
    type: 'string',
    default: 'en',
    values: REALM_LANGUAGES,
    invalidMessage: (v) => `Invalid language '${String(v)}'`,
  },
  // "unlimited" keeps messages forever (stored as -1).
  message_retention_days: {
    kind: 'scalar',
    type: 'int',
    default: -1,
    min: 1,
    special: { unlimited: -1 },
    converted: true,
    ownerOnly: true,
  },
  waiting_period_threshold: {
    kind: 'scalar',
    type: 'int',
    default: 0,
    min: 0,
    ownerOnly: true,
    converted: true,
  },
  invite_required: bool(true, { ownerOnly: true }),
  emails_restricted_to_domains: bool(false, { ownerOnly: true }),
  disallow_disposable_email_addresses: bool(true, { ownerOnly: true }),
  video_chat_provider: {
    kind: 'scalar',
    type: 'int',
    default: 1,
    values: VIDEO_CHAT_PROVIDERS,
    invalidMessage: (v) => `Invalid video_chat_provider ${String(v)}`,
  },
  // Group-permission settings.
  can_access_all_users_group: group('role:everyone', {
    systemGroupsOnly: ['role:everyone', 'role:members'],
  }),
  can_add_custom_emoji_group: group('role:members'),
  can_add_subscribers_group: group('role:members'),
  can_create_bots_group: group('role:members'),
  can_create_groups: group('role:members', { ownerOnly: true }),
  can_create_private_channel_group: group('role:members'),
  can_create_public_channel_group: group('role:members'),
  can_create_web_public_channel_group: group('role:owners', {
    systemGroupsOnly: ['role:moderators', 'role:administrators', 'role:owners', 'role:nobody'],
  }),
  can_create_write_only_bots_group: group('role:members'),
  can_delete_any_message_group: group('role:administrators'),
  can_delete_own_message_group: group('role:everyone'),
  can_invite_users_group: group('role:members', {
    forbidden: ['role:internet', 'role:everyone'],
    ownerOnly: true,
  }),
  can_manage_all_groups: group('role:owners', {
    forbidden: ['role:internet', 'role:everyone', 'role:nobody'],
    ownerOnly: true,
  }),
  can_mention_many_users_group: group('role:administrators'),
  can_move_messages_between_channels_group: group('role:members'),
  can_move_messages_between_topics_group: group('role:everyone'),
  can_resolve_topics_group: group('role:everyone'),
  create_multiuse_invite_group: group('role:administrators', {
    forbidden: ['role:internet', 'role:everyone'],
    ownerOnly: true,
  }),
  direct_message_initiator_group: group('role:everyone'),
  direct_message_permission_group: group('role:everyone'),
} satisfies Record<string, RealmSettingSpec>;

export type RealmSettingName = keyof typeof REALM_SETTINGS;
export const REALM_SETTING_NAMES = Object.keys(REALM_SETTINGS) as RealmSettingName[];
export const REALM_GROUP_SETTING_NAMES = REALM_SETTING_NAMES.filter(
  (n) => REALM_SETTINGS[n].kind === 'group',
) as RealmSettingName[];

/** Settings as stored: scalar values and group ids. */
export type RealmSettings = Record<RealmSettingName, SettingValue | null>;

/** Full settings from the stored JSON; group settings must have been stored at realm creation. */
export function readRealmSettings(stored: string): Readonly<RealmSettings> {
  // Frozen and shared between callers: the same text gives the same settings.
  return parsedRealmSettings(stored);
}

const parsedRealmSettings = memoByText((stored: string): Readonly<RealmSettings> => {
  const saved = safeJson(stored);
  const out = {} as RealmSettings;
  for (const name of REALM_SETTING_NAMES) {
    const spec: RealmSettingSpec = REALM_SETTINGS[name];
    const v = saved[name];
    if (spec.kind === 'group') out[name] = typeof v === 'number' ? v : -1;
    else out[name] = v === undefined ? spec.default : (v as SettingValue | null);
  }
  return Object.freeze(out);
}, 100);

export function writeRealmSettings(settings: RealmSettings): string {
  return JSON.stringify(settings);
}

export function isValidRealmScalar(spec: RealmScalarSpec, v: unknown): boolean {
  if (v === null) return spec.nullable === true;
  if (spec.type === 'bool') return typeof v === 'boolean';
  if (spec.type === 'int' && (typeof v !== 'number' || !Number.isSafeInteger(v))) return false;
  if (spec.type === 'string' && typeof v !== 'string') return false;
  if (spec.values && !spec.values.includes(v as SettingValue)) return false;
  if (
    typeof v === 'number' &&
    ((spec.min !== undefined && v < spec.min) || (spec.max !== undefined && v > spec.max))
  ) {
    return false;
  }
  if (typeof v === 'string') {
    const length = [...v.trim()].length;
    if (spec.maxLength !== undefined && length > spec.maxLength) return false;
    if (spec.minLength !== undefined && length < spec.minLength) return false;
  }
  return true;
}

export const REALM_NAME_MAX_LENGTH = 40;
export const REALM_DESCRIPTION_MAX_LENGTH = 1000;
