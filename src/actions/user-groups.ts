// User groups: created by whoever the organization's can_create_groups holds, then managed
// through each group's own six group settings (or the organization's can_manage_all_groups).
// System groups mirror roles and change only with roles. Every change goes to all active
// users of the realm. Deactivated users stay in the membership tables but are hidden.
import type { AppContext } from '../context.ts';
import type { UserGroupEvent } from '../events/types.ts';
import type { Actor } from '../lib/actor.ts';
import { badRequest, JsonableError } from '../lib/errors.ts';
import {
  presentUserGroup,
  USER_GROUP_SETTING_NAMES,
  type PresentedSettingValue,
  type PresentedUserGroup,
  type UserGroupSettingName,
} from '../lib/presenters/user-groups.ts';
import { readChannelSettings } from '../lib/channel-settings.ts';
import { REALM_GROUP_SETTING_NAMES } from '../lib/realm-settings.ts';
import { unixNow } from '../infra/clock.ts';
import * as channelsStore from '../store/channels.ts';
import type { Q } from '../store/db.ts';
import type { RealmRow, UserGroupRow } from '../store/schema.ts';
import * as groups from '../store/user-groups.ts';
import * as usersStore from '../store/users.ts';
import {
  checkGroupSettingChange,
  presentGroupSetting,
  presentGroupSettings,
  resolveGroupSetting,
  type GroupSettingChange,
  type GroupSettingRules,
  type GroupSettingValue,
} from './group-settings.ts';
import {
  accessRealmSettings,
  accessCurrentActor,
  hasRealmPermission,
  isUserInGroup,
} from './permissions.ts';
import { withTransaction, type Work } from './transaction.ts';
import { canAccessUser } from './user-access.ts';

export const MAX_USER_GROUP_NAME_LENGTH = 100;
const RESERVED_PREFIXES = ['@', 'role:', 'user:', 'stream:', 'channel:'];

const SETTING_RULES: Record<UserGroupSettingName, GroupSettingRules> = {
  can_add_members_group: { forbidden: ['role:internet'] },
  can_join_group: { forbidden: ['role:internet'] },
  can_leave_group: { forbidden: ['role:internet'] },
  can_manage_group: { forbidden: ['role:internet', 'role:everyone'] },
  can_mention_group: { forbidden: ['role:internet', 'role:owners'] },
  can_remove_members_group: { forbidden: ['role:internet'] },
};

type GroupSettingIds = Record<UserGroupSettingName, number>;

const insufficientPermission = (): JsonableError => badRequest('Insufficient permission');
const invalidGroup = (): JsonableError => badRequest('Invalid user group');

function readGroupSettings(stored: string): GroupSettingIds {
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(stored) as Record<string, unknown>;
  } catch {
    // A damaged value reads as unset; every setting then names no group.
  }
  const out = {} as GroupSettingIds;
  for (const name of USER_GROUP_SETTING_NAMES) {
    const v = parsed[name];
    out[name] = typeof v === 'number' ? v : -1;
  }
  return out;
}

async function presentGroups(
  db: Q,
  realmId: number,
  rows: UserGroupRow[],
): Promise<PresentedUserGroup[]> {
  const members = byGroup(await groups.listActiveMemberships(db, realmId), (m) => m.user_id);
  const subgroups = byGroup(await groups.listSubgroupLinks(db, realmId), (l) => l.subgroup_id);
  const idsOf = rows.map((row) => readGroupSettings(row.settings));
  // Every group's settings in a few queries: a register presents every group of the realm.
  const presented = await presentGroupSettings(
    db,
    realmId,
    idsOf.flatMap((ids) => USER_GROUP_SETTING_NAMES.map((name) => ids[name])),
  );
  return rows.map((row, i) => {
    const settings = {} as Record<UserGroupSettingName, PresentedSettingValue>;
    for (const name of USER_GROUP_SETTING_NAMES) settings[name] = presented.get(idsOf[i][name])!;
    return presentUserGroup(row, members.get(row.id) ?? [], subgroups.get(row.id) ?? [], settings);
  });
}

/** Rows that name a group, as lists of one of their fields by group id, in row order. */
function byGroup<R extends { group_id: number }>(
  rows: readonly R[],
  field: (row: R) => number,
): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (const row of rows) {
    const list = out.get(row.group_id);
    if (list) list.push(field(row));
    else out.set(row.group_id, [field(row)]);
  }
  return out;
}

/** GET /user_groups and the register snapshot: named groups by id. */
export async function listUserGroups(
  db: Q,
  realm: RealmRow,
  includeDeactivated: boolean,
): Promise<PresentedUserGroup[]> {
  const rows = await groups.listNamedGroups(db, realm.id, { includeDeactivated });
  return presentGroups(db, realm.id, rows);
}

async function accessGroup(db: Q, realm: RealmRow, id: number): Promise<UserGroupRow> {
  const group = await groups.getGroup(db, realm.id, id);
  if (!group || group.name === null) throw invalidGroup();
  return group;
}

/**
 * Whether the actor may change the group in the way `setting` governs: can_manage_group and
 * the organization's can_manage_all_groups allow everything. System groups change only
 * with roles.
 */
async function checkGroupPermission(
  db: Q,
  actor: Actor,
  group: UserGroupRow,
  settings: UserGroupSettingName[],
): Promise<void> {
  if (group.is_system_group) throw insufficientPermission();
  if (await hasRealmPermission(db, actor.user, 'can_manage_all_groups')) return;
  const ids = readGroupSettings(group.settings);
  for (const name of ['can_manage_group' as const, ...settings]) {
    if (await isUserInGroup(db, actor.user, ids[name])) return;
  }
  throw insufficientPermission();
}

async function checkGroupName(db: Q, realmId: number, name: string): Promise<void> {
  if (name.trim() === '') throw badRequest("User group name can't be empty!");
  if ([...name].length > MAX_USER_GROUP_NAME_LENGTH) {
    throw badRequest(`User group name cannot exceed ${MAX_USER_GROUP_NAME_LENGTH} characters.`);
  }
  const prefix = RESERVED_PREFIXES.find((p) => name.startsWith(p));
  if (prefix !== undefined) throw badRequest(`User group name cannot start with '${prefix}'.`);
  if (await groups.getGroupByName(db, realmId, name)) {
    throw badRequest(`User group '${name}' already exists.`);
  }
}

/** Active users of the realm, in order; anything else is an invalid user id. */
async function checkActiveUsers(db: Q, realmId: number, ids: number[]): Promise<number[]> {
  const wanted = [...new Set(ids)];
  const users = await usersStore.listUsersByIds(db, realmId, wanted);
  for (const id of wanted) {
    if (!users.some((u) => u.id === id && u.is_active === 1)) {
      throw badRequest(`Invalid user ID: ${id}`);
    }
  }
  return wanted.sort((a, b) => a - b);
}

/** Named, active groups of the realm that may become subgroups. */
async function checkPotentialSubgroups(db: Q, realmId: number, ids: number[]): Promise<number[]> {
  const wanted = [...new Set(ids)];
  const rows = await groups.listGroupsByIds(db, realmId, wanted);
  for (const id of wanted) {
    const row = rows.find((r) => r.id === id);
    if (!row || row.name === null || row.deactivated === 1) {
      throw badRequest(`Invalid user group ID: ${id}`);
    }
  }
  return wanted.sort((a, b) => a - b);
}

async function emitToEveryone(
  work: Work,
  realm: RealmRow,
  event: Omit<UserGroupEvent, 'type'>,
): Promise<void> {
  const users = await usersStore.listActiveUserIds(work.db, realm.id);
  // Clients without include_deactivated_groups were told of a group's deactivation as its
  // removal: later events about it are not for them (events/shaping.ts).
  const deactivation = event.op === 'update' && event.data?.deactivated === true;
  const aboutDeactivated =
    event.group_id !== undefined &&
    !deactivation &&
    (await groups.getGroup(work.db, realm.id, event.group_id))?.deactivated === 1;
  work.emitOnCommit(
    { type: 'user_group', ...event, ...(aboutDeactivated ? { __deactivated_group: true } : {}) },
    users,
  );
}

export type CreateUserGroupParams = {
  name: string;
  description: string;
  members: number[];
  subgroups?: number[];
} & Partial<Record<UserGroupSettingName, GroupSettingValue>>;

/** POST /user_groups/create. */
export async function createUserGroup(
  ctx: AppContext,
  actor: Actor,
  p: CreateUserGroupParams,
): Promise<number> {
  return withTransaction(ctx, actor.realm.id, async (work) => {
    // Checked inside: a deactivation, or a role change that took the actor out of the
    // group the setting names, committed since counts.
    const me = await accessCurrentActor(work.db, actor);
    const realm = me.realm;
    if (!(await hasRealmPermission(work.db, me.user, 'can_create_groups'))) {
      throw insufficientPermission();
    }
    await checkGroupName(work.db, realm.id, p.name);
    const members = await checkActiveUsers(work.db, realm.id, p.members);
    const subgroups = await checkPotentialSubgroups(work.db, realm.id, p.subgroups ?? []);
    const system = new Map(
      (await groups.listSystemGroups(work.db, realm.id)).map((g) => [g.name, g.id]),
    );
    const creatorOnly = { direct_members: [me.user.id], direct_subgroups: [] };
    const defaults: Record<UserGroupSettingName, GroupSettingValue> = {
      can_add_members_group: creatorOnly,
      can_join_group: system.get('role:nobody')!,
      can_leave_group: system.get('role:everyone')!,
      can_manage_group: creatorOnly,
      can_mention_group: system.get('role:everyone')!,
      can_remove_members_group: system.get('role:nobody')!,
    };
    const now = unixNow(ctx.clock);
    const settings = {} as GroupSettingIds;
    for (const name of USER_GROUP_SETTING_NAMES) {
      settings[name] = await resolveGroupSetting(
        work.db,
        realm.id,
        name,
        p[name] ?? defaults[name],
        SETTING_RULES[name],
        now,
        me.user.id,
      );
    }
    const row = await groups.insertGroup(work.db, {
      realm_id: realm.id,
      name: p.name,
      description: p.description,
      is_system_group: 0,
      date_created: now,
      creator_id: me.user.id,
      settings: JSON.stringify(settings),
    });
    await groups.addGroupMembers(work.db, row.id, members);
    await groups.addSubgroups(work.db, row.id, subgroups);
    const [group] = await presentGroups(work.db, realm.id, [row]);
    await emitToEveryone(work, realm, { op: 'add', group: { ...group } });
    return row.id;
  });
}

export type UpdateUserGroupParams = {
  name?: string;
  description?: string;
} & Partial<Record<UserGroupSettingName, GroupSettingChange>>;

/** PATCH /user_groups/{id}: one update event per changed field. */
export async function updateUserGroup(
  ctx: AppContext,
  actor: Actor,
  groupId: number,
  p: UpdateUserGroupParams,
): Promise<void> {
  const settingsGiven = USER_GROUP_SETTING_NAMES.filter((n) => p[n] !== undefined);
  if (p.name === undefined && p.description === undefined && settingsGiven.length === 0) {
    throw badRequest('No new data supplied');
  }
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const me = await accessCurrentActor(work.db, actor);
    const realm = me.realm;
    const group = await accessGroup(work.db, realm, groupId);
    await checkGroupPermission(work.db, me, group, []);
    const rename = p.name !== undefined && p.name !== group.name;
    if (rename) await checkGroupName(work.db, realm.id, p.name!);
    const describe = p.description !== undefined && p.description !== group.description;
    const ids = readGroupSettings(group.settings);
    const wanted = new Map<UserGroupSettingName, GroupSettingValue>();
    for (const name of settingsGiven) {
      const value = await checkGroupSettingChange(work.db, realm.id, ids[name], p[name]!);
      if (value !== null) wanted.set(name, value);
    }
    const update = (data: Record<string, unknown>): Promise<void> =>
      emitToEveryone(work, realm, { op: 'update', group_id: group.id, data });
    if (rename) {
      await groups.updateGroup(work.db, group.id, { name: p.name });
      await update({ name: p.name });
    }
    if (describe) {
      await groups.updateGroup(work.db, group.id, { description: p.description });
      await update({ description: p.description });
    }
    if (wanted.size === 0) return;
    const now = unixNow(ctx.clock);
    for (const [name, value] of wanted) {
      ids[name] = await resolveGroupSetting(
        work.db,
        realm.id,
        name,
        value,
        SETTING_RULES[name],
        now,
        me.user.id,
      );
    }
    await groups.updateGroup(work.db, group.id, { settings: JSON.stringify(ids) });
    for (const name of wanted.keys()) {
      await update({ [name]: await presentGroupSetting(work.db, realm.id, ids[name]) });
    }
  });
}

export interface UpdateMembersParams {
  add?: number[];
  delete?: number[];
  add_subgroups?: number[];
  delete_subgroups?: number[];
}

/**
 * POST /user_groups/{id}/members and /subgroups. Joining and leaving oneself are governed by
 * can_join_group and can_leave_group; adding and removing others by can_add_members_group
 * and can_remove_members_group (which also govern subgroups).
 */
export async function updateUserGroupMembers(
  ctx: AppContext,
  actor: Actor,
  groupId: number,
  p: UpdateMembersParams,
): Promise<void> {
  const add = p.add ?? [];
  const remove = p.delete ?? [];
  const addSubgroups = p.add_subgroups ?? [];
  const removeSubgroups = p.delete_subgroups ?? [];
  if (add.length + remove.length + addSubgroups.length + removeSubgroups.length === 0) {
    throw badRequest(
      "Nothing to do. Specify at least one of 'add', 'delete', 'add_subgroups' or 'delete_subgroups'.",
    );
  }
  const me = actor.user.id;
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const db = work.db;
    // Checked inside: a deactivation, or a change of the groups that hold the actor,
    // committed since counts.
    const current = await accessCurrentActor(db, actor);
    const realm = current.realm;
    const group = await accessGroup(db, realm, groupId);
    const adding = add.length > 0 || addSubgroups.length > 0;
    if (adding && group.deactivated === 1) {
      throw badRequest('You can not add members to a deactivated user group.');
    }
    if (add.length > 0) {
      const self = add.length === 1 && add[0] === me && addSubgroups.length === 0;
      await checkGroupPermission(db, current, group, [
        'can_add_members_group',
        ...(self ? (['can_join_group'] as const) : []),
      ]);
    }
    if (addSubgroups.length > 0)
      await checkGroupPermission(db, current, group, ['can_add_members_group']);
    if (remove.length > 0) {
      const self = remove.length === 1 && remove[0] === me;
      await checkGroupPermission(db, current, group, [
        'can_remove_members_group',
        ...(self ? (['can_leave_group'] as const) : []),
      ]);
    }
    if (removeSubgroups.length > 0)
      await checkGroupPermission(db, current, group, ['can_remove_members_group']);

    const direct = new Set(
      (await groups.listActiveMemberships(db, realm.id))
        .filter((m) => m.group_id === group.id)
        .map((m) => m.user_id),
    );
    const toAdd = await checkActiveUsers(db, realm.id, add);
    for (const id of toAdd) {
      if (direct.has(id)) throw badRequest(`User ${id} is already a member of this group`);
    }
    const toRemove = [...new Set(remove)].sort((a, b) => a - b);
    const known = await usersStore.listUsersByIds(db, realm.id, toRemove);
    for (const id of toRemove) {
      if (!known.some((u) => u.id === id)) throw badRequest(`Invalid user ID: ${id}`);
      if (!direct.has(id)) throw badRequest(`There is no member '${id}' in this user group`);
    }
    const subgroups = new Set(await groups.listDirectSubgroups(db, group.id));
    const subToAdd = await checkPotentialSubgroups(db, realm.id, addSubgroups);
    for (const id of subToAdd) {
      if (subgroups.has(id)) {
        throw badRequest(`User group ${id} is already a subgroup of this group.`);
      }
      const below = await groups.listRecursiveSubgroups(db, id);
      if (id === group.id || below.includes(group.id)) {
        throw badRequest(
          `User group ${group.id} is already a subgroup of one of the passed subgroups.`,
        );
      }
    }
    const subToRemove = [...new Set(removeSubgroups)].sort((a, b) => a - b);
    for (const id of subToRemove) {
      if (!subgroups.has(id)) throw badRequest(`User group ${id} is not a subgroup of this group.`);
    }

    const emit = (event: Omit<UserGroupEvent, 'type' | 'group_id'>): Promise<void> =>
      emitToEveryone(work, realm, { ...event, group_id: group.id });
    if (toAdd.length > 0) {
      await groups.addGroupMembers(db, group.id, toAdd);
      await emit({ op: 'add_members', user_ids: toAdd });
    }
    if (toRemove.length > 0) {
      await groups.removeGroupMembers(db, group.id, toRemove);
      await emit({ op: 'remove_members', user_ids: toRemove });
    }
    if (subToAdd.length > 0) {
      await groups.addSubgroups(db, group.id, subToAdd);
      await emit({ op: 'add_subgroups', direct_subgroup_ids: subToAdd });
    }
    if (subToRemove.length > 0) {
      await groups.removeSubgroups(db, group.id, subToRemove);
      await emit({ op: 'remove_subgroups', direct_subgroup_ids: subToRemove });
    }
  });
}

/** GET /user_groups/{id}/members: active users, through subgroups unless direct only. */
export async function listUserGroupMembers(
  ctx: AppContext,
  actor: Actor,
  groupId: number,
  directOnly: boolean,
): Promise<number[]> {
  const group = await accessGroup(ctx.db, actor.realm, groupId);
  const ids = directOnly
    ? await groups.listDirectMembers(ctx.db, group.id)
    : await groups.listRecursiveMembers(ctx.db, group.id);
  const users = await usersStore.listUsersByIds(ctx.db, actor.realm.id, ids);
  const active = new Set(users.filter((u) => u.is_active === 1).map((u) => u.id));
  return ids.filter((id) => active.has(id));
}

/** GET /user_groups/{id}/subgroups. */
export async function listUserGroupSubgroups(
  ctx: AppContext,
  actor: Actor,
  groupId: number,
  directOnly: boolean,
): Promise<number[]> {
  const group = await accessGroup(ctx.db, actor.realm, groupId);
  return directOnly
    ? groups.listDirectSubgroups(ctx.db, group.id)
    : groups.listRecursiveSubgroups(ctx.db, group.id);
}

/** GET /user_groups/{id}/members/{user_id}. */
export async function isUserGroupMember(
  ctx: AppContext,
  actor: Actor,
  groupId: number,
  userId: number,
  directOnly: boolean,
): Promise<boolean> {
  const group = await accessGroup(ctx.db, actor.realm, groupId);
  const user = await usersStore.getUserById(ctx.db, actor.realm.id, userId);
  if (!user) throw badRequest('No such user');
  // A guest limited to the users they share conversations with learns nothing of others.
  if (!(await canAccessUser(ctx.db, actor.realm, actor.user, user))) {
    throw badRequest('Insufficient permission');
  }
  if (!user.is_active) return false;
  if (directOnly) return (await groups.listDirectMembers(ctx.db, group.id)).includes(user.id);
  return isUserInGroup(ctx.db, user, group.id);
}

/**
 * Where a group is in use: settings of the organization, of channels and of other groups
 * that name it or a group containing it.
 */
async function findObjections(db: Q, realm: RealmRow, group: UserGroupRow): Promise<unknown[]> {
  const all = await groups.listAllGroups(db, realm.id);
  const deactivated = new Set(all.filter((g) => g.deactivated === 1).map((g) => g.id));
  const used = new Set([
    group.id,
    ...(await groups.listRecursiveSupergroups(db, group.id)).filter((id) => !deactivated.has(id)),
  ]);
  const objections: unknown[] = [];
  const realmSettings = await accessRealmSettings(db, realm.id);
  const realmUses = REALM_GROUP_SETTING_NAMES.filter((n) => used.has(realmSettings[n] as number));
  if (realmUses.length > 0) objections.push({ type: 'realm', settings: realmUses });
  for (const channel of await channelsStore.listChannels(db, realm.id)) {
    if (channel.is_archived === 1) continue;
    const settings = readChannelSettings(channel.settings);
    const uses = Object.entries(settings)
      .filter(([, id]) => used.has(id))
      .map(([name]) => name);
    if (uses.length > 0)
      objections.push({ type: 'channel', channel_id: channel.id, settings: uses });
  }
  for (const other of all) {
    if (other.name === null || other.id === group.id || other.deactivated === 1) continue;
    const ids = readGroupSettings(other.settings);
    const uses = USER_GROUP_SETTING_NAMES.filter((n) => used.has(ids[n]));
    if (uses.length > 0)
      objections.push({ type: 'user_group', group_id: other.id, settings: uses });
  }
  return objections;
}

/** POST /user_groups/{id}/deactivate: only a group nothing uses. */
export async function deactivateUserGroup(
  ctx: AppContext,
  actor: Actor,
  groupId: number,
): Promise<void> {
  await withTransaction(ctx, actor.realm.id, async (work) => {
    // The organization's settings as they are now: one may have come to use the group.
    const me = await accessCurrentActor(work.db, actor);
    const realm = me.realm;
    const group = await accessGroup(work.db, realm, groupId);
    await checkGroupPermission(work.db, me, group, []);
    if (group.deactivated === 1) throw badRequest('User group is already deactivated.');
    const objections = await findObjections(work.db, realm, group);
    if (objections.length > 0) {
      throw new JsonableError(
        'Cannot deactivate user group in use.',
        'CANNOT_DEACTIVATE_GROUP_IN_USE',
        400,
        { objections },
      );
    }
    await groups.updateGroup(work.db, group.id, { deactivated: 1 });
    await emitToEveryone(work, realm, {
      op: 'update',
      group_id: group.id,
      data: { deactivated: true },
    });
  });
}

/**
 * A reactivated user is shown in their groups again: clients dropped them from every group
 * on deactivation. Runs inside the reactivation's transaction.
 */
export async function doAnnounceGroupMemberships(
  work: Work,
  realm: RealmRow,
  userId: number,
): Promise<void> {
  for (const groupId of await groups.listNamedGroupsOfMember(work.db, userId)) {
    await emitToEveryone(work, realm, {
      op: 'add_members',
      group_id: groupId,
      user_ids: [userId],
    });
  }
}

/**
 * Clients that get the deactivation drop the user from every group themselves; the others
 * (who cannot access the user) are told group by group.
 */
export async function doAnnounceGroupDepartures(
  work: Work,
  realm: RealmRow,
  userId: number,
  toldOfDeactivation: number[],
): Promise<void> {
  const told = new Set([...toldOfDeactivation, userId]);
  const users = (await usersStore.listActiveUserIds(work.db, realm.id)).filter(
    (id) => !told.has(id),
  );
  if (users.length === 0) return;
  for (const groupId of await groups.listNamedGroupsOfMember(work.db, userId)) {
    work.emitOnCommit(
      { type: 'user_group', op: 'remove_members', group_id: groupId, user_ids: [userId] },
      users,
    );
  }
}
