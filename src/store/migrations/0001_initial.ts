// Realms, users, bots and user groups: everything the permission settings refer to.
import type { Kysely } from 'kysely';
import { idColumn, type MigrationDialect } from './helpers.ts';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  await idColumn(db.schema.createTable('realms'), dialect)
    .addColumn('string_id', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('icon_source', 'text', (c) => c.notNull().defaultTo('G'))
    .addColumn('icon_version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('date_created', 'integer', (c) => c.notNull())
    .addColumn('deactivated', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('settings', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('event_seq', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  await idColumn(db.schema.createTable('users'), dialect)
    .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('delivery_email', 'text', (c) => c.notNull())
    .addColumn('full_name', 'text', (c) => c.notNull())
    .addColumn('role', 'integer', (c) => c.notNull())
    .addColumn('is_active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('is_bot', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('bot_type', 'integer')
    .addColumn('bot_owner_id', 'integer', (c) => c.references('users.id'))
    .addColumn('api_key', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text')
    .addColumn('date_joined', 'integer', (c) => c.notNull())
    .addColumn('avatar_source', 'text', (c) => c.notNull().defaultTo('G'))
    .addColumn('avatar_version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('settings', 'text', (c) => c.notNull().defaultTo('{}'))
    .execute();
  await db.schema
    .createIndex('users_realm_email')
    .unique()
    .on('users')
    .columns(['realm_id', 'email'])
    .execute();
  await db.schema
    .createIndex('users_realm_delivery_email')
    .unique()
    .on('users')
    .columns(['realm_id', 'delivery_email'])
    .execute();
  await db.schema.createIndex('users_bot_owner').on('users').column('bot_owner_id').execute();

  await idColumn(db.schema.createTable('bot_services'), dialect)
    .addColumn('bot_id', 'integer', (c) => c.notNull().unique().references('users.id'))
    .addColumn('base_url', 'text', (c) => c.notNull())
    .addColumn('interface', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('token', 'text', (c) => c.notNull())
    .execute();

  await idColumn(db.schema.createTable('user_groups'), dialect)
    .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
    .addColumn('name', 'text')
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('is_system_group', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('date_created', 'integer', (c) => c.notNull())
    .addColumn('creator_id', 'integer', (c) => c.references('users.id'))
    .addColumn('deactivated', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('settings', 'text', (c) => c.notNull().defaultTo('{}'))
    .execute();
  await db.schema
    .createIndex('user_groups_realm_name')
    .unique()
    .on('user_groups')
    .columns(['realm_id', 'name'])
    .execute();

  await db.schema
    .createTable('user_group_members')
    .addColumn('group_id', 'integer', (c) => c.notNull().references('user_groups.id'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
    .addPrimaryKeyConstraint('user_group_members_pk', ['group_id', 'user_id'])
    .execute();
  await db.schema
    .createIndex('user_group_members_user')
    .on('user_group_members')
    .column('user_id')
    .execute();

  await db.schema
    .createTable('user_group_subgroups')
    .addColumn('group_id', 'integer', (c) => c.notNull().references('user_groups.id'))
    .addColumn('subgroup_id', 'integer', (c) => c.notNull().references('user_groups.id'))
    .addPrimaryKeyConstraint('user_group_subgroups_pk', ['group_id', 'subgroup_id'])
    .execute();
  await db.schema
    .createIndex('user_group_subgroups_sub')
    .on('user_group_subgroups')
    .column('subgroup_id')
    .execute();
}
