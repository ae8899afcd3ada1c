import { sql } from 'kysely';
import { cachedQuery } from './compiled.ts';
import type { Q } from './db.ts';
import type { UserGroupRow } from './schema.ts';

export interface NewGroup {
  realm_id: number;
  name: string | null;
  description: string;
  is_system_group: number;
  date_created: number;
  creator_id: number | null;
  settings?: string;
}

export async function insertGroup(db: Q, row: NewGroup): Promise<UserGroupRow> {
  return db
    .insertInto('user_groups')
    .values({ deactivated: 0, settings: '{}', ...row })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function getGroup(
  db: Q,
  realmId: number,
  id: number,
): Promise<UserGroupRow | undefined> {
  return db
    .selectFrom('user_groups')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function listGroupsByIds(
  db: Q,
  realmId: number,
  ids: number[],
): Promise<UserGroupRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('user_groups')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('id', 'in', ids)
    .execute();
}

export async function listSystemGroups(db: Q, realmId: number): Promise<UserGroupRow[]> {
  return db
    .selectFrom('user_groups')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('is_system_group', '=', 1)
    .orderBy('id')
    .execute();
}

export async function addGroupMembers(db: Q, groupId: number, userIds: number[]): Promise<void> {
  if (userIds.length === 0) return;
  await db
    .insertInto('user_group_members')
    .values(userIds.map((user_id) => ({ group_id: groupId, user_id })))
    .execute();
}

export async function removeGroupMembers(db: Q, groupId: number, userIds: number[]): Promise<void> {
  if (userIds.length === 0) return;
  await db
    .deleteFrom('user_group_members')
    .where('group_id', '=', groupId)
    .where('user_id', 'in', userIds)
    .execute();
}

export async function addSubgroups(db: Q, groupId: number, subgroupIds: number[]): Promise<void> {
  if (subgroupIds.length === 0) return;
  await db
    .insertInto('user_group_subgroups')
    .values(subgroupIds.map((subgroup_id) => ({ group_id: groupId, subgroup_id })))
    .execute();
}

export async function listDirectMembers(db: Q, groupId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('user_group_members')
    .select('user_id')
    .where('group_id', '=', groupId)
    .orderBy('user_id')
    .execute();
  return rows.map((r) => r.user_id);
}

/** (group, id) rows in group and id order, gathered into one id list per group. */
function gatherByGroup(
  rows: ReadonlyArray<{ group_id: number; id: number }>,
): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (const r of rows) {
    const list = out.get(r.group_id);
    if (list) list.push(r.id);
    else out.set(r.group_id, [r.id]);
  }
  return out;
}

export async function listDirectSubgroups(db: Q, groupId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('user_group_subgroups')
    .select('subgroup_id')
    .where('group_id', '=', groupId)
    .orderBy('subgroup_id')
    .execute();
  return rows.map((r) => r.subgroup_id);
}

/** Every group the user belongs to, directly or through subgroups. */
export async function listGroupIdsContainingUser(db: Q, userId: number): Promise<number[]> {
  const rows = await groupIdsContainingUser.all(db, userId);
  return rows.map((r) => r.id);
}

const groupIdsContainingUser = cachedQuery(1, (db, userId: number) =>
  db
    .withRecursive('g', (qb) =>
      qb
        .selectFrom('user_group_members')
        .select('group_id as id')
        .where('user_id', '=', userId)
        .union(
          qb
            .selectFrom('user_group_subgroups as s')
            .innerJoin('g', 'g.id', 's.subgroup_id')
            .select('s.group_id as id'),
        ),
    )
    .selectFrom('g')
    .select('id'),
);

/** Every user in the group, directly or through subgroups. */
export async function listRecursiveMembers(db: Q, groupId: number): Promise<number[]> {
  const result = await sql<{ user_id: number }>`
    WITH RECURSIVE g(id) AS (
      SELECT CAST(${groupId} AS INTEGER)
      UNION
      SELECT s.subgroup_id FROM user_group_subgroups s JOIN g ON s.group_id = g.id
    )
    SELECT DISTINCT m.user_id FROM user_group_members m JOIN g ON m.group_id = g.id ORDER BY m.user_id`.execute(
    db,
  );
  return result.rows.map((r) => Number(r.user_id));
}

/** Direct memberships of the user in system groups (for role changes). */
export async function listSystemGroupMemberships(db: Q, userId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('user_group_members as m')
    .innerJoin('user_groups as g', 'g.id', 'm.group_id')
    .select('m.group_id')
    .where('m.user_id', '=', userId)
    .where('g.is_system_group', '=', 1)
    .execute();
  return rows.map((r) => r.group_id);
}

/** The realm's named groups (system groups included), by id. */
export async function listNamedGroups(
  db: Q,
  realmId: number,
  opts: { includeDeactivated: boolean },
): Promise<UserGroupRow[]> {
  let q = db
    .selectFrom('user_groups')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('name', 'is not', null);
  if (!opts.includeDeactivated) q = q.where('deactivated', '=', 0);
  return q.orderBy('id').execute();
}

/**
 * Every group of the realm, anonymous ones included (their settings can use a group). A
 * cached read: a register presents the group settings of every channel and group.
 */
export async function listAllGroups(
  db: Q,
  realmId: number,
): Promise<ReadonlyArray<Readonly<UserGroupRow>>> {
  return groupsOfRealm.all(db, realmId);
}

const groupsOfRealm = cachedQuery(1, (db, realmId: number) =>
  db.selectFrom('user_groups').selectAll().where('realm_id', '=', realmId).orderBy('id'),
);

/** The direct members and subgroups of the realm's anonymous groups, each list in id order. */
export async function listAnonymousGroupParts(
  db: Q,
  realmId: number,
): Promise<{ members: Map<number, number[]>; subgroups: Map<number, number[]> }> {
  const [members, subgroups] = await Promise.all([
    anonymousGroupMembers.all(db, realmId),
    anonymousGroupSubgroups.all(db, realmId),
  ]);
  return { members: gatherByGroup(members), subgroups: gatherByGroup(subgroups) };
}

const anonymousGroupMembers = cachedQuery(1, (db, realmId: number) =>
  db
    .selectFrom('user_group_members as m')
    .innerJoin('user_groups as g', 'g.id', 'm.group_id')
    .select(['m.group_id', 'm.user_id as id'])
    .where('g.realm_id', '=', realmId)
    .where('g.name', 'is', null)
    .orderBy('m.group_id')
    .orderBy('m.user_id'),
);

const anonymousGroupSubgroups = cachedQuery(1, (db, realmId: number) =>
  db
    .selectFrom('user_group_subgroups as s')
    .innerJoin('user_groups as g', 'g.id', 's.group_id')
    .select(['s.group_id', 's.subgroup_id as id'])
    .where('g.realm_id', '=', realmId)
    .where('g.name', 'is', null)
    .orderBy('s.group_id')
    .orderBy('s.subgroup_id'),
);

export async function getGroupByName(
  db: Q,
  realmId: number,
  name: string,
): Promise<UserGroupRow | undefined> {
  return db
    .selectFrom('user_groups')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('name', '=', name)
    .executeTakeFirst();
}

export async function updateGroup(
  db: Q,
  id: number,
  changes: Partial<Pick<UserGroupRow, 'name' | 'description' | 'settings' | 'deactivated'>>,
): Promise<void> {
  await db.updateTable('user_groups').set(changes).where('id', '=', id).execute();
}

export async function removeSubgroups(
  db: Q,
  groupId: number,
  subgroupIds: number[],
): Promise<void> {
  if (subgroupIds.length === 0) return;
  await db
    .deleteFrom('user_group_subgroups')
    .where('group_id', '=', groupId)
    .where('subgroup_id', 'in', subgroupIds)
    .execute();
}

/** Direct memberships of active users in the realm's groups. */
export async function listActiveMemberships(
  db: Q,
  realmId: number,
): Promise<ReadonlyArray<Readonly<{ group_id: number; user_id: number }>>> {
  return activeMembershipsOfRealm.all(db, realmId);
}

// Kept between calls (a cached read): a register lists every group's members.
const activeMembershipsOfRealm = cachedQuery(1, (db, realmId: number) =>
  db
    .selectFrom('user_group_members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['m.group_id', 'm.user_id'])
    .where('u.realm_id', '=', realmId)
    .where('u.is_active', '=', 1)
    .orderBy('m.user_id'),
);

/** Direct subgroup links of the realm's groups. */
export async function listSubgroupLinks(
  db: Q,
  realmId: number,
): Promise<Array<{ group_id: number; subgroup_id: number }>> {
  return db
    .selectFrom('user_group_subgroups as s')
    .innerJoin('user_groups as g', 'g.id', 's.group_id')
    .select(['s.group_id', 's.subgroup_id'])
    .where('g.realm_id', '=', realmId)
    .orderBy('s.subgroup_id')
    .execute();
}

/** Every group below this one, through any depth of subgroups (not the group itself). */
export async function listRecursiveSubgroups(db: Q, groupId: number): Promise<number[]> {
  const result = await sql<{ id: number }>`
    WITH RECURSIVE g(id) AS (
      SELECT subgroup_id FROM user_group_subgroups WHERE group_id = ${groupId}
      UNION
      SELECT s.subgroup_id FROM user_group_subgroups s JOIN g ON s.group_id = g.id
    )
    SELECT id FROM g ORDER BY id`.execute(db);
  return result.rows.map((r) => Number(r.id));
}

/** Every group above this one, through any depth (not the group itself). */
export async function listRecursiveSupergroups(db: Q, groupId: number): Promise<number[]> {
  const result = await sql<{ id: number }>`
    WITH RECURSIVE g(id) AS (
      SELECT group_id FROM user_group_subgroups WHERE subgroup_id = ${groupId}
      UNION
      SELECT s.group_id FROM user_group_subgroups s JOIN g ON s.subgroup_id = g.id
    )
    SELECT id FROM g ORDER BY id`.execute(db);
  return result.rows.map((r) => Number(r.id));
}

/** Named groups the user is a direct member of (for announcing a reactivation). */
export async function listNamedGroupsOfMember(db: Q, userId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('user_group_members as m')
    .innerJoin('user_groups as g', 'g.id', 'm.group_id')
    .select('m.group_id')
    .where('m.user_id', '=', userId)
    .where('g.name', 'is not', null)
    .orderBy('m.group_id')
    .execute();
  return rows.map((r) => r.group_id);
}
