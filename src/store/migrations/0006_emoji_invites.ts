// Custom emoji (the image lives in the file store; a deactivated emoji keeps its row so old
// messages and reactions still show it) and invitations (email invitations and reusable
// links, separate id sets as the API presents them).
import type { Kysely } from 'kysely';
import { idColumn, type MigrationDialect } from './helpers.ts';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  await idColumn(db.schema.createTable('realm_emoji'), dialect)
    .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('author_id', 'integer', (c) => c.references('users.id'))
    .addColumn('file_ext', 'text', (c) => c.notNull())
    .addColumn('is_animated', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('deactivated', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('date_created', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('realm_emoji_realm_name')
    .on('realm_emoji')
    .columns(['realm_id', 'name'])
    .execute();
  for (const table of ['email_invites', 'multiuse_invites'] as const) {
    let builder = idColumn(db.schema.createTable(table), dialect)
      .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
      .addColumn('referred_by_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('invited_as', 'integer', (c) => c.notNull())
      .addColumn('created', 'integer', (c) => c.notNull())
      .addColumn('expiry', 'integer')
      .addColumn('notify_referrer_on_join', 'integer', (c) => c.notNull())
      .addColumn('channel_ids', 'text', (c) => c.notNull())
      .addColumn('group_ids', 'text', (c) => c.notNull())
      .addColumn('include_realm_default_subscriptions', 'integer', (c) => c.notNull())
      .addColumn('invite_key', 'text', (c) => c.notNull().unique())
      /** 0 pending, 1 used (email invitations), 2 revoked. */
      .addColumn('status', 'integer', (c) => c.notNull().defaultTo(0));
    if (table === 'email_invites') builder = builder.addColumn('email', 'text', (c) => c.notNull());
    await builder.execute();
  }
}
