// Row types of every table. Booleans are stored as integers 0/1 on both databases so
// one set of queries serves SQLite and PostgreSQL; timestamps are integer UNIX seconds;
// settings are JSON text holding only values that differ from the defaults in lib/.
import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

export interface RealmTable {
  id: Generated<number>;
  string_id: string;
  name: string;
  description: string;
  icon_source: string;
  icon_version: number;
  date_created: number;
  deactivated: number;
  settings: string;
}

/** Commit sequence of a realm's evented changes (see actions/transaction.ts). */
export interface RealmEventSeqTable {
  realm_id: number;
  event_seq: number;
}

export interface UserTable {
  id: Generated<number>;
  realm_id: number;
  /** API email: the real address, or a fake user<id>@<host> one when the address is hidden. */
  email: string;
  delivery_email: string;
  full_name: string;
  role: number;
  is_active: number;
  is_bot: number;
  bot_type: number | null;
  bot_owner_id: number | null;
  api_key: string;
  password_hash: string | null;
  date_joined: number;
  avatar_source: string;
  avatar_version: number;
  settings: string;
  /** Bots: whether their event queues follow every public channel unless told otherwise. */
  default_all_public_streams: Generated<number>;
}

export interface BotServiceTable {
  id: Generated<number>;
  bot_id: number;
  base_url: string;
  interface: number;
  token: string;
  /** Outgoing webhooks: the service's name; embedded bots: which bot runs. */
  service_name: Generated<string>;
}

/** Key/value configuration of an embedded bot. */
export interface BotConfigDataTable {
  bot_id: number;
  key: string;
  value: string;
}

export interface UserGroupTable {
  id: Generated<number>;
  realm_id: number;
  /** null for the anonymous groups that hold a group-setting value. */
  name: string | null;
  description: string;
  is_system_group: number;
  date_created: number;
  creator_id: number | null;
  deactivated: number;
  settings: string;
}

export interface UserGroupMemberTable {
  group_id: number;
  user_id: number;
}

export interface UserGroupSubgroupTable {
  group_id: number;
  subgroup_id: number;
}

export interface ChannelTable {
  id: Generated<number>;
  realm_id: number;
  name: string;
  name_key: string;
  description: string;
  rendered_description: string;
  invite_only: number;
  is_web_public: number;
  history_public_to_subscribers: number;
  message_retention_days: number | null;
  date_created: number;
  creator_id: number | null;
  is_archived: number;
  topics_policy: string;
  folder_id: number | null;
  recipient_id: number | null;
  /** Group-permission settings as group ids. */
  settings: string;
}

export interface RecipientTable {
  id: Generated<number>;
  realm_id: number;
  channel_id: number | null;
  direct_key: string | null;
}

export interface DirectParticipantTable {
  recipient_id: number;
  user_id: number;
}

export interface SubscriptionTable {
  user_id: number;
  channel_id: number;
  active: number;
  is_muted: number;
  pin_to_top: number;
  color: string;
  desktop_notifications: number | null;
  audible_notifications: number | null;
  push_notifications: number | null;
  email_notifications: number | null;
  wildcard_mentions_notify: number | null;
}

export interface MessageTable {
  id: Generated<number>;
  realm_id: number;
  recipient_id: number;
  channel_id: number | null;
  sender_id: number;
  topic: string;
  content: string;
  rendered_content: string;
  date_sent: number;
  sending_client: string;
  is_me_message: number;
  last_edit_time: number | null;
  last_moved_time: number | null;
  edit_history: string | null;
  has_link: number;
  has_image: number;
  has_attachment: number;
}

export interface UserMessageTable {
  user_id: number;
  message_id: number;
  flags: number;
}

export interface ReactionTable {
  id: Generated<number>;
  message_id: number;
  user_id: number;
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
}

export interface UserTopicTable {
  user_id: number;
  channel_id: number;
  topic_name: string;
  topic_key: string;
  visibility_policy: number;
  last_updated: number;
}

export interface AlertWordTable {
  user_id: number;
  word: string;
}

export interface DefaultChannelTable {
  realm_id: number;
  channel_id: number;
}

export interface DefaultChannelGroupTable {
  id: Generated<number>;
  realm_id: number;
  name: string;
  description: string;
}

export interface DefaultChannelGroupChannelTable {
  group_id: number;
  channel_id: number;
}

export interface ChannelFolderTable {
  id: Generated<number>;
  realm_id: number;
  name: string;
  description: string;
  rendered_description: string;
  /** Position among the realm's folders (the API's order). */
  sort_order: number;
  date_created: number;
  creator_id: number | null;
  is_archived: number;
}

export interface DraftTable {
  id: Generated<number>;
  user_id: number;
  /** '', 'stream' or 'private'. */
  type: string;
  /** The recipients as JSON text: [channel id] or user ids. */
  to_ids: string;
  topic: string;
  content: string;
  last_edit_time: number;
}

/** A user's presence; last_active_time is null until a client reports them active. */
export interface UserPresenceTable {
  user_id: number;
  realm_id: number;
  last_active_time: number | null;
  last_connected_time: number;
  /** The realm's presence sequence value when the row last changed. */
  last_update_id: number;
}

export interface PresenceSequenceTable {
  realm_id: number;
  last_update_id: number;
}

/** A custom emoji; the image is <realm>/emoji/<id>.<file_ext> in the file store. */
export interface RealmEmojiTable {
  id: Generated<number>;
  realm_id: number;
  /** As shown: lower case, spaces stored as underscores. */
  name: string;
  author_id: number | null;
  /** 'png', 'gif' or 'webp'; animated emoji also have a still PNG. */
  file_ext: string;
  is_animated: number;
  deactivated: number;
  date_created: number;
}

/** An invitation: email_invites and multiuse_invites have the same columns but email. */
export interface InviteColumns {
  id: Generated<number>;
  realm_id: number;
  referred_by_id: number;
  invited_as: number;
  created: number;
  /** Null: never expires. */
  expiry: number | null;
  notify_referrer_on_join: number;
  /** JSON arrays of ids. */
  channel_ids: string;
  group_ids: string;
  include_realm_default_subscriptions: number;
  invite_key: string;
  /** 0 pending, 1 used (email invitations), 2 revoked. */
  status: number;
}

export interface EmailInviteTable extends InviteColumns {
  email: string;
}

/** One user muting another (issue 6 records: migration 0007). */
export interface MutedUserTable {
  user_id: number;
  muted_user_id: number;
  date_muted: number;
}

export interface CustomProfileFieldTable {
  id: Generated<number>;
  realm_id: number;
  name: string;
  hint: string;
  /** 1 short text … 8 pronouns (lib/profile-fields.ts). */
  field_type: number;
  /** JSON text, or '' for types without data. */
  field_data: string;
  field_order: number;
  required: number;
  editable_by_user: number;
  display_in_profile_summary: number;
}

export interface CustomProfileFieldValueTable {
  user_id: number;
  field_id: number;
  value: string;
  /** HTML of Markdown types; null for the others. */
  rendered_value: string | null;
}

export interface RealmPlaygroundTable {
  id: Generated<number>;
  realm_id: number;
  name: string;
  pygments_language: string;
  url_template: string;
}

export interface PushDeviceTokenTable {
  user_id: number;
  /** 'gcm' or 'apns'. */
  kind: string;
  token: string;
  ios_app_id: string | null;
  date_created: number;
}

/** A one-time notice the user has seen. */
export interface OnboardingStepTable {
  user_id: number;
  name: string;
  date_seen: number;
}

/** An outgoing-webhook request still to be made (times in UNIX seconds). */
export interface OutgoingWebhookDeliveryTable {
  id: Generated<number>;
  realm_id: number;
  bot_id: number;
  message_id: number;
  /** 'mention' or 'direct_message'. */
  trigger: string;
  /** Failed attempts so far (timeouts and connection errors). */
  attempts: Generated<number>;
  next_attempt_at: number;
}

export interface DB {
  outgoing_webhook_deliveries: OutgoingWebhookDeliveryTable;
  realms: RealmTable;
  realm_event_seqs: RealmEventSeqTable;
  users: UserTable;
  bot_services: BotServiceTable;
  bot_config_data: BotConfigDataTable;
  user_groups: UserGroupTable;
  user_group_members: UserGroupMemberTable;
  user_group_subgroups: UserGroupSubgroupTable;
  channels: ChannelTable;
  recipients: RecipientTable;
  direct_participants: DirectParticipantTable;
  subscriptions: SubscriptionTable;
  messages: MessageTable;
  user_messages: UserMessageTable;
  reactions: ReactionTable;
  user_topics: UserTopicTable;
  alert_words: AlertWordTable;
  default_channels: DefaultChannelTable;
  default_channel_groups: DefaultChannelGroupTable;
  default_channel_group_channels: DefaultChannelGroupChannelTable;
  channel_folders: ChannelFolderTable;
  drafts: DraftTable;
  user_presences: UserPresenceTable;
  presence_sequences: PresenceSequenceTable;
  realm_emoji: RealmEmojiTable;
  email_invites: EmailInviteTable;
  multiuse_invites: InviteColumns;
  muted_users: MutedUserTable;
  custom_profile_fields: CustomProfileFieldTable;
  custom_profile_field_values: CustomProfileFieldValueTable;
  realm_playgrounds: RealmPlaygroundTable;
  push_device_tokens: PushDeviceTokenTable;
  onboarding_steps: OnboardingStepTable;
}

export type RealmRow = Selectable<RealmTable>;
export type NewRealm = Insertable<RealmTable>;
export type UserRow = Selectable<UserTable>;
export type NewUser = Insertable<UserTable>;
export type UserUpdate = Updateable<UserTable>;
export type UserGroupRow = Selectable<UserGroupTable>;
export type BotServiceRow = Selectable<BotServiceTable>;
export type NewBotService = Insertable<BotServiceTable>;
export type BotConfigDataRow = Selectable<BotConfigDataTable>;
export type ChannelRow = Selectable<ChannelTable>;
export type SubscriptionRow = Selectable<SubscriptionTable>;
export type MessageRow = Selectable<MessageTable>;
export type RecipientRow = Selectable<RecipientTable>;
export type ReactionRow = Selectable<ReactionTable>;
export type UserTopicRow = Selectable<UserTopicTable>;
export type ChannelFolderRow = Selectable<ChannelFolderTable>;
export type DraftRow = Selectable<DraftTable>;
export type UserPresenceRow = Selectable<UserPresenceTable>;
export type RealmEmojiRow = Selectable<RealmEmojiTable>;
export type EmailInviteRow = Selectable<EmailInviteTable>;
export type MultiuseInviteRow = Selectable<InviteColumns>;
export type CustomProfileFieldRow = Selectable<CustomProfileFieldTable>;
export type RealmPlaygroundRow = Selectable<RealmPlaygroundTable>;
export type OutgoingWebhookDeliveryRow = Selectable<OutgoingWebhookDeliveryTable>;
