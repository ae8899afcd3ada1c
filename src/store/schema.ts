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
  /** Commit sequence of the realm's evented changes (see actions/transaction.ts). */
  event_seq: Generated<number>;
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
}

export interface BotServiceTable {
  id: Generated<number>;
  bot_id: number;
  base_url: string;
  interface: number;
  token: string;
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

export interface DB {
  realms: RealmTable;
  users: UserTable;
  bot_services: BotServiceTable;
  user_groups: UserGroupTable;
  user_group_members: UserGroupMemberTable;
  user_group_subgroups: UserGroupSubgroupTable;
}

export type RealmRow = Selectable<RealmTable>;
export type NewRealm = Insertable<RealmTable>;
export type UserRow = Selectable<UserTable>;
export type NewUser = Insertable<UserTable>;
export type UserUpdate = Updateable<UserTable>;
export type UserGroupRow = Selectable<UserGroupTable>;
export type BotServiceRow = Selectable<BotServiceTable>;
