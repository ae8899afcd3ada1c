// Bot settings that POST/PATCH /bots store: the default for a bot's all_public_streams,
// the service name of outgoing-webhook and embedded bots, and embedded bots' key/value
// configuration.
import type { Kysely } from 'kysely';
import type { MigrationDialect } from './helpers.ts';

export async function up(db: Kysely<unknown>, _dialect: MigrationDialect): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('default_all_public_streams', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('bot_services')
    .addColumn('service_name', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema
    .createTable('bot_config_data')
    .addColumn('bot_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('bot_config_data_pk', ['bot_id', 'key'])
    .execute();
}
