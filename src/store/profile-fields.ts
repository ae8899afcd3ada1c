// Custom profile fields of a realm and users' values of them.
import { cachedQuery } from './compiled.ts';
import type { Q } from './db.ts';
import type { CustomProfileFieldRow, CustomProfileFieldTable } from './schema.ts';
import type { Insertable, Updateable } from 'kysely';

/** The realm's fields in display order. */
export async function listProfileFields(db: Q, realmId: number): Promise<CustomProfileFieldRow[]> {
  return db
    .selectFrom('custom_profile_fields')
    .selectAll()
    .where('realm_id', '=', realmId)
    .orderBy('field_order')
    .orderBy('id')
    .execute();
}

export async function insertProfileField(
  db: Q,
  row: Insertable<CustomProfileFieldTable>,
): Promise<number> {
  const { id } = await db
    .insertInto('custom_profile_fields')
    .values(row)
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}

export async function updateProfileField(
  db: Q,
  id: number,
  changes: Updateable<CustomProfileFieldTable>,
): Promise<void> {
  if (Object.keys(changes).length === 0) return;
  await db.updateTable('custom_profile_fields').set(changes).where('id', '=', id).execute();
}

export async function deleteProfileField(db: Q, id: number): Promise<void> {
  await db.deleteFrom('custom_profile_field_values').where('field_id', '=', id).execute();
  await db.deleteFrom('custom_profile_fields').where('id', '=', id).execute();
}

export interface ProfileValueRow {
  user_id: number;
  field_id: number;
  value: string;
  rendered_value: string | null;
}

/** The values of these users (any of their realm's fields). */
const profileValuesOfUser = cachedQuery(1, (db, userId: number) =>
  db
    .selectFrom('custom_profile_field_values')
    .select(['user_id', 'field_id', 'value', 'rendered_value'])
    .where('user_id', '=', userId),
);

/** The values of these users, who belong to the organization (any of its fields). */
export async function listProfileValues(
  db: Q,
  realmId: number,
  userIds: number[],
): Promise<readonly ProfileValueRow[]> {
  // One user (a user object, GET /users/me) is the common case.
  if (userIds.length === 1) return profileValuesOfUser.all(db, userIds[0]);
  // Otherwise a register or a user list: the organization's values, kept between calls.
  const all = await profileValuesOfRealm.all(db, realmId);
  const wanted = new Set(userIds);
  return all.filter((v) => wanted.has(v.user_id));
}

const profileValuesOfRealm = cachedQuery(1, (db, realmId: number) =>
  db
    .selectFrom('custom_profile_field_values as v')
    .innerJoin('users as u', 'u.id', 'v.user_id')
    .select(['v.user_id', 'v.field_id', 'v.value', 'v.rendered_value'])
    .where('u.realm_id', '=', realmId)
    .orderBy('v.user_id')
    .orderBy('v.field_id'),
);

export async function getProfileValue(
  db: Q,
  userId: number,
  fieldId: number,
): Promise<ProfileValueRow | undefined> {
  return db
    .selectFrom('custom_profile_field_values')
    .select(['user_id', 'field_id', 'value', 'rendered_value'])
    .where('user_id', '=', userId)
    .where('field_id', '=', fieldId)
    .executeTakeFirst();
}

export async function setProfileValue(db: Q, row: ProfileValueRow): Promise<void> {
  await db
    .insertInto('custom_profile_field_values')
    .values(row)
    .onConflict((oc) =>
      oc
        .columns(['user_id', 'field_id'])
        .doUpdateSet({ value: row.value, rendered_value: row.rendered_value }),
    )
    .execute();
}

export async function deleteProfileValue(db: Q, userId: number, fieldId: number): Promise<void> {
  await db
    .deleteFrom('custom_profile_field_values')
    .where('user_id', '=', userId)
    .where('field_id', '=', fieldId)
    .execute();
}
