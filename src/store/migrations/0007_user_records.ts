// Per-user and per-realm records of issue 6: muted users, custom profile fields and their
// values, code playgrounds, push registration tokens and seen onboarding steps.
import type { Kysely } from 'kysely';
import { idColumn, type MigrationDialect } from './helpers.ts';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  await db.schema
    .createTable('muted_users')
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('muted_user_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('date_muted', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('muted_users_pk', ['user_id', 'muted_user_id'])
    .execute();

  await idColumn(db.schema.createTable('custom_profile_fields'), dialect)
    .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('hint', 'text', (c) => c.notNull())
    .addColumn('field_type', 'integer', (c) => c.notNull())
    .addColumn('field_data', 'text', (c) => c.notNull())
    .addColumn('field_order', 'integer', (c) => c.notNull())
    .addColumn('required', 'integer', (c) => c.notNull())
    .addColumn('editable_by_user', 'integer', (c) => c.notNull())
    .addColumn('display_in_profile_summary', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('custom_profile_fields_realm')
    .on('custom_profile_fields')
    .column('realm_id')
    .execute();

  await db.schema
    .createTable('custom_profile_field_values')
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('field_id', 'integer', (c) =>
      c.notNull().references('custom_profile_fields.id').onDelete('cascade'),
    )
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('rendered_value', 'text')
    .addPrimaryKeyConstraint('custom_profile_field_values_pk', ['user_id', 'field_id'])
    .execute();

  await idColumn(db.schema.createTable('realm_playgrounds'), dialect)
    .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('pygments_language', 'text', (c) => c.notNull())
    .addColumn('url_template', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('push_device_tokens')
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
    /** 'gcm' or 'apns'. */
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('ios_app_id', 'text')
    .addColumn('date_created', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('push_device_tokens_pk', ['user_id', 'kind', 'token'])
    .execute();

  await db.schema
    .createTable('onboarding_steps')
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('date_seen', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('onboarding_steps_pk', ['user_id', 'name'])
    .execute();
}
