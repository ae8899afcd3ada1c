// A realm's commit sequence (actions/transaction.ts) moves from its realms row to a table of
// its own. Every evented change advances it, and on PostgreSQL an update of the realms row
// was the costliest part of that: the row is what every message's foreign key locks (a key
// share lock, so concurrent sends and the update made a multixact of them), and the
// accounts-version trigger of migration 0011 compared the whole row before and after to
// tell that only the sequence had moved. A row here has no foreign key pointing at it and
// no trigger. Figure 3c's send load (a scratch script, three alternations): PostgreSQL's CPU
// per send 1,198-1,281 -> 960-1,153 µs, 757-815 -> 822-958 sends a second. A realm's row is
// made by its first evented change (nextEventSeq); a realm without one reads 0.
import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from './helpers.ts';

export async function up(db: Kysely<unknown>, _dialect: MigrationDialect): Promise<void> {
  await db.schema
    .createTable('realm_event_seqs')
    .addColumn('realm_id', 'integer', (c) => c.primaryKey().references('realms.id'))
    .addColumn('event_seq', 'integer', (c) => c.notNull())
    .execute();
  await sql`INSERT INTO realm_event_seqs (realm_id, event_seq) SELECT id, event_seq FROM realms`.execute(
    db,
  );
  await db.schema.alterTable('realms').dropColumn('event_seq').execute();
}
