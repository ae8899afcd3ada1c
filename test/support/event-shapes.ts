// The declared shape of every event type Parley emits, as TypeBox schemas written from
// the API description (not from the server's code), so a test can assert that each event
// it receives is one of the declared forms. Areas add their types to SHAPES.
import assert from 'node:assert/strict';
import { Type, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { MESSAGE_EVENT_SHAPES } from './message-events.ts';
import { FLAG_EVENT_SHAPES } from './flag-events.ts';
import { DRAFTS_FOLDERS_EVENT_SHAPES } from './drafts-folders-events.ts';
import { PREFERENCE_EVENT_SHAPES } from './preference-events.ts';
import { EMOJI_INVITE_EVENT_SHAPES } from './emoji-invite-events.ts';
import { USER_RECORD_EVENT_SHAPES } from './user-record-events.ts';
import { USER_GROUP_EVENT_SHAPES } from './user-group-events.ts';

const Id = Type.Integer({ minimum: 0 });
const UserId = Type.Integer({ minimum: 1 });
const Scalar = Type.Union([Type.Boolean(), Type.Integer(), Type.String()]);
const Role = Type.Union([100, 200, 300, 400, 600].map((r) => Type.Literal(r)));
const GroupSettingValue = Type.Union([
  Type.Integer(),
  Type.Object(
    { direct_members: Type.Array(Type.Integer()), direct_subgroups: Type.Array(Type.Integer()) },
    { additionalProperties: false },
  ),
]);

function event(type: string, fields: Record<string, TSchema>, op?: string): TSchema {
  return Type.Object(
    { id: Id, type: Type.Literal(type), ...(op ? { op: Type.Literal(op) } : {}), ...fields },
    { additionalProperties: false },
  );
}

const strict = (fields: Record<string, TSchema>) =>
  Type.Object(fields, { additionalProperties: false });

/** The person object of realm_user add (the User resource). */
const Person = strict({
  user_id: UserId,
  delivery_email: Type.Union([Type.String(), Type.Null()]),
  email: Type.String(),
  full_name: Type.String(),
  date_joined: Type.String(),
  is_active: Type.Boolean(),
  is_owner: Type.Boolean(),
  is_admin: Type.Boolean(),
  is_guest: Type.Boolean(),
  is_bot: Type.Boolean(),
  bot_type: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 4 }), Type.Null()])),
  bot_owner_id: Type.Optional(Type.Union([UserId, Type.Null()])),
  role: Role,
  timezone: Type.String(),
  avatar_url: Type.Union([Type.String(), Type.Null()]),
  avatar_version: Type.Integer(),
  profile_data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

/** The nine forms of person in realm_user update. */
const PersonUpdate = Type.Union([
  strict({ user_id: UserId, full_name: Type.String() }),
  strict({
    user_id: UserId,
    avatar_url: Type.String(),
    avatar_source: Type.Union([Type.Literal('G'), Type.Literal('U')]),
    avatar_url_medium: Type.String(),
    avatar_version: Type.Integer(),
  }),
  strict({ user_id: UserId, email: Type.String(), timezone: Type.String() }),
  strict({ user_id: UserId, bot_owner_id: UserId }),
  strict({ user_id: UserId, role: Role }),
  strict({ user_id: UserId, delivery_email: Type.Union([Type.String(), Type.Null()]) }),
  strict({
    user_id: UserId,
    custom_profile_field: strict({
      id: Type.Integer(),
      value: Type.Union([Type.String(), Type.Null()]),
      rendered_value: Type.Optional(Type.String()),
    }),
  }),
  strict({ user_id: UserId, new_email: Type.String() }),
  strict({ user_id: UserId, is_active: Type.Boolean() }),
]);

const Service = Type.Union([
  strict({ base_url: Type.String(), token: Type.String(), interface: Type.Integer() }),
  strict({ service_name: Type.String(), config_data: Type.Record(Type.String(), Type.String()) }),
]);

const BOT_FIELDS = {
  full_name: Type.String(),
  api_key: Type.String(),
  default_sending_stream: Type.Union([Type.String(), Type.Null()]),
  default_events_register_stream: Type.Union([Type.String(), Type.Null()]),
  default_all_public_streams: Type.Boolean(),
  avatar_url: Type.String(),
  owner_id: Type.Union([UserId, Type.Null()]),
  services: Type.Array(Service),
  is_active: Type.Boolean(),
};

const Bot = strict({
  user_id: UserId,
  email: Type.String(),
  bot_type: Type.Union([Type.Integer({ minimum: 1, maximum: 4 }), Type.Null()]),
  ...BOT_FIELDS,
});

/** realm_bot update: the bot's id and exactly one changed property. */
const BotUpdate = Type.Union(
  Object.entries(BOT_FIELDS).map(([name, schema]) => strict({ user_id: UserId, [name]: schema })),
);

/** A channel as stream events carry it (the Channel resource). */
const CHANNEL_FIELDS = {
  stream_id: Type.Integer(),
  name: Type.String(),
  description: Type.String(),
  rendered_description: Type.String(),
  date_created: Type.Integer(),
  creator_id: Type.Union([UserId, Type.Null()]),
  invite_only: Type.Boolean(),
  is_archived: Type.Boolean(),
  is_web_public: Type.Boolean(),
  stream_post_policy: Type.Union([1, 2, 3, 4].map((v) => Type.Literal(v))),
  is_announcement_only: Type.Boolean(),
  message_retention_days: Type.Union([Type.Integer(), Type.Null()]),
  history_public_to_subscribers: Type.Boolean(),
  first_message_id: Type.Union([Type.Integer(), Type.Null()]),
  is_recently_active: Type.Boolean(),
  topics_policy: Type.Union(
    ['inherit', 'allow_empty_topic', 'disable_empty_topic', 'empty_topic_only'].map((v) =>
      Type.Literal(v),
    ),
  ),
  folder_id: Type.Union([Type.Integer(), Type.Null()]),
  stream_weekly_traffic: Type.Union([Type.Integer(), Type.Null()]),
  subscriber_count: Type.Integer({ minimum: 0 }),
  can_add_subscribers_group: GroupSettingValue,
  can_administer_channel_group: GroupSettingValue,
  can_remove_subscribers_group: GroupSettingValue,
  can_send_message_group: GroupSettingValue,
  can_subscribe_group: GroupSettingValue,
  can_delete_any_message_group: GroupSettingValue,
  can_delete_own_message_group: GroupSettingValue,
  can_move_messages_out_of_channel_group: GroupSettingValue,
  can_move_messages_within_channel_group: GroupSettingValue,
  can_resolve_topics_group: GroupSettingValue,
};
const Channel = strict(CHANNEL_FIELDS);
const NullableFlag = Type.Union([Type.Boolean(), Type.Null()]);
/** A subscription in subscription add (the Subscription resource). */
const Subscription = strict({
  ...CHANNEL_FIELDS,
  color: Type.String(),
  pin_to_top: Type.Boolean(),
  is_muted: Type.Boolean(),
  in_home_view: Type.Boolean(),
  desktop_notifications: NullableFlag,
  audible_notifications: NullableFlag,
  push_notifications: NullableFlag,
  email_notifications: NullableFlag,
  wildcard_mentions_notify: NullableFlag,
  subscribers: Type.Optional(Type.Array(UserId)),
  partial_subscribers: Type.Optional(Type.Array(UserId)),
});
const Peers = { stream_ids: Type.Array(Type.Integer()), user_ids: Type.Array(UserId) };

const ModernPresence = strict({ active_timestamp: Type.Integer(), idle_timestamp: Type.Integer() });
const PresenceStatus = Type.Union([Type.Literal('active'), Type.Literal('idle')]);
const LegacyClientPresence = strict({
  client: Type.Literal('website'),
  status: PresenceStatus,
  timestamp: Type.Integer(),
  pushable: Type.Literal(false),
});
const LEGACY_PRESENCE_FIELDS = {
  user_id: UserId,
  server_timestamp: Type.Number(),
  presence: strict({ website: LegacyClientPresence }),
};
const TypingPerson = strict({ user_id: UserId, email: Type.String() });

const SHAPES: Record<string, TSchema[]> = {
  heartbeat: [event('heartbeat', {})],
  restart: [
    event('restart', {
      svc_version: Type.String(),
      svc_merge_base: Type.String(),
      svc_feature_level: Type.Integer(),
      zulip_version: Type.String(),
      zulip_merge_base: Type.String(),
      zulip_feature_level: Type.Integer(),
      server_generation: Type.Integer(),
    }),
  ],
  realm_user: [
    event('realm_user', { person: Person }, 'add'),
    event('realm_user', { person: PersonUpdate }, 'update'),
    event(
      'realm_user',
      { person: strict({ user_id: UserId, full_name: Type.String() }) },
      'remove',
    ),
  ],
  realm_bot: [
    event('realm_bot', { bot: Bot }, 'add'),
    event('realm_bot', { bot: BotUpdate }, 'update'),
    event('realm_bot', { bot: strict({ user_id: UserId, full_name: Type.String() }) }, 'remove'),
    event('realm_bot', { bot: strict({ user_id: UserId }) }, 'delete'),
  ],
  user_settings: [
    event(
      'user_settings',
      { property: Type.String(), value: Scalar, language_name: Type.Optional(Type.String()) },
      'update',
    ),
  ],
  update_display_settings: [
    event('update_display_settings', {
      user: Type.String(),
      setting_name: Type.String(),
      setting: Scalar,
      language_name: Type.Optional(Type.String()),
    }),
  ],
  update_global_notifications: [
    event('update_global_notifications', {
      user: Type.String(),
      notification_name: Type.String(),
      setting: Scalar,
    }),
  ],
  realm: [
    event(
      'realm',
      {
        property: Type.String(),
        value: Type.Union([Scalar, Type.Null()]),
      },
      'update',
    ),
    event(
      'realm',
      {
        property: Type.String(),
        data: Type.Record(Type.String(), Type.Union([Scalar, Type.Null(), GroupSettingValue])),
      },
      'update_dict',
    ),
    event('realm', { realm_id: Type.Integer() }, 'deactivated'),
  ],
  user_group: [
    event('user_group', { group_id: Type.Integer(), user_ids: Type.Array(UserId) }, 'add_members'),
    event(
      'user_group',
      { group_id: Type.Integer(), user_ids: Type.Array(UserId) },
      'remove_members',
    ),
    event(
      'user_group',
      { group_id: Type.Integer(), direct_subgroup_ids: Type.Array(Type.Integer()) },
      'add_subgroups',
    ),
    event(
      'user_group',
      { group_id: Type.Integer(), direct_subgroup_ids: Type.Array(Type.Integer()) },
      'remove_subgroups',
    ),
    event('user_group', { group: Type.Record(Type.String(), Type.Unknown()) }, 'add'),
    event(
      'user_group',
      { group_id: Type.Integer(), data: Type.Record(Type.String(), Type.Unknown()) },
      'update',
    ),
    event('user_group', { group_id: Type.Integer() }, 'remove'),
  ],
  stream: [
    event('stream', { streams: Type.Array(Channel) }, 'create'),
    event(
      'stream',
      {
        streams: Type.Array(strict({ stream_id: Type.Integer() })),
        stream_ids: Type.Array(Type.Integer()),
      },
      'delete',
    ),
    event(
      'stream',
      {
        stream_id: Type.Integer(),
        name: Type.String(),
        property: Type.String(),
        value: Type.Union([Scalar, Type.Null(), GroupSettingValue]),
        rendered_description: Type.Optional(Type.String()),
        history_public_to_subscribers: Type.Optional(Type.Boolean()),
        is_web_public: Type.Optional(Type.Boolean()),
      },
      'update',
    ),
  ],
  subscription: [
    event('subscription', { subscriptions: Type.Array(Subscription) }, 'add'),
    event(
      'subscription',
      { subscriptions: Type.Array(strict({ name: Type.String(), stream_id: Type.Integer() })) },
      'remove',
    ),
    event(
      'subscription',
      { stream_id: Type.Integer(), property: Type.String(), value: Scalar },
      'update',
    ),
    event('subscription', Peers, 'peer_add'),
    event('subscription', Peers, 'peer_remove'),
  ],
  default_streams: [event('default_streams', { default_streams: Type.Array(Type.Integer()) })],
  default_stream_groups: [
    event('default_stream_groups', {
      default_stream_groups: Type.Array(
        strict({
          name: Type.String(),
          description: Type.String(),
          id: Type.Integer(),
          streams: Type.Array(Type.Integer()),
        }),
      ),
    }),
  ],
  presence: [
    event('presence', { presences: Type.Record(Type.String(), ModernPresence) }),
    event('presence', { ...LEGACY_PRESENCE_FIELDS, email: Type.String() }),
    // slim_presence clients: the legacy form without the deprecated email.
    event('presence', LEGACY_PRESENCE_FIELDS),
  ],
  typing: ['start', 'stop'].flatMap((op) => [
    event(
      'typing',
      {
        message_type: Type.Literal('direct'),
        sender: TypingPerson,
        recipients: Type.Array(TypingPerson),
      },
      op,
    ),
    event(
      'typing',
      {
        message_type: Type.Literal('stream'),
        sender: TypingPerson,
        stream_id: Type.Integer(),
        topic: Type.String(),
      },
      op,
    ),
  ]),
  typing_edit_message: ['start', 'stop'].map((op) =>
    event(
      'typing_edit_message',
      {
        sender_id: UserId,
        message_id: Type.Integer(),
        recipient: Type.Union([
          strict({
            type: Type.Literal('channel'),
            channel_id: Type.Integer(),
            topic: Type.String(),
          }),
          strict({ type: Type.Literal('direct'), user_ids: Type.Array(UserId) }),
        ]),
      },
      op,
    ),
  ),
  ...MESSAGE_EVENT_SHAPES,
  ...FLAG_EVENT_SHAPES,
  ...DRAFTS_FOLDERS_EVENT_SHAPES,
  ...PREFERENCE_EVENT_SHAPES,
  ...EMOJI_INVITE_EVENT_SHAPES,
  ...USER_RECORD_EVENT_SHAPES,
  ...USER_GROUP_EVENT_SHAPES,
  delete_message: [
    event('delete_message', {
      message_ids: Type.Array(Type.Integer()),
      message_type: Type.Union([Type.Literal('stream'), Type.Literal('private')]),
      stream_id: Type.Optional(Type.Integer()),
      topic: Type.Optional(Type.String()),
    }),
    event('delete_message', {
      message_id: Type.Integer(),
      message_type: Type.Union([Type.Literal('stream'), Type.Literal('private')]),
      stream_id: Type.Optional(Type.Integer()),
      topic: Type.Optional(Type.String()),
    }),
  ],
};

/** Fails unless the event matches one of its type's declared forms. */
export function assertEventShape(e: Record<string, unknown>): void {
  const forms = SHAPES[String(e.type)];
  assert.ok(forms, `no declared shape for event type ${String(e.type)}: ${JSON.stringify(e)}`);
  if (forms.some((schema) => Value.Check(schema, e))) return;
  // Report against the form with the same op, which is the one the event meant to be.
  const opOf = (s: TSchema) =>
    (s as { properties?: { op?: { const?: unknown } } }).properties?.op?.const;
  const meant = forms.find((s) => opOf(s) === e.op) ?? forms[0];
  const errors = [...Value.Errors(meant, e)].map((x) => `${x.instancePath} ${x.message}`);
  assert.fail(
    `event does not match its declared shape: ${JSON.stringify(e)}\n${errors.join('\n')}`,
  );
}

export const DECLARED_EVENT_TYPES = Object.keys(SHAPES);
