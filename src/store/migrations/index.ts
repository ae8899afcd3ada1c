// The one static list of migrations (works from dist/ without a directory scan).
import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import type { MigrationDialect } from './helpers.ts';
import * as m0001 from './0001_initial.ts';
import * as m0002 from './0002_chat.ts';
import * as m0003 from './0003_bot_settings.ts';
import * as m0004 from './0004_drafts_folders.ts';
import * as m0005 from './0005_presence.ts';
import * as m0006 from './0006_emoji_invites.ts';
import * as m0007 from './0007_user_records.ts';
import * as m0008 from './0008_outgoing_webhooks.ts';
import * as m0009 from './0009_muted_by.ts';
import * as m0010 from './0010_read_paths.ts';
import * as m0011 from './0011_accounts_version.ts';
import * as m0012 from './0012_read_versions.ts';
import * as m0013 from './0013_channel_messages.ts';
import * as m0014 from './0014_event_sequences.ts';
import * as m0015 from './0015_group_read_version.ts';
import * as m0016 from './0016_user_messages_without_rowid.ts';

type Up = (db: Kysely<unknown>, dialect: MigrationDialect) => Promise<void>;

const MIGRATIONS: Array<[string, Up]> = [
  ['0001_initial', m0001.up],
  ['0002_chat', m0002.up],
  ['0003_bot_settings', m0003.up],
  ['0004_drafts_folders', m0004.up],
  ['0005_presence', m0005.up],
  ['0006_emoji_invites', m0006.up],
  ['0007_user_records', m0007.up],
  ['0008_outgoing_webhooks', m0008.up],
  ['0009_muted_by', m0009.up],
  ['0010_read_paths', m0010.up],
  ['0011_accounts_version', m0011.up],
  ['0012_read_versions', m0012.up],
  ['0013_channel_messages', m0013.up],
  ['0014_event_sequences', m0014.up],
  ['0015_group_read_version', m0015.up],
  ['0016_user_messages_without_rowid', m0016.up],
];

export async function migrateToLatest(
  db: Kysely<unknown>,
  dialect: MigrationDialect,
  schema?: string,
): Promise<string[]> {
  return migrateUpTo(db, dialect, null, schema);
}

/** Run the migrations up to and including `last` (every one when null); returns those run. */
export async function migrateUpTo(
  db: Kysely<unknown>,
  dialect: MigrationDialect,
  last: string | null,
  schema?: string,
): Promise<string[]> {
  const provider: MigrationProvider = {
    async getMigrations() {
      const out: Record<string, Migration> = {};
      for (const [name, up] of MIGRATIONS) out[name] = { up: (d) => up(d, dialect) };
      return out;
    },
  };
  // Name the schema: Kysely otherwise finds its tables in any schema of the database.
  const migrator = new Migrator({
    db,
    provider,
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  const { error, results } =
    last === null ? await migrator.migrateToLatest() : await migrator.migrateTo(last);
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
