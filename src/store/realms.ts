import type { Q } from './db.ts';
import type { NewRealm, RealmRow } from './schema.ts';

export async function insertRealm(db: Q, row: NewRealm): Promise<RealmRow> {
  return db.insertInto('realms').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function getRealmById(db: Q, id: number): Promise<RealmRow | undefined> {
  return db.selectFrom('realms').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function getRealmByStringId(db: Q, stringId: string): Promise<RealmRow | undefined> {
  return db.selectFrom('realms').selectAll().where('string_id', '=', stringId).executeTakeFirst();
}

export async function listRealms(db: Q): Promise<RealmRow[]> {
  return db.selectFrom('realms').selectAll().orderBy('id').execute();
}

export async function updateRealm(
  db: Q,
  id: number,
  changes: Partial<
    Pick<
      RealmRow,
      'name' | 'description' | 'icon_source' | 'icon_version' | 'settings' | 'deactivated'
    >
  >,
): Promise<void> {
  await db.updateTable('realms').set(changes).where('id', '=', id).execute();
}
