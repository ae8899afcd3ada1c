// Channels, subscriptions, conversations, messages and per-user message state, topics
// preferences, alert words and default channels.
import { sql, type Kysely } from 'kysely';
import { idColumn, type MigrationDialect } from './helpers.ts';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  await idColumn(db.schema.createTable('channels'), dialect)
    .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    // Lower-cased name: channel names are unique per organization regardless of case.
    .addColumn('name_key', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('rendered_description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('invite_only', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_web_public', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('history_public_to_subscribers', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('message_retention_days', 'integer')
    .addColumn('date_created', 'integer', (c) => c.notNull())
    .addColumn('creator_id', 'integer', (c) => c.references('users.id'))
    .addColumn('is_archived', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('topics_policy', 'text', (c) => c.notNull().defaultTo('inherit'))
    .addColumn('folder_id', 'integer')
    .addColumn('recipient_id', 'integer')
    .addColumn('settings', 'text', (c) => c.notNull().defaultTo('{}'))
    .execute();
  await db.schema
    .createIndex('channels_realm_name')
    .unique()
    .on('channels')
    .columns(['realm_id', 'name_key'])
    .execute();

  // A conversation: one per channel, one per set of direct-message participants.
  await idColumn(db.schema.createTable('recipients'), dialect)
    .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
    .addColumn('channel_id', 'integer', (c) => c.references('channels.id'))
    // Sorted participant ids joined by commas, for direct messages.
    .addColumn('direct_key', 'text')
    .execute();
  await db.schema
    .createIndex('recipients_channel')
    .unique()
    .on('recipients')
    .column('channel_id')
    .execute();
  await db.schema
    .createIndex('recipients_direct')
    .unique()
    .on('recipients')
    .columns(['realm_id', 'direct_key'])
    .execute();

  await db.schema
    .createTable('direct_participants')
    .addColumn('recipient_id', 'integer', (c) => c.notNull().references('recipients.id'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
    .addPrimaryKeyConstraint('direct_participants_pk', ['recipient_id', 'user_id'])
    .execute();
  await db.schema
    .createIndex('direct_participants_user')
    .on('direct_participants')
    .column('user_id')
    .execute();

  await db.schema
    .createTable('subscriptions')
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('channel_id', 'integer', (c) => c.notNull().references('channels.id'))
    .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('is_muted', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('pin_to_top', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('color', 'text', (c) => c.notNull())
    // null = inherit the user's default
    .addColumn('desktop_notifications', 'integer')
    .addColumn('audible_notifications', 'integer')
    .addColumn('push_notifications', 'integer')
    .addColumn('email_notifications', 'integer')
    .addColumn('wildcard_mentions_notify', 'integer')
    .addPrimaryKeyConstraint('subscriptions_pk', ['user_id', 'channel_id'])
    .execute();
  await db.schema
    .createIndex('subscriptions_channel')
    .on('subscriptions')
    .columns(['channel_id', 'active'])
    .execute();

  await idColumn(db.schema.createTable('messages'), dialect)
    .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
    .addColumn('recipient_id', 'integer', (c) => c.notNull().references('recipients.id'))
    .addColumn('channel_id', 'integer', (c) => c.references('channels.id'))
    .addColumn('sender_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('topic', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('rendered_content', 'text', (c) => c.notNull())
    .addColumn('date_sent', 'integer', (c) => c.notNull())
    .addColumn('sending_client', 'text', (c) => c.notNull().defaultTo('API'))
    .addColumn('is_me_message', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_edit_time', 'integer')
    .addColumn('last_moved_time', 'integer')
    // JSON list, most recent first; null when never edited or moved.
    .addColumn('edit_history', 'text')
    .addColumn('has_link', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('has_image', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('has_attachment', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex('messages_recipient_topic')
    .on('messages')
    .columns(['recipient_id', 'topic', 'id'])
    .execute();
  await db.schema
    .createIndex('messages_realm_id')
    .on('messages')
    .columns(['realm_id', 'id'])
    .execute();
  await db.schema
    .createIndex('messages_sender')
    .on('messages')
    .columns(['sender_id', 'id'])
    .execute();

  // Per-user delivery state: flags as a bitmask (see lib/message-flags.ts).
  await db.schema
    .createTable('user_messages')
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('message_id', 'integer', (c) => c.notNull().references('messages.id'))
    .addColumn('flags', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('user_messages_pk', ['user_id', 'message_id'])
    .execute();
  await db.schema
    .createIndex('user_messages_message')
    .on('user_messages')
    .column('message_id')
    .execute();
  // Unread messages of a user: the read flag is bit 0.
  await db.schema
    .createIndex('user_messages_unread')
    .on('user_messages')
    .columns(['user_id', 'message_id'])
    .where(sql<boolean>`(flags & 1) = 0`)
    .execute();

  await idColumn(db.schema.createTable('reactions'), dialect)
    .addColumn('message_id', 'integer', (c) => c.notNull().references('messages.id'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('emoji_name', 'text', (c) => c.notNull())
    .addColumn('emoji_code', 'text', (c) => c.notNull())
    .addColumn('reaction_type', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('reactions_unique')
    .unique()
    .on('reactions')
    .columns(['message_id', 'user_id', 'reaction_type', 'emoji_code'])
    .execute();

  await db.schema
    .createTable('user_topics')
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('channel_id', 'integer', (c) => c.notNull().references('channels.id'))
    .addColumn('topic_name', 'text', (c) => c.notNull())
    // Lower-cased topic: preferences apply to a topic regardless of case.
    .addColumn('topic_key', 'text', (c) => c.notNull())
    .addColumn('visibility_policy', 'integer', (c) => c.notNull())
    .addColumn('last_updated', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('user_topics_pk', ['user_id', 'channel_id', 'topic_key'])
    .execute();

  await db.schema
    .createTable('alert_words')
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('word', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('alert_words_pk', ['user_id', 'word'])
    .execute();

  await db.schema
    .createTable('default_channels')
    .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
    .addColumn('channel_id', 'integer', (c) => c.notNull().references('channels.id'))
    .addPrimaryKeyConstraint('default_channels_pk', ['realm_id', 'channel_id'])
    .execute();

  await idColumn(db.schema.createTable('default_channel_groups'), dialect)
    .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema
    .createIndex('default_channel_groups_name')
    .unique()
    .on('default_channel_groups')
    .columns(['realm_id', 'name'])
    .execute();
  await db.schema
    .createTable('default_channel_group_channels')
    .addColumn('group_id', 'integer', (c) => c.notNull().references('default_channel_groups.id'))
    .addColumn('channel_id', 'integer', (c) => c.notNull().references('channels.id'))
    .addPrimaryKeyConstraint('default_channel_group_channels_pk', ['group_id', 'channel_id'])
    .execute();
}
