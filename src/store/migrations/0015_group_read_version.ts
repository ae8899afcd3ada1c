// PostgreSQL only: changes to user_groups rows advance the counter of migration 0011 too, as
// migration 0012 made the other tables that cached reads keep do. A register presents every
// group setting of every channel and group, and its reads of the organization's groups are
// cached reads (store/user-groups.ts); groups are created, renamed and deactivated far less
// often than clients register.
import type { Kysely } from 'kysely';
import type { MigrationDialect } from './helpers.ts';
import { countWritesOf } from './0012_read_versions.ts';

/** The tables whose changes advance the counter from this migration on. */
export const GROUP_READ_VERSION_TABLES = ['user_groups'] as const;

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  if (dialect !== 'postgres') return;
  await countWritesOf(db, GROUP_READ_VERSION_TABLES);
}
