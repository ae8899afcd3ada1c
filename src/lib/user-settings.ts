// Personal settings: one declarative table serves PATCH /settings, the register
// snapshot and the user_settings events. Values that equal the default are not stored.

import { memoByText } from './memo.ts';

export type SettingValue = boolean | number | string;
export type LegacyEventKind = 'display' | 'notification' | null;

export interface SettingSpec {
  type: 'bool' | 'int' | 'string';
  default: SettingValue;
  /** Allowed values for enumerations. */
  values?: readonly SettingValue[];
  min?: number;
  max?: number;
  maxLength?: number;
  /** Which pre-feature-level-89 event reports a change, for clients without user_settings_object. */
  legacy: LegacyEventKind;
  /** The reference server's message for a refused value, where it is not "Invalid <name>". */
  invalidMessage?: (value: unknown) => string;
}

const bool = (d: boolean, legacy: LegacyEventKind = null): SettingSpec => ({
  type: 'bool',
  default: d,
  legacy,
});
const choice = (d: number, values: number[], legacy: LegacyEventKind = null): SettingSpec => ({
  type: 'int',
  default: d,
  values,
  legacy,
});

export const AVAILABLE_NOTIFICATION_SOUNDS = ['chime', 'ding', 'none'] as const;
export const EMOJISETS = ['google', 'twitter', 'text', 'google-blob'] as const;
export const LANGUAGES: Record<string, string> = {
  en: 'English',
  de: 'Deutsch',
  es: 'español',
  fr: 'français',
  it: 'italiano',
  ja: '日本語',
  nl: 'Nederlands',
  pl: 'polski',
  pt: 'português',
  ru: 'русский',
  zh: '中文',
};

export const EMAIL_ADDRESS_VISIBILITY = {
  everyone: 1,
  members: 2,
  admins: 3,
  nobody: 4,
  moderators: 5,
} as const;

export const USER_SETTINGS = {
  twenty_four_hour_time: bool(false, 'display'),
  web_mark_read_on_scroll_policy: choice(1, [1, 2, 3]),
  web_channel_default_view: choice(1, [1, 2, 3, 4]),
  starred_message_counts: bool(true, 'display'),
  receives_typing_notifications: bool(true),
  web_suggest_update_timezone: bool(true),
  fluid_layout_width: bool(false, 'display'),
  high_contrast_mode: bool(false, 'display'),
  web_font_size_px: { type: 'int', default: 16, min: 12, max: 32, legacy: null },
  web_line_height_percent: { type: 'int', default: 140, min: 100, max: 200, legacy: null },
  color_scheme: choice(1, [1, 2, 3], 'display'),
  enable_drafts_synchronization: bool(true, 'display'),
  translate_emoticons: bool(true, 'display'),
  display_emoji_reaction_users: bool(true),
  default_language: {
    type: 'string',
    default: 'en',
    values: Object.keys(LANGUAGES),
    legacy: 'display',
    invalidMessage: () => 'Invalid default_language',
  },
  web_home_view: {
    type: 'string',
    default: 'inbox',
    values: ['recent_topics', 'inbox', 'all_messages'],
    legacy: 'display',
  },
  web_escape_navigates_to_home_view: bool(true),
  left_side_userlist: bool(false, 'display'),
  emojiset: { type: 'string', default: 'google', values: EMOJISETS, legacy: 'display' },
  demote_inactive_streams: choice(1, [1, 2, 3], 'display'),
  user_list_style: choice(2, [1, 2, 3]),
  web_animate_image_previews: {
    type: 'string',
    default: 'on_hover',
    values: ['always', 'on_hover', 'never'],
    legacy: null,
  },
  web_stream_unreads_count_display_policy: choice(2, [1, 2, 3]),
  hide_ai_features: bool(false),
  timezone: {
    type: 'string',
    default: '',
    maxLength: 40,
    legacy: 'display',
    invalidMessage: () => 'timezone is not a recognized time zone',
  },
  enable_stream_desktop_notifications: bool(false, 'notification'),
  enable_stream_email_notifications: bool(false, 'notification'),
  enable_stream_push_notifications: bool(false, 'notification'),
  enable_stream_audible_notifications: bool(false, 'notification'),
  notification_sound: {
    type: 'string',
    default: 'chime',
    values: AVAILABLE_NOTIFICATION_SOUNDS,
    legacy: 'notification',
    invalidMessage: (v) => `Invalid notification sound '${String(v)}'`,
  },
  enable_desktop_notifications: bool(true, 'notification'),
  enable_sounds: bool(true, 'notification'),
  email_notifications_batching_period_seconds: {
    type: 'int',
    default: 120,
    min: 1,
    max: 7 * 24 * 3600,
    legacy: 'notification',
    invalidMessage: (v) => `Invalid email batching period: ${String(v)} seconds`,
  },
  enable_offline_email_notifications: bool(true, 'notification'),
  enable_offline_push_notifications: bool(true, 'notification'),
  enable_online_push_notifications: bool(true, 'notification'),
  enable_followed_topic_desktop_notifications: bool(true),
  enable_followed_topic_email_notifications: bool(true),
  enable_followed_topic_push_notifications: bool(true),
  enable_followed_topic_audible_notifications: bool(true),
  enable_digest_emails: bool(true, 'notification'),
  enable_marketing_emails: bool(true, 'notification'),
  enable_login_emails: bool(true, 'notification'),
  message_content_in_email_notifications: bool(true, 'notification'),
  pm_content_in_desktop_notifications: bool(true, 'notification'),
  wildcard_mentions_notify: bool(true, 'notification'),
  enable_followed_topic_wildcard_mentions_notify: bool(true),
  desktop_icon_count_display: choice(1, [1, 2, 3], 'notification'),
  realm_name_in_email_notifications_policy: choice(1, [1, 2, 3], 'notification'),
  automatically_follow_topics_policy: choice(3, [1, 2, 3, 4]),
  automatically_unmute_topics_in_muted_streams_policy: choice(2, [1, 2, 3, 4]),
  automatically_follow_topics_where_mentioned: bool(true),
  presence_enabled: bool(true, 'notification'),
  enter_sends: bool(false, 'display'),
  send_private_typing_notifications: bool(true),
  send_stream_typing_notifications: bool(true),
  send_read_receipts: bool(true),
  allow_private_data_export: bool(false),
  email_address_visibility: choice(1, [1, 2, 3, 4, 5], null),
  web_navigate_to_sent_message: bool(true),
} satisfies Record<string, SettingSpec>;

export type UserSettingName = keyof typeof USER_SETTINGS;
export type UserSettings = { [K in UserSettingName]: SettingValue };
export const USER_SETTING_NAMES = Object.keys(USER_SETTINGS) as UserSettingName[];

/** Full settings from the stored overrides (unknown or stale keys are dropped). */
export function readUserSettings(stored: string): Readonly<UserSettings> {
  // Frozen and shared between callers: the same text gives the same settings.
  return parsedUserSettings(stored);
}

const parsedUserSettings = memoByText((stored: string): Readonly<UserSettings> => {
  const overrides = safeJson(stored);
  const out = {} as UserSettings;
  for (const name of USER_SETTING_NAMES) {
    const v = overrides[name];
    out[name] = isValidSetting(USER_SETTINGS[name], v)
      ? (v as SettingValue)
      : USER_SETTINGS[name].default;
  }
  return Object.freeze(out);
}, 1000);

/** The stored form: only values that differ from their defaults. */
export function writeUserSettings(settings: Partial<UserSettings>): string {
  const out: Record<string, SettingValue> = {};
  for (const name of USER_SETTING_NAMES) {
    const v = settings[name];
    if (v !== undefined && v !== USER_SETTINGS[name].default) out[name] = v;
  }
  return JSON.stringify(out);
}

export function isValidSetting(spec: SettingSpec, v: unknown): boolean {
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
  return !(typeof v === 'string' && spec.maxLength !== undefined && v.length > spec.maxLength);
}

export function safeJson(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
