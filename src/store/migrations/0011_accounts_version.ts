// PostgreSQL only: a counter that every change to a users or realms row advances in the
// change's own transaction, so that a process may keep those rows while it reads the same
// number (db.ts accountsVersion; SQLite counts its connection's writes and reads
// PRAGMA data_version instead). Every process, command-line action and psql session goes
// through the triggers, and the counter's new value becomes visible with the change.
//
// The triggers are deferred to the commit: the counter's row lock is then the last lock a
// transaction takes and is held for its commit alone, so two transactions cannot deadlock
// over it and rows they lock earlier (users rows, the realm's commit sequence). Advancing
// a realm's commit sequence (event_seq) does not count: every evented change does it, and
// it is never read from a realm row kept earlier.
import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from './helpers.ts';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`CREATE TABLE accounts_version (n bigint NOT NULL)`.execute(db);
  await sql`INSERT INTO accounts_version (n) VALUES (0)`.execute(db);
  // The search path the migration runs with, so a session with another one (an operator
  // naming the schema in psql) still finds the counter. Once per transaction: the triggers
  // fire per row, and advancing the counter for each of 10,000 rows written together took
  // 494 ms where the rows took 15 (a transaction-local setting remembers it is done; it
  // is gone at the commit, and with a savepoint rolled back).
  await sql`
    CREATE FUNCTION advance_accounts_version() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
    BEGIN
      IF current_setting('parley.accounts_advanced', true) IS DISTINCT FROM 'on' THEN
        UPDATE accounts_version SET n = n + 1;
        PERFORM set_config('parley.accounts_advanced', 'on', true);
      END IF;
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE CONSTRAINT TRIGGER users_accounts_version
    AFTER INSERT OR UPDATE OR DELETE ON users DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION advance_accounts_version()`.execute(db);
  await sql`
    CREATE CONSTRAINT TRIGGER realms_accounts_version
    AFTER INSERT OR DELETE ON realms DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION advance_accounts_version()`.execute(db);
  await sql`
    CREATE CONSTRAINT TRIGGER realms_accounts_version_update
    AFTER UPDATE ON realms DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN ((to_jsonb(OLD) - 'event_seq') IS DISTINCT FROM (to_jsonb(NEW) - 'event_seq'))
    EXECUTE FUNCTION advance_accounts_version()`.execute(db);
  // TRUNCATE cannot have a constraint trigger; it locks the whole table until commit anyway.
  for (const table of ['users', 'realms']) {
    await sql`
      CREATE TRIGGER ${sql.raw(`${table}_truncate_accounts_version`)}
      AFTER TRUNCATE ON ${sql.table(table)}
      FOR EACH STATEMENT EXECUTE FUNCTION advance_accounts_version()`.execute(db);
  }
}
