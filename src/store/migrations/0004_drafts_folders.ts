// Channel folders (administrators group channels under them) and drafts (a user's unsent
// messages, kept on the server so the user's clients share them).
import type { Kysely } from 'kysely';
import { idColumn, type MigrationDialect } from './helpers.ts';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  await idColumn(db.schema.createTable('channel_folders'), dialect)
    .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('rendered_description', 'text', (c) => c.notNull())
    .addColumn('sort_order', 'integer', (c) => c.notNull())
    .addColumn('date_created', 'integer', (c) => c.notNull())
    .addColumn('creator_id', 'integer', (c) => c.references('users.id'))
    .addColumn('is_archived', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex('channel_folders_realm')
    .on('channel_folders')
    .columns(['realm_id', 'sort_order'])
    .execute();
  await idColumn(db.schema.createTable('drafts'), dialect)
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('to_ids', 'text', (c) => c.notNull())
    .addColumn('topic', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('last_edit_time', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('drafts_user_edit_time')
    .on('drafts')
    .columns(['user_id', 'last_edit_time'])
    .execute();
}
