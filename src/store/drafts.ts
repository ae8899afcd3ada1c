// A user's drafts.
import type { Insertable } from 'kysely';
import type { Q } from './db.ts';
import type { DraftRow, DraftTable } from './schema.ts';

/** Oldest edit first (GET /drafts), or newest first and at most limit (register). */
export async function listDrafts(
  db: Q,
  userId: number,
  opts: { newestFirst: boolean; limit?: number },
): Promise<DraftRow[]> {
  const dir = opts.newestFirst ? 'desc' : 'asc';
  let q = db
    .selectFrom('drafts')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('last_edit_time', dir)
    .orderBy('id', dir);
  if (opts.limit !== undefined) q = q.limit(opts.limit);
  return q.execute();
}

export async function getDraft(db: Q, userId: number, id: number): Promise<DraftRow | undefined> {
  return db
    .selectFrom('drafts')
    .selectAll()
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function insertDraft(db: Q, row: Insertable<DraftTable>): Promise<DraftRow> {
  return db.insertInto('drafts').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function updateDraft(
  db: Q,
  id: number,
  changes: Partial<Omit<DraftRow, 'id' | 'user_id'>>,
): Promise<DraftRow> {
  return db
    .updateTable('drafts')
    .set(changes)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteDraft(db: Q, id: number): Promise<void> {
  await db.deleteFrom('drafts').where('id', '=', id).execute();
}

export async function deleteUserDrafts(db: Q, userId: number): Promise<void> {
  await db.deleteFrom('drafts').where('user_id', '=', userId).execute();
}
