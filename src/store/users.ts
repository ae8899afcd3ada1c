import { cachedQuery, compiledQuery } from './compiled.ts';
import type { Q } from './db.ts';
import type { NewUser, UserRow, UserUpdate } from './schema.ts';

export async function insertUser(db: Q, row: NewUser): Promise<UserRow> {
  return db.insertInto('users').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function updateUser(db: Q, id: number, changes: UserUpdate): Promise<void> {
  await db.updateTable('users').set(changes).where('id', '=', id).execute();
}

// Kept while users is unwritten (compiled.ts): changes re-read their actor with it
// (actions/permissions.ts accessCurrentActor), sends included.
const userById = cachedQuery(2, (db, realmId: number, id: number) =>
  db.selectFrom('users').selectAll().where('realm_id', '=', realmId).where('id', '=', id),
);

export async function getUserById(
  db: Q,
  realmId: number,
  id: number,
): Promise<Readonly<UserRow> | undefined> {
  return userById.first(db, realmId, id);
}

/** By API email or real address, case-insensitively (emails are stored lowercased). */
export async function getUserByEmail(
  db: Q,
  realmId: number,
  email: string,
): Promise<UserRow | undefined> {
  const lower = email.toLowerCase();
  return db
    .selectFrom('users')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where((eb) => eb.or([eb('email', '=', lower), eb('delivery_email', '=', lower)]))
    .orderBy('id')
    .executeTakeFirst();
}

const userByApiKey = compiledQuery(1, (db, apiKey: string) =>
  db.selectFrom('users').selectAll().where('api_key', '=', apiKey),
);

export async function getUserByApiKey(db: Q, apiKey: string): Promise<UserRow | undefined> {
  return userByApiKey.first(db, apiKey);
}

/**
 * Every user of the organization, by id. Kept between calls (a cached read): a register
 * presents them all, and a large organization's rows take longer to hand over than the
 * rest of its snapshot's reads together.
 */
export async function listUsers(db: Q, realmId: number): Promise<ReadonlyArray<Readonly<UserRow>>> {
  return usersOfRealm.all(db, realmId);
}

const usersOfRealm = cachedQuery(1, (db, realmId: number) =>
  db.selectFrom('users').selectAll().where('realm_id', '=', realmId).orderBy('id'),
);

export async function listUsersByIds(db: Q, realmId: number, ids: number[]): Promise<UserRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('users')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('id', 'in', ids)
    .orderBy('id')
    .execute();
}

/** What delivering a message needs of each recipient; a full row is ~20 times larger. */
export type RecipientRow = Pick<
  UserRow,
  'id' | 'realm_id' | 'role' | 'is_bot' | 'bot_type' | 'is_active'
>;

/** Each active user's id and role, by id: what deciding who sees a channel needs. */
export async function listActiveRoles(
  db: Q,
  realmId: number,
): Promise<Array<Pick<UserRow, 'id' | 'role'>>> {
  return activeRoles.all(db, realmId);
}

const activeRoles = compiledQuery(1, (db, realmId: number) =>
  db
    .selectFrom('users')
    .select(['id', 'role'])
    .where('realm_id', '=', realmId)
    .where('is_active', '=', 1)
    .orderBy('id'),
);

export async function listActiveUserIds(db: Q, realmId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('users')
    .select('id')
    .where('realm_id', '=', realmId)
    .where('is_active', '=', 1)
    .execute();
  return rows.map((r) => r.id);
}

export async function listActiveAdminIds(db: Q, realmId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('users')
    .select('id')
    .where('realm_id', '=', realmId)
    .where('is_active', '=', 1)
    .where('is_bot', '=', 0)
    .where('role', '<=', 200)
    .execute();
  return rows.map((r) => r.id);
}

export async function countActiveOwners(db: Q, realmId: number): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('realm_id', '=', realmId)
    .where('is_active', '=', 1)
    .where('is_bot', '=', 0)
    .where('role', '=', 100)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function listBotsOwnedBy(db: Q, ownerId: number): Promise<UserRow[]> {
  return botsOwnedBy.all(db, ownerId);
}

const botsOwnedBy = compiledQuery(1, (db, ownerId: number) =>
  db
    .selectFrom('users')
    .selectAll()
    .where('bot_owner_id', '=', ownerId)
    .where('is_bot', '=', 1)
    .orderBy('id'),
);

export async function listBots(db: Q, realmId: number): Promise<UserRow[]> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('is_bot', '=', 1)
    .orderBy('id')
    .execute();
}

/** Users who share a direct-message conversation with the user (themselves included). */
export async function listDirectMessagePartners(db: Q, userId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('direct_participants as mine')
    .innerJoin('direct_participants as theirs', 'theirs.recipient_id', 'mine.recipient_id')
    .select('theirs.user_id')
    .distinct()
    .where('mine.user_id', '=', userId)
    .execute();
  return rows.map((r) => r.user_id);
}

/** The newest message the user has received, or -1. */
const maxMessageIdOfUser = cachedQuery(1, (db, userId: number) =>
  db
    .selectFrom('user_messages')
    .select((eb) => eb.fn.max('message_id').as('max_id'))
    .where('user_id', '=', userId),
);

export async function maxMessageIdForUser(db: Q, userId: number): Promise<number> {
  const row = await maxMessageIdOfUser.first(db, userId);
  return row?.max_id === null || row?.max_id === undefined ? -1 : Number(row.max_id);
}

/** By API email only, case-insensitively. */
export async function getUserByApiEmail(
  db: Q,
  realmId: number,
  email: string,
): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('email', '=', email.toLowerCase())
    .executeTakeFirst();
}

/** By real address only, case-insensitively. */
export async function getUserByDeliveryEmail(
  db: Q,
  realmId: number,
  email: string,
): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('delivery_email', '=', email.toLowerCase())
    .executeTakeFirst();
}

export async function countActiveUsers(db: Q, realmId: number): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('realm_id', '=', realmId)
    .where('is_active', '=', 1)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
