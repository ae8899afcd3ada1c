// The POST /register snapshot, section by section. Each section names the fetch types it
// answers and builds its keys from read-only helpers; actions/events.ts runs them all in
// one read transaction (ctx.db is that transaction here), so the snapshot is one state.
// An area adds its section with one line in SNAPSHOT_SECTIONS.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { emptyTopicDisplayName, type ClientDescriptor } from '../lib/event-client.ts';
import { realmIconUrl } from '../lib/presenters/server.ts';
import { avatarUrl } from '../lib/presenters/users.ts';
import { fakeEmailDomain, realmUrl } from '../lib/realm-url.ts';
import { isAdmin, isGuest, isModerator, isOwner } from '../lib/roles.ts';
import {
  AVAILABLE_NOTIFICATION_SOUNDS,
  EMOJISETS,
  readUserSettings,
  USER_SETTING_NAMES,
  USER_SETTINGS,
  type LegacyEventKind,
} from '../lib/user-settings.ts';
import { listBotsFor } from '../actions/bots.ts';
import { hasRealmPermission } from '../actions/permissions.ts';
import { presentRealmSettings } from '../actions/realms.ts';
import { presentUsersFor } from '../actions/user-directory.ts';
import { CHANNEL_SECTIONS } from './sections/channels.ts';
import { MESSAGE_SECTIONS } from './sections/messages.ts';
import { PREFERENCE_SECTIONS } from './sections/preferences.ts';
import { PRESENCE_SECTIONS } from './sections/presence.ts';
import { DRAFTS_SECTION } from './sections/drafts.ts';
import { CHANNEL_FOLDERS_SECTION } from './sections/channel-folders.ts';
import { USER_GROUPS_SECTION } from './sections/user-groups.ts';
import { USER_RECORD_SECTIONS } from './sections/user-records.ts';
import { REALM_EMOJI_SECTION } from './sections/realm-emoji.ts';

export interface SnapshotRequest {
  /** The user and realm as read inside the snapshot transaction. */
  actor: Actor;
  client: ClientDescriptor;
  /** fetch_event_types, else event_types, else null for every section. */
  fetch: readonly string[] | null;
  includeSubscribers: boolean | 'partial';
  presenceHistoryLimitDays: number | null;
}

type Keys = Record<string, unknown>;

export interface SnapshotSection {
  include(req: SnapshotRequest): boolean;
  build(ctx: AppContext, req: SnapshotRequest): Promise<Keys>;
}

/** A section fetched when every one of these types is wanted. */
const when =
  (...types: string[]) =>
  (req: SnapshotRequest): boolean =>
    types.every((t) => req.fetch === null || req.fetch.includes(t));

/** The flat pre-user_settings keys, for clients that do not declare user_settings_object. */
const legacyWhen =
  (type: string) =>
  (req: SnapshotRequest): boolean =>
    when(type)(req) && !req.client.capabilities.user_settings_object;

export const SNAPSHOT_SECTIONS: SnapshotSection[] = [
  { include: when('realm'), build: realmSection },
  { include: when('realm_user'), build: realmUserSection },
  {
    include: when('realm_bot'),
    build: async (ctx, req) => ({ realm_bots: await listBotsFor(ctx, req.actor) }),
  },
  { include: when('user_settings'), build: userSettingsSection },
  {
    include: legacyWhen('update_display_settings'),
    build: async (_c, req) => legacySettings(req, 'display'),
  },
  {
    include: legacyWhen('update_global_notifications'),
    build: async (_c, req) => legacySettings(req, 'notification'),
  },
  ...CHANNEL_SECTIONS,
  ...MESSAGE_SECTIONS,
  ...PREFERENCE_SECTIONS,
  ...PRESENCE_SECTIONS,
  DRAFTS_SECTION,
  CHANNEL_FOLDERS_SECTION,
  USER_GROUPS_SECTION,
  ...USER_RECORD_SECTIONS,
  REALM_EMOJI_SECTION,
];

export async function buildSnapshot(ctx: AppContext, req: SnapshotRequest): Promise<Keys> {
  const out: Keys = {};
  for (const section of SNAPSHOT_SECTIONS) {
    if (section.include(req)) Object.assign(out, await section.build(ctx, req));
  }
  return out;
}

const VIDEO_CHAT_PROVIDERS = {
  disabled: { name: 'None', id: 0 },
  jitsi_meet: { name: 'Jitsi Meet', id: 1 },
};

async function realmSection(ctx: AppContext, req: SnapshotRequest): Promise<Keys> {
  const realm = req.actor.realm;
  const settings = await presentRealmSettings(ctx, realm);
  const out: Keys = {};
  for (const [name, value] of Object.entries(settings)) out[`realm_${name}`] = value;
  const url = realmUrl(ctx.config.externalUrl, realm.string_id);
  return {
    ...out,
    realm_name: realm.name,
    realm_description: realm.description,
    realm_url: url,
    realm_uri: url,
    realm_date_created: realm.date_created,
    realm_icon_url: realmIconUrl(realm),
    realm_icon_source: realm.icon_source,
    realm_bot_domain: fakeEmailDomain(ctx.config.externalUrl, realm.string_id),
    realm_empty_topic_display_name: emptyTopicDisplayName(settings.empty_topic_display_name),
    // Older forms of settings above, derived the way clients derive them from events.
    realm_allow_edit_history: settings.message_edit_history_visibility_policy !== 'none',
    realm_mandatory_topics: settings.topics_policy === 'disable_empty_topic',
    realm_available_video_chat_providers: VIDEO_CHAT_PROVIDERS,
    realm_email_auth_enabled: true,
    realm_password_auth_enabled: true,
    realm_email_changes_disabled: false,
    realm_name_changes_disabled: false,
    realm_avatar_changes_disabled: false,
    realm_push_notifications_enabled: false,
    realm_push_notifications_enabled_end_timestamp: null,
    realm_is_zephyr_mirror_realm: false,
    realm_default_external_accounts: {},
    realm_jitsi_server_url: null,
  };
}

async function realmUserSection(ctx: AppContext, req: SnapshotRequest): Promise<Keys> {
  const { user: me } = req.actor;
  // Users a limited guest cannot access are "Unknown user" placeholders, or left out.
  const people = await presentUsersFor(ctx, req.actor, {
    clientGravatar: req.client.clientGravatar,
    includeProfileData: true,
    userListIncomplete: req.client.capabilities.user_list_incomplete,
  });
  const active: Keys[] = [];
  const inactive: Keys[] = [];
  for (const { is_active, ...person } of people) (is_active ? active : inactive).push(person);
  const can = (setting: Parameters<typeof hasRealmPermission>[2]) =>
    hasRealmPermission(ctx.db, me, setting);
  const canCreatePublic = await can('can_create_public_channel_group');
  const canCreatePrivate = await can('can_create_private_channel_group');
  return {
    realm_users: active,
    realm_non_active_users: inactive,
    cross_realm_bots: [],
    user_id: me.id,
    email: me.email,
    delivery_email: me.delivery_email,
    full_name: me.full_name,
    avatar_source: me.avatar_source,
    avatar_url: avatarUrl(me),
    avatar_url_medium: avatarUrl(me, true),
    is_owner: isOwner(me),
    is_admin: isAdmin(me),
    is_moderator: isModerator(me),
    is_guest: isGuest(me),
    can_create_streams: canCreatePublic || canCreatePrivate,
    can_create_public_streams: canCreatePublic,
    can_create_private_streams: canCreatePrivate,
    // Parley has no web-public channels (server_web_public_streams_enabled is false).
    can_create_web_public_streams: false,
    can_subscribe_other_users: await can('can_add_subscribers_group'),
    can_invite_others_to_realm: await can('can_invite_users_group'),
  };
}

const EMOJISET_NAMES: Record<string, string> = {
  google: 'Google',
  twitter: 'Twitter',
  text: 'Plain text',
  'google-blob': 'Google blobs',
};

const emojisetChoices = () => EMOJISETS.map((key) => ({ key, text: EMOJISET_NAMES[key] ?? key }));
/** Sound files clients may play; "none" is a setting value, not a sound. */
const notificationSounds = () => AVAILABLE_NOTIFICATION_SOUNDS.filter((s) => s !== 'none');

async function userSettingsSection(_ctx: AppContext, req: SnapshotRequest): Promise<Keys> {
  return {
    user_settings: {
      ...readUserSettings(req.actor.user.settings),
      emojiset_choices: emojisetChoices(),
      available_notification_sounds: notificationSounds(),
    },
  };
}

function legacySettings(req: SnapshotRequest, kind: Exclude<LegacyEventKind, null>): Keys {
  const settings = readUserSettings(req.actor.user.settings);
  const out: Keys = {};
  for (const name of USER_SETTING_NAMES) {
    if (USER_SETTINGS[name].legacy === kind) out[name] = settings[name];
  }
  if (kind === 'display') out.emojiset_choices = emojisetChoices();
  else out.available_notification_sounds = notificationSounds();
  return out;
}
