// Channel group-permission settings: each holds a user-group id, combined with the
// organization's own settings (an organization administrator can always administer).
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
export function readChannelSettings(stored: string): ChannelGroupSettings {
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
  return out;
}

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

/** Channel names: trimmed, non-empty, bounded, no control characters. */
export function normalizeChannelName(raw: string): string | null {
  const name = raw.trim();
  if (name === '' || [...name].length > MAX_CHANNEL_NAME_LENGTH) return null;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return null;
  return name;
}
