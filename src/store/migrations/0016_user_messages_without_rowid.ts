// SQLite only: user_messages keeps its rows in its primary key's B-tree (WITHOUT ROWID).
// As a rowid table each row lived twice, in the table by a hidden rowid and in the index of
// its primary key (user_id, message_id), and every read by that key went through both. A
// send writes one row for each recipient, so a message to a channel of 1,000 writes 1,000
// entries fewer into the table's B-trees (a scratch loop: 1,000 rows a transaction 5.7-6.0 ->
// 4.1-4.4 ms; docs/performance.md, what we changed, session 51). PostgreSQL tables have no
// rowid.
//
// SQLite cannot change this in place: the table is rebuilt, its rows copied, in one
// transaction, since Kysely runs SQLite's migrations without one. No other table refers to
// user_messages, so dropping the old one checks no foreign key.
import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from './helpers.ts';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  if (dialect !== 'sqlite') return;
  await db.transaction().execute(async (trx) => {
    await sql`CREATE TABLE user_messages_by_key (
      user_id integer NOT NULL REFERENCES users (id),
      message_id integer NOT NULL REFERENCES messages (id),
      flags integer NOT NULL DEFAULT 0,
      CONSTRAINT user_messages_pk PRIMARY KEY (user_id, message_id)
    ) WITHOUT ROWID`.execute(trx);
    await sql`INSERT INTO user_messages_by_key (user_id, message_id, flags)
      SELECT user_id, message_id, flags FROM user_messages`.execute(trx);
    await sql`DROP TABLE user_messages`.execute(trx);
    await sql`ALTER TABLE user_messages_by_key RENAME TO user_messages`.execute(trx);
    // The indexes of migration 0002, which went with the old table. The unread rows' index
    // now holds the flags too: without them the primary key, which holds every column, looked
    // cheaper to SQLite's planner than the index plus a look into the key, and a user's unread
    // messages were read by walking all of their messages, read or not.
    await sql`CREATE INDEX user_messages_message ON user_messages (message_id)`.execute(trx);
    await sql`CREATE INDEX user_messages_unread ON user_messages (user_id, message_id, flags)
      WHERE (flags & 1) = 0`.execute(trx);
  });
}
