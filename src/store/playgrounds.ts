// Code playgrounds of a realm.
import type { Q } from './db.ts';
import type { RealmPlaygroundRow } from './schema.ts';

export async function listPlaygrounds(db: Q, realmId: number): Promise<RealmPlaygroundRow[]> {
  return db
    .selectFrom('realm_playgrounds')
    .selectAll()
    .where('realm_id', '=', realmId)
    .orderBy('id')
    .execute();
}

export async function insertPlayground(
  db: Q,
  row: Omit<RealmPlaygroundRow, 'id'>,
): Promise<number> {
  const { id } = await db
    .insertInto('realm_playgrounds')
    .values(row)
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}

export async function deletePlayground(db: Q, realmId: number, id: number): Promise<boolean> {
  const result = await db
    .deleteFrom('realm_playgrounds')
    .where('realm_id', '=', realmId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
