// Outgoing-webhook deliveries waiting to be sent: written in the transaction that stores
// the triggering message, so a delivery survives a restart; the worker deletes the row once
// the bot answered or the delivery gave up. No foreign key on the message: deleting a
// message must not wait for its deliveries (the worker drops rows whose message is gone).
import type { Kysely } from 'kysely';
import { idColumn, type MigrationDialect } from './helpers.ts';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  await idColumn(db.schema.createTable('outgoing_webhook_deliveries'), dialect)
    .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
    .addColumn('bot_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('message_id', 'integer', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('outgoing_webhook_deliveries_due')
    .on('outgoing_webhook_deliveries')
    .columns(['next_attempt_at', 'id'])
    .execute();
}
