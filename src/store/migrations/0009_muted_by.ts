// Sending a message looks up who has muted its sender (their copy arrives read): an index
// on the muted user makes that one probe instead of a scan of every mute.
import type { Kysely } from 'kysely';
import type { MigrationDialect } from './helpers.ts';

export async function up(db: Kysely<unknown>, _dialect: MigrationDialect): Promise<void> {
  await db.schema
    .createIndex('muted_users_by_muted_user')
    .on('muted_users')
    .columns(['muted_user_id', 'user_id'])
    .execute();
}
