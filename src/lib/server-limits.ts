// Limits and timings the server announces in POST /register, in one place so the
// endpoints that enforce a limit and the snapshot that announces it cannot disagree.
import { REALM_SETTINGS, type RealmGroupSpec } from './realm-settings.ts';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './validation.ts';

/** Clients use this as their GET /events HTTP timeout; it must exceed the heartbeat interval. */
export const EVENT_QUEUE_LONGPOLL_TIMEOUT_SECONDS = 90;
/** The longest idle lifetime a client may ask for (idle_queue_timeout). */
export const MAX_QUEUE_IDLE_TIMEOUT_SECS = 7 * 24 * 3600;
/** idle_queue_timeout=mobile: long enough to survive a night in the background. */
export const MOBILE_QUEUE_IDLE_TIMEOUT_SECS = 12 * 3600;

export const MAX_MESSAGE_LENGTH = 10000;
export const MAX_TOPIC_LENGTH = 60;
export const MAX_CHANNEL_NAME_LENGTH = 60;
export const MAX_CHANNEL_DESCRIPTION_LENGTH = 1024;
export const MAX_CHANNEL_FOLDER_NAME_LENGTH = 60;
export const MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH = 1024;
export const MAX_FILE_UPLOAD_SIZE_MIB = 25;
export const MAX_AVATAR_FILE_SIZE_MIB = 5;
export const MAX_ICON_FILE_SIZE_MIB = 5;

export const PRESENCE_PING_INTERVAL_SECONDS = 60;
export const PRESENCE_OFFLINE_THRESHOLD_SECONDS = 200;
export const TYPING_STARTED_EXPIRY_PERIOD_MS = 45000;
export const TYPING_STOPPED_WAIT_PERIOD_MS = 12000;
export const TYPING_STARTED_WAIT_PERIOD_MS = 30000;

/** How the reference server describes a group-permission setting to clients. */
function describeGroupSetting(spec: RealmGroupSpec): Record<string, unknown> {
  const forbidden = spec.forbidden ?? [];
  return {
    require_system_group: spec.systemGroupsOnly !== undefined,
    allow_internet_group: !forbidden.includes('role:internet'),
    allow_nobody_group: !forbidden.includes('role:nobody'),
    allow_everyone_group: !forbidden.includes('role:everyone'),
    default_group_name: spec.default,
    default_for_system_groups: null,
    allowed_system_groups: spec.systemGroupsOnly ?? [],
  };
}

/** server_supported_permission_settings; channel and group settings join as those areas land. */
export function supportedPermissionSettings(): Record<string, Record<string, unknown>> {
  const realm: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(REALM_SETTINGS)) {
    if (spec.kind === 'group') realm[name] = describeGroupSetting(spec);
  }
  return { realm, stream: {}, group: {} };
}

/**
 * The server-wide keys of every register response. Features Parley does not offer are
 * announced as off (web-public channels, video-call servers, summaries, thumbnails).
 */
export function serverRegisterConstants(serverGeneration: number): Record<string, unknown> {
  return {
    event_queue_longpoll_timeout_seconds: EVENT_QUEUE_LONGPOLL_TIMEOUT_SECONDS,
    max_message_length: MAX_MESSAGE_LENGTH,
    max_topic_length: MAX_TOPIC_LENGTH,
    max_stream_name_length: MAX_CHANNEL_NAME_LENGTH,
    max_stream_description_length: MAX_CHANNEL_DESCRIPTION_LENGTH,
    max_channel_folder_name_length: MAX_CHANNEL_FOLDER_NAME_LENGTH,
    max_channel_folder_description_length: MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH,
    max_file_upload_size_mib: MAX_FILE_UPLOAD_SIZE_MIB,
    max_avatar_file_size_mib: MAX_AVATAR_FILE_SIZE_MIB,
    max_icon_file_size_mib: MAX_ICON_FILE_SIZE_MIB,
    max_logo_file_size_mib: MAX_AVATAR_FILE_SIZE_MIB,
    password_min_length: MIN_PASSWORD_LENGTH,
    password_max_length: MAX_PASSWORD_LENGTH,
    server_presence_ping_interval_seconds: PRESENCE_PING_INTERVAL_SECONDS,
    server_presence_offline_threshold_seconds: PRESENCE_OFFLINE_THRESHOLD_SECONDS,
    server_typing_started_expiry_period_milliseconds: TYPING_STARTED_EXPIRY_PERIOD_MS,
    server_typing_stopped_wait_period_milliseconds: TYPING_STOPPED_WAIT_PERIOD_MS,
    server_typing_started_wait_period_milliseconds: TYPING_STARTED_WAIT_PERIOD_MS,
    server_supported_permission_settings: supportedPermissionSettings(),
    server_generation: serverGeneration,
    server_needs_upgrade: false,
    server_avatar_changes_disabled: false,
    server_name_changes_disabled: false,
    server_web_public_streams_enabled: false,
    server_inline_image_preview: false,
    server_inline_url_embed_preview: false,
    server_thumbnail_formats: [],
    server_emoji_data_url: null,
    server_jitsi_server_url: null,
    server_can_summarize_topics: false,
    development_environment: false,
  };
}
