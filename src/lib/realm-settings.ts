// Organization settings: one declarative table serves PATCH /realm, the register
// snapshot (as realm_<name>) and realm update events. Group-permission settings hold a
// user-group id (a system group, a named group, or an anonymous group of direct members
// and subgroups) and are shown to clients as a group-setting value.
import { safeJson, type SettingValue } from './user-settings.ts';
import type { SystemGroupName } from './roles.ts';

export interface RealmScalarSpec {
  kind: 'scalar';
  type: 'bool' | 'int' | 'string';
  default: SettingValue | null;
  nullable?: boolean;
  values?: readonly SettingValue[];
  min?: number;
  max?: number;
  maxLength?: number;
  ownerOnly?: boolean;
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

const bool = (d: boolean, ownerOnly = false): RealmScalarSpec => ({
  kind: 'scalar',
  type: 'bool',
  default: d,
  ownerOnly,
});
const seconds = (d: number | null): RealmScalarSpec => ({
  kind: 'scalar',
  type: 'int',
  default: d,
  nullable: true,
  min: 0,
  max: 365 * 24 * 3600,
});
const group = (d: SystemGroupName, extra: Partial<RealmGroupSpec> = {}): RealmGroupSpec => ({
  kind: 'group',
  default: d,
  forbidden: ['role:internet'],
  ...extra,
});
const channelRef: RealmScalarSpec = { kind: 'scalar', type: 'int', default: -1, min: -1 };

export const REALM_TOPICS_POLICIES = ['allow_empty_topic', 'disable_empty_topic'] as const;
export const MESSAGE_EDIT_HISTORY_POLICIES = ['all', 'moves', 'none'] as const;
export const DEFAULT_EMPTY_TOPIC_DISPLAY_NAME = 'general chat';

export const REALM_SETTINGS = {
  // Scalars, including the name and description columns (handled by the same table).
  allow_message_editing: bool(true),
  message_content_edit_limit_seconds: seconds(600),
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
  empty_topic_display_name: { kind: 'scalar', type: 'string', default: '', maxLength: 60 },
  moderation_request_channel_id: channelRef,
  new_stream_announcements_stream_id: channelRef,
  signup_announcements_stream_id: channelRef,
  presence_disabled: bool(false),
  enable_read_receipts: bool(true),
  enable_spectator_access: bool(false),
  require_unique_names: bool(false),
  send_welcome_emails: bool(true),
  digest_emails_enabled: bool(false),
  default_language: { kind: 'scalar', type: 'string', default: 'en', maxLength: 10 },
  message_retention_days: { kind: 'scalar', type: 'int', default: -1, min: -1, ownerOnly: true },
  waiting_period_threshold: {
    kind: 'scalar',
    type: 'int',
    default: 0,
    min: 0,
    max: 3650,
    ownerOnly: true,
  },
  invite_required: bool(true, true),
  emails_restricted_to_domains: bool(false, true),
  disallow_disposable_email_addresses: bool(true, true),
  video_chat_provider: { kind: 'scalar', type: 'int', default: 1, values: [0, 1] },
  // Group-permission settings.
  can_access_all_users_group: group('role:everyone', {
    systemGroupsOnly: ['role:everyone', 'role:members'],
    ownerOnly: true,
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
  can_invite_users_group: group('role:members', { forbidden: ['role:internet', 'role:everyone'] }),
  can_manage_all_groups: group('role:owners', {
    forbidden: ['role:internet', 'role:everyone'],
    ownerOnly: true,
  }),
  can_mention_many_users_group: group('role:administrators'),
  can_move_messages_between_channels_group: group('role:members'),
  can_move_messages_between_topics_group: group('role:everyone'),
  can_resolve_topics_group: group('role:everyone'),
  create_multiuse_invite_group: group('role:administrators', {
    forbidden: ['role:internet', 'role:everyone'],
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
export function readRealmSettings(stored: string): RealmSettings {
  const saved = safeJson(stored);
  const out = {} as RealmSettings;
  for (const name of REALM_SETTING_NAMES) {
    const spec: RealmSettingSpec = REALM_SETTINGS[name];
    const v = saved[name];
    if (spec.kind === 'group') out[name] = typeof v === 'number' ? v : -1;
    else out[name] = v === undefined ? spec.default : (v as SettingValue | null);
  }
  return out;
}

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
  return !(typeof v === 'string' && spec.maxLength !== undefined && [...v].length > spec.maxLength);
}

export const REALM_NAME_MAX_LENGTH = 40;
export const REALM_DESCRIPTION_MAX_LENGTH = 1000;
