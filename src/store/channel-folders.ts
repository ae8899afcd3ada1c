// Channel folders of a realm.
import type { Insertable } from 'kysely';
import type { Q } from './db.ts';
import type { ChannelFolderRow, ChannelFolderTable } from './schema.ts';

/** The realm's folders by position (id breaks ties), archived ones only when asked. */
export async function listChannelFolders(
  db: Q,
  realmId: number,
  opts: { includeArchived: boolean },
): Promise<ChannelFolderRow[]> {
  let q = db.selectFrom('channel_folders').selectAll().where('realm_id', '=', realmId);
  if (!opts.includeArchived) q = q.where('is_archived', '=', 0);
  return q.orderBy('sort_order').orderBy('id').execute();
}

export async function getChannelFolder(
  db: Q,
  realmId: number,
  id: number,
): Promise<ChannelFolderRow | undefined> {
  return db
    .selectFrom('channel_folders')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Whether another folder of the realm has this name, regardless of case. */
export async function channelFolderNameTaken(
  db: Q,
  realmId: number,
  name: string,
): Promise<boolean> {
  // Compared here rather than in SQL: lower() differs between the databases beyond ASCII.
  const key = name.toLowerCase();
  const rows = await db
    .selectFrom('channel_folders')
    .select('name')
    .where('realm_id', '=', realmId)
    .execute();
  return rows.some((r) => r.name.toLowerCase() === key);
}

/** Insert a folder placed after every existing one (its position is its id). */
export async function insertChannelFolder(
  db: Q,
  row: Omit<Insertable<ChannelFolderTable>, 'sort_order'>,
): Promise<ChannelFolderRow> {
  const { id } = await db
    .insertInto('channel_folders')
    .values({ ...row, sort_order: 0 })
    .returning('id')
    .executeTakeFirstOrThrow();
  return db
    .updateTable('channel_folders')
    .set({ sort_order: id })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateChannelFolder(
  db: Q,
  id: number,
  changes: Partial<Omit<ChannelFolderRow, 'id' | 'realm_id'>>,
): Promise<void> {
  await db.updateTable('channel_folders').set(changes).where('id', '=', id).execute();
}

/** Whether any channel, archived ones included, is in the folder. */
export async function channelFolderHasChannels(db: Q, folderId: number): Promise<boolean> {
  const row = await db
    .selectFrom('channels')
    .select('id')
    .where('folder_id', '=', folderId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
