// Presence rows and the realm's presence update sequence.
import type { Q } from './db.ts';
import type { UserPresenceRow } from './schema.ts';

export async function getPresence(db: Q, userId: number): Promise<UserPresenceRow | undefined> {
  return db
    .selectFrom('user_presences')
    .selectAll()
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

export async function upsertPresence(db: Q, row: UserPresenceRow): Promise<void> {
  const { user_id: _id, realm_id: _realm, ...changes } = row;
  await db
    .insertInto('user_presences')
    .values(row)
    .onConflict((oc) => oc.column('user_id').doUpdateSet(changes))
    .execute();
}

/** The realm's next presence update id (1, 2, …); concurrent writers serialize on the row. */
export async function nextPresenceUpdateId(db: Q, realmId: number): Promise<number> {
  const row = await db
    .insertInto('presence_sequences')
    .values({ realm_id: realmId, last_update_id: 1 })
    .onConflict((oc) =>
      oc.column('realm_id').doUpdateSet((eb) => ({
        last_update_id: eb('presence_sequences.last_update_id', '+', 1),
      })),
    )
    .returning('last_update_id')
    .executeTakeFirstOrThrow();
  return Number(row.last_update_id);
}

export interface PresenceListRow extends UserPresenceRow {
  email: string;
  date_joined: number;
  /** The user's settings JSON text (presence_enabled lives there). */
  settings: string;
}

export interface PresenceFilter {
  /** Only rows changed after this update id. */
  afterUpdateId?: number;
  /** Only users with a client connected at or after this time. */
  connectedSince?: number;
  userId?: number;
}

/** Presence rows of the realm's active human users, by user id. */
export async function listPresences(
  db: Q,
  realmId: number,
  filter: PresenceFilter,
): Promise<PresenceListRow[]> {
  let q = db
    .selectFrom('user_presences as p')
    .innerJoin('users as u', 'u.id', 'p.user_id')
    .selectAll('p')
    .select(['u.email', 'u.date_joined', 'u.settings'])
    .where('p.realm_id', '=', realmId)
    .where('u.is_active', '=', 1)
    .where('u.is_bot', '=', 0);
  if (filter.afterUpdateId !== undefined)
    q = q.where('p.last_update_id', '>', filter.afterUpdateId);
  if (filter.connectedSince !== undefined) {
    q = q.where('p.last_connected_time', '>=', filter.connectedSince);
  }
  if (filter.userId !== undefined) q = q.where('p.user_id', '=', filter.userId);
  return q.orderBy('p.user_id').execute();
}
