// Every event Parley emits. Each area adds its own members to the union; the queue layer
// only needs `type` (and `op`), and shaping.ts rewrites a few per client.

export interface EventBase {
  type: string;
  op?: string;
}

export interface RealmUserEvent extends EventBase {
  type: 'realm_user';
  op: 'add' | 'update' | 'remove';
  person: Record<string, unknown>;
}

export interface RealmBotEvent extends EventBase {
  type: 'realm_bot';
  op: 'add' | 'update' | 'remove' | 'delete';
  bot: Record<string, unknown>;
}

export interface UserSettingsEvent extends EventBase {
  type: 'user_settings';
  op: 'update';
  property: string;
  value: boolean | number | string;
  language_name?: string;
}

export interface LegacySettingsEvent extends EventBase {
  type: 'update_display_settings' | 'update_global_notifications';
  user: string;
  setting_name?: string;
  notification_name?: string;
  setting: boolean | number | string;
  language_name?: string;
}

export interface RealmEvent extends EventBase {
  type: 'realm';
  op: 'update' | 'update_dict' | 'deactivated';
  property?: string;
  value?: unknown;
  data?: Record<string, unknown>;
  realm_id?: number;
}

export interface UserGroupEvent extends EventBase {
  type: 'user_group';
  op:
    | 'add'
    | 'update'
    | 'add_members'
    | 'remove_members'
    | 'add_subgroups'
    | 'remove_subgroups'
    | 'remove';
  group_id?: number;
  user_ids?: number[];
  direct_subgroup_ids?: number[];
  group?: Record<string, unknown>;
  data?: Record<string, unknown>;
}

export interface HeartbeatEvent extends EventBase {
  type: 'heartbeat';
}

export interface RestartEvent extends EventBase {
  type: 'restart';
  svc_version: string;
  svc_merge_base: string;
  svc_feature_level: number;
  zulip_version: string;
  zulip_merge_base: string;
  zulip_feature_level: number;
  server_generation: number;
}

/** Events of areas that declare no dedicated interface yet still carry type and op. */
export interface GenericEvent extends EventBase {
  [field: string]: unknown;
}

export type ParleyEvent =
  | RealmUserEvent
  | RealmBotEvent
  | UserSettingsEvent
  | LegacySettingsEvent
  | RealmEvent
  | UserGroupEvent
  | HeartbeatEvent
  | RestartEvent
  | GenericEvent;

/** An event addressed to users, as it travels over the bus after commit. */
export interface Notice {
  event: ParleyEvent;
  /** Recipient user ids. */
  users: number[];
  /** Per-recipient fields merged into that user's copy (message flags, say). */
  perUser?: Record<number, Record<string, unknown>>;
  /** For channel messages: realm-wide listeners (all_public_streams, narrowed queues) also see it. */
  realmWide?: { realmId: number; publicChannel: boolean };
  /**
   * The realm and its commit sequence for notices of a committed transaction. A queue
   * registered from a snapshot at sequence S drops the realm's notices with seq <= S: the
   * snapshot already reflects them. Ephemeral notices (typing, heartbeat) have none.
   */
  realmId?: number;
  seq?: number;
}
