import { compiledQuery } from './compiled.ts';
import type { Q } from './db.ts';
import type { NewRealm, RealmRow } from './schema.ts';

export async function insertRealm(db: Q, row: NewRealm): Promise<RealmRow> {
  return db.insertInto('realms').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function getRealmById(db: Q, id: number): Promise<RealmRow | undefined> {
  return db.selectFrom('realms').selectAll().where('id', '=', id).executeTakeFirst();
}

const realmByStringId = compiledQuery(1, (db, stringId: string) =>
  db.selectFrom('realms').selectAll().where('string_id', '=', stringId),
);

export async function getRealmByStringId(db: Q, stringId: string): Promise<RealmRow | undefined> {
  return realmByStringId.first(db, stringId);
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

/** Advance the realm's commit sequence; the row lock orders evented commits of one realm. */
// Not counted as a change of the realm row by the accounts version (db.ts mayWriteAccounts):
// event_seq is read only through currentEventSeq and nextEventSeq.
const advanceEventSeq = compiledQuery(1, (db, realmId: number) =>
  db
    .updateTable('realms')
    .set((eb) => ({ event_seq: eb('event_seq', '+', 1) }))
    .where('id', '=', realmId)
    .returning('event_seq'),
);

export async function nextEventSeq(db: Q, realmId: number): Promise<number> {
  const row = await advanceEventSeq.first(db, realmId);
  if (!row) throw new Error(`no realm ${realmId}`);
  return Number(row.event_seq);
}

/**
 * nextEventSeq as a text without parameters, for PostgreSQL to run together with the COMMIT
 * (db.ts commitOnPostgres); eventSeqOf reads its answer.
 */
export function advanceEventSeqStatement(realmId: number): string {
  if (!Number.isSafeInteger(realmId)) throw new Error(`not a realm id: ${realmId}`);
  return `update "realms" set "event_seq" = "event_seq" + 1 where "id" = ${realmId} returning "event_seq"`;
}

export function eventSeqOf(rows: unknown[], realmId: number): number {
  const row = rows[0] as { event_seq: number | string } | undefined;
  if (!row) throw new Error(`no realm ${realmId}`);
  return Number(row.event_seq);
}

export async function currentEventSeq(db: Q, realmId: number): Promise<number> {
  const row = await db
    .selectFrom('realms')
    .select('event_seq')
    .where('id', '=', realmId)
    .executeTakeFirstOrThrow();
  return Number(row.event_seq);
}
