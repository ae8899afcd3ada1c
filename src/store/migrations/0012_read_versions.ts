// PostgreSQL only: the counter of migration 0011 also advances with every change to the
// rows that cached reads keep (store/compiled.ts cachedQuery): channels, subscriptions,
// group memberships, alert words, muting and profile values. A process then reuses those
// rows while the counter, read once per turn of the event loop, stays the same, and sees
// another process's change from its next turn on, as it does for users and realms rows.
// The triggers are the same deferred, once-per-transaction ones; the tables are written far
// less often than they are read, and a send writes none of them.
import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from './helpers.ts';

/** The tables whose changes advance the counter, besides users and realms (0011). */
export const READ_VERSION_TABLES = [
  'channels',
  'subscriptions',
  'user_group_members',
  'user_group_subgroups',
  'alert_words',
  'muted_users',
  'custom_profile_fields',
  'custom_profile_field_values',
] as const;

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  if (dialect !== 'postgres') return;
  await countWritesOf(db, READ_VERSION_TABLES);
}

/** Every change to these tables advances the counter of migration 0011, once per transaction. */
export async function countWritesOf(db: Kysely<unknown>, tables: readonly string[]): Promise<void> {
  for (const table of tables) {
    await sql`
      CREATE CONSTRAINT TRIGGER ${sql.raw(`${table}_accounts_version`)}
      AFTER INSERT OR UPDATE OR DELETE ON ${sql.table(table)} DEFERRABLE INITIALLY DEFERRED
      FOR EACH ROW EXECUTE FUNCTION advance_accounts_version()`.execute(db);
    await sql`
      CREATE TRIGGER ${sql.raw(`${table}_truncate_accounts_version`)}
      AFTER TRUNCATE ON ${sql.table(table)}
      FOR EACH STATEMENT EXECUTE FUNCTION advance_accounts_version()`.execute(db);
  }
}
