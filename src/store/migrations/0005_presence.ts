// Presence: per user the last time a client reported them active and the last time any
// client was connected, each row stamped with a realm-wide increasing update id so that
// clients can fetch only what changed since the id they last saw.
import type { Kysely } from 'kysely';
import type { MigrationDialect } from './helpers.ts';

export async function up(db: Kysely<unknown>, _dialect: MigrationDialect): Promise<void> {
  await db.schema
    .createTable('user_presences')
    .addColumn('user_id', 'integer', (c) => c.primaryKey().references('users.id'))
    .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
    .addColumn('last_active_time', 'integer')
    .addColumn('last_connected_time', 'integer', (c) => c.notNull())
    .addColumn('last_update_id', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('user_presences_realm_update')
    .on('user_presences')
    .columns(['realm_id', 'last_update_id'])
    .execute();
  await db.schema
    .createTable('presence_sequences')
    .addColumn('realm_id', 'integer', (c) => c.primaryKey().references('realms.id'))
    .addColumn('last_update_id', 'integer', (c) => c.notNull())
    .execute();
}
