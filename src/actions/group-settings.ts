// Group-setting values: every permission setting (organization, channel or group) holds a
// user-group id. Clients send and receive either a named group's id or an anonymous
// group {direct_members, direct_subgroups}; anonymous groups are stored as unnamed rows.
import { badRequest, JsonableError } from '../lib/errors.ts';
import type { SystemGroupName } from '../lib/roles.ts';
import type { Q } from '../store/db.ts';
import * as groups from '../store/user-groups.ts';
import * as usersStore from '../store/users.ts';
import type { UserGroupRow } from '../store/schema.ts';

export type GroupSettingValue = number | { direct_members: number[]; direct_subgroups: number[] };

export interface GroupSettingRules {
  systemGroupsOnly?: readonly SystemGroupName[];
  forbidden?: readonly SystemGroupName[];
}

/** Present a stored group id as a group-setting value. */
export async function presentGroupSetting(
  db: Q,
  realmId: number,
  groupId: number,
): Promise<GroupSettingValue> {
  const group = await groups.getGroup(db, realmId, groupId);
  if (!group || group.name !== null) return groupId;
  return {
    direct_members: await groups.listDirectMembers(db, groupId),
    direct_subgroups: await groups.listDirectSubgroups(db, groupId),
  };
}

/**
 * presentGroupSetting for many ids at once, from the organization's groups as cached reads
 * (a register presents every channel's and group's settings). Ids of no group of the
 * organization stay numbers.
 */
export async function presentGroupSettings(
  db: Q,
  realmId: number,
  groupIds: Iterable<number>,
): Promise<Map<number, GroupSettingValue>> {
  const out = new Map<number, GroupSettingValue>();
  for (const id of groupIds) out.set(id, id);
  const anonymous = (await groups.listAllGroups(db, realmId)).filter(
    (g) => g.name === null && out.has(g.id),
  );
  if (anonymous.length === 0) return out;
  const { members, subgroups } = await groups.listAnonymousGroupParts(db, realmId);
  for (const { id } of anonymous) {
    out.set(id, {
      direct_members: members.get(id) ?? [],
      direct_subgroups: subgroups.get(id) ?? [],
    });
  }
  return out;
}

/**
 * The canonical form of a value a client sent: an anonymous group of one subgroup and no
 * members is that subgroup, and an empty one is role:nobody.
 */
export async function normalizeGroupSetting(
  db: Q,
  realmId: number,
  value: GroupSettingValue,
): Promise<GroupSettingValue> {
  if (typeof value === 'number' || value.direct_members.length > 0) return value;
  const subgroups = [...new Set(value.direct_subgroups)];
  if (subgroups.length === 1) return subgroups[0];
  if (subgroups.length > 0) return value;
  const nobody = (await groups.listSystemGroups(db, realmId)).find((g) => g.name === 'role:nobody');
  return nobody ? nobody.id : value;
}

/** Whether two group-setting values mean the same thing (for {new, old} updates). */
export function sameGroupSetting(a: GroupSettingValue, b: GroupSettingValue): boolean {
  if (typeof a === 'number' || typeof b === 'number') return a === b;
  const sorted = (xs: number[]): string => JSON.stringify([...new Set(xs)].sort((x, y) => x - y));
  return (
    sorted(a.direct_members) === sorted(b.direct_members) &&
    sorted(a.direct_subgroups) === sorted(b.direct_subgroups)
  );
}

/**
 * Check a group-setting value and return the group id to store, creating an anonymous
 * group for the object form. Must run inside the caller's transaction.
 */
export async function resolveGroupSetting(
  db: Q,
  realmId: number,
  settingName: string,
  value: GroupSettingValue,
  rules: GroupSettingRules,
  now: number,
  creatorId: number | null,
): Promise<number> {
  value = await normalizeGroupSetting(db, realmId, value);
  if (typeof value === 'number') {
    const group = await checkNamedGroup(db, realmId, value);
    checkAllowedGroup(settingName, group, rules);
    return group.id;
  }
  if (rules.systemGroupsOnly) {
    throw new JsonableError(
      `'${settingName}' must be a system user group.`,
      'SYSTEM_GROUP_REQUIRED',
      400,
      {
        setting_name: settingName,
      },
    );
  }
  const members = [...new Set(value.direct_members)].sort((a, b) => a - b);
  const subgroupIds = [...new Set(value.direct_subgroups)].sort((a, b) => a - b);
  const users = await usersStore.listUsersByIds(db, realmId, members);
  const missing = members.find((id) => !users.some((u) => u.id === id));
  if (missing !== undefined) throw badRequest(`Invalid user ID: ${missing}`);
  for (const id of subgroupIds) {
    const group = await checkNamedGroup(db, realmId, id);
    checkAllowedGroup(settingName, group, rules);
  }
  const anonymous = await groups.insertGroup(db, {
    realm_id: realmId,
    name: null,
    description: '',
    is_system_group: 0,
    date_created: now,
    creator_id: creatorId,
  });
  await groups.addGroupMembers(db, anonymous.id, members);
  await groups.addSubgroups(db, anonymous.id, subgroupIds);
  return anonymous.id;
}

async function checkNamedGroup(db: Q, realmId: number, id: number): Promise<UserGroupRow> {
  const group = await groups.getGroup(db, realmId, id);
  if (!group || group.name === null) throw badRequest('Invalid user group');
  return group;
}

function checkAllowedGroup(
  settingName: string,
  group: UserGroupRow,
  rules: GroupSettingRules,
): void {
  if (group.is_system_group && rules.forbidden?.includes(group.name as SystemGroupName)) {
    throw badRequest(`'${settingName}' setting cannot be set to '${group.name}' group.`);
  }
  if (
    rules.systemGroupsOnly &&
    !(group.is_system_group && rules.systemGroupsOnly.includes(group.name as SystemGroupName))
  ) {
    throw new JsonableError(
      `'${settingName}' must be a system user group.`,
      'SYSTEM_GROUP_REQUIRED',
      400,
      {
        setting_name: settingName,
      },
    );
  }
  if (group.deactivated) throw badRequest('User group is deactivated.');
}

/** A {new, old} change of a group-setting value, as PATCH endpoints take it. */
export interface GroupSettingChange {
  new: GroupSettingValue;
  old?: GroupSettingValue;
}

/**
 * Check a {new, old} change against the group the setting holds now: `old`, when given,
 * must describe the current value (EXPECTATION_MISMATCH otherwise). Returns the normalized
 * new value, or null when it would change nothing.
 */
export async function checkGroupSettingChange(
  db: Q,
  realmId: number,
  currentGroupId: number,
  change: GroupSettingChange,
): Promise<GroupSettingValue | null> {
  const current = await presentGroupSetting(db, realmId, currentGroupId);
  if (change.old !== undefined) {
    const expected = await normalizeGroupSetting(db, realmId, change.old);
    if (!sameGroupSetting(expected, current)) {
      throw new JsonableError(
        "'old' value does not match the expected value.",
        'EXPECTATION_MISMATCH',
        400,
      );
    }
  }
  const wanted = await normalizeGroupSetting(db, realmId, change.new);
  return sameGroupSetting(wanted, current) ? null : wanted;
}
