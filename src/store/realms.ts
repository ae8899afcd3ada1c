import { sql } from 'kysely';
import { cachedQuery, compiledQuery } from './compiled.ts';
import { readVersionInTransaction, type Q } from './db.ts';
import type { NewRealm, RealmRow } from './schema.ts';

export async function insertRealm(db: Q, row: NewRealm): Promise<RealmRow> {
  return db.insertInto('realms').values(row).returningAll().executeTakeFirstOrThrow();
}

// Kept while no change to realms is seen (compiled.ts): the row changes only when a setting
// does, and checks read it inside every change (actions/permissions.ts accessRealmSettings).
const realmById = cachedQuery(1, (db, id: number) =>
  db.selectFrom('realms').selectAll().where('id', '=', id),
);

export async function getRealmById(db: Q, id: number): Promise<Readonly<RealmRow> | undefined> {
  return realmById.first(db, id);
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

/**
 * Advance the realm's commit sequence; the row lock orders evented commits of one realm. The
 * row is made by the realm's first evented change (migration 0014).
 */
const advanceEventSeq = compiledQuery(1, (db, realmId: number) =>
  db
    .insertInto('realm_event_seqs')
    .values({ realm_id: realmId, event_seq: 1 })
    .onConflict((oc) =>
      oc
        .column('realm_id')
        .doUpdateSet((eb) => ({ event_seq: eb('realm_event_seqs.event_seq', '+', 1) })),
    )
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
  return `insert into "realm_event_seqs" ("realm_id", "event_seq") values (${realmId}, 1) on conflict ("realm_id") do update set "event_seq" = "realm_event_seqs"."event_seq" + 1 returning "event_seq"`;
}

export function eventSeqOf(rows: unknown[], realmId: number): number {
  const row = rows[0] as { event_seq: number | string } | undefined;
  if (!row) throw new Error(`no realm ${realmId}`);
  return Number(row.event_seq);
}

/** Realms per query of eventSeqsOf: far below either database's limit on parameters. */
const SEQS_PER_QUERY = 1000;

/** The commit sequences of these realms; a realm without an evented change yet is absent. */
export async function eventSeqsOf(db: Q, realmIds: number[]): Promise<Map<number, number>> {
  const seqs = new Map<number, number>();
  for (let i = 0; i < realmIds.length; i += SEQS_PER_QUERY) {
    const rows = await db
      .selectFrom('realm_event_seqs')
      .select(['realm_id', 'event_seq'])
      .where('realm_id', 'in', realmIds.slice(i, i + SEQS_PER_QUERY))
      .execute();
    for (const r of rows) seqs.set(Number(r.realm_id), Number(r.event_seq));
  }
  return seqs;
}

/** Advisory locks of Parley's own, apart from any another application takes. */
const REALM_CHANGES_LOCK_SPACE = 0x7061726c; // "parl"

/**
 * PostgreSQL only: wait until no other transaction changes this realm, and hold that until
 * this one ends (0 is every change that names no realm: creating an organization). The
 * transaction's cached reads then see every change that had its turn before.
 */
export async function lockRealmChanges(db: Q, realmId: number): Promise<void> {
  await sql`select pg_advisory_xact_lock(${REALM_CHANGES_LOCK_SPACE}::int4, ${realmId}::int4)`.execute(
    db,
  );
  // A statement of its own: under READ COMMITTED the lock's statement sees what was
  // committed when it started, before its wait.
  await readVersionInTransaction(db);
}

/**
 * PostgreSQL only: the turn of a batch of message sends. Batches share it with each other
 * (sends do not check what other sends write) but not with the realm's other changes, which
 * wait for the batch as it waits for them. Returns the accounts counter (db.ts) as read
 * after the wait: a send planned under another reading is planned again.
 */
export async function lockRealmForSends(db: Q, realmId: number): Promise<number | null> {
  await sql`select pg_advisory_xact_lock_shared(${REALM_CHANGES_LOCK_SPACE}::int4, ${realmId}::int4)`.execute(
    db,
  );
  return readVersionInTransaction(db);
}

/** The realm's commit sequence; 0 before its first evented change. */
export async function currentEventSeq(db: Q, realmId: number): Promise<number> {
  const row = await db
    .selectFrom('realm_event_seqs')
    .select('event_seq')
    .where('realm_id', '=', realmId)
    .executeTakeFirst();
  return row === undefined ? 0 : Number(row.event_seq);
}
