// Custom emoji rows; a realm's emoji, active and deactivated, are few enough to read whole.
import type { Q } from './db.ts';
import type { RealmEmojiRow, RealmEmojiTable } from './schema.ts';
import type { Insertable } from 'kysely';

export async function listRealmEmoji(db: Q, realmId: number): Promise<RealmEmojiRow[]> {
  return db
    .selectFrom('realm_emoji')
    .selectAll()
    .where('realm_id', '=', realmId)
    .orderBy('id')
    .execute();
}

export async function getActiveEmojiByName(
  db: Q,
  realmId: number,
  name: string,
): Promise<RealmEmojiRow | undefined> {
  return db
    .selectFrom('realm_emoji')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('name', '=', name)
    .where('deactivated', '=', 0)
    .executeTakeFirst();
}

export async function getEmojiById(
  db: Q,
  realmId: number,
  id: number,
): Promise<RealmEmojiRow | undefined> {
  return db
    .selectFrom('realm_emoji')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function insertEmoji(db: Q, row: Insertable<RealmEmojiTable>): Promise<RealmEmojiRow> {
  return db.insertInto('realm_emoji').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function deactivateEmoji(db: Q, id: number): Promise<void> {
  await db.updateTable('realm_emoji').set({ deactivated: 1 }).where('id', '=', id).execute();
}
