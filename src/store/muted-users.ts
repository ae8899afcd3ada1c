// Users a user has muted.
import { cachedQuery } from './compiled.ts';
import type { Q } from './db.ts';

export interface MutedUser {
  id: number;
  timestamp: number;
}

/** The user's muted users, oldest mute first. */
export async function listMutedUsers(db: Q, userId: number): Promise<MutedUser[]> {
  const rows = await mutedByUser.all(db, userId);
  return rows.map((r) => ({ id: r.muted_user_id, timestamp: r.date_muted }));
}

const mutedByUser = cachedQuery(1, (db, userId: number) =>
  db
    .selectFrom('muted_users')
    .select(['muted_user_id', 'date_muted'])
    .where('user_id', '=', userId)
    .orderBy('date_muted')
    .orderBy('muted_user_id'),
);

export async function isMuted(db: Q, userId: number, mutedUserId: number): Promise<boolean> {
  const row = await db
    .selectFrom('muted_users')
    .select('user_id')
    .where('user_id', '=', userId)
    .where('muted_user_id', '=', mutedUserId)
    .executeTakeFirst();
  return row !== undefined;
}

/** Who has muted this user. */
export async function listMuterIds(db: Q, mutedUserId: number): Promise<Set<number>> {
  const rows = await muterIds.all(db, mutedUserId);
  return new Set(rows.map((r) => r.user_id));
}

const muterIds = cachedQuery(1, (db, mutedUserId: number) =>
  db.selectFrom('muted_users').select('user_id').where('muted_user_id', '=', mutedUserId),
);

export async function insertMutedUser(
  db: Q,
  userId: number,
  mutedUserId: number,
  now: number,
): Promise<void> {
  await db
    .insertInto('muted_users')
    .values({ user_id: userId, muted_user_id: mutedUserId, date_muted: now })
    .execute();
}

export async function deleteMutedUser(db: Q, userId: number, mutedUserId: number): Promise<void> {
  await db
    .deleteFrom('muted_users')
    .where('user_id', '=', userId)
    .where('muted_user_id', '=', mutedUserId)
    .execute();
}
