// user_messages on SQLite keeps its rows in its primary key (migration 0016): the rebuild
// keeps every row and both indexes, and the reads by the key go to that one B-tree.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openSqlite } from '../../src/store/db.ts';
import { migrateToLatest, migrateUpTo } from '../../src/store/migrations/index.ts';

test('migration 0016 rebuilds user_messages without a rowid and keeps its rows', async () => {
  const store = openSqlite({ source: ':memory:' });
  try {
    await migrateUpTo(store.db as never, 'sqlite', '0015_group_read_version');
    const raw = store.sqlite!;
    // One row of each table the rows refer to, every required column given a plain value.
    for (const table of ['realms', 'users', 'channels', 'recipients', 'messages']) {
      const columns = raw.prepare(`PRAGMA table_info("${table}")`).all() as Array<{
        name: string;
        type: string;
        notnull: number;
        dflt_value: unknown;
        pk: number;
      }>;
      const given = columns.filter((c) => c.pk === 0 && c.notnull === 1 && c.dflt_value === null);
      const names = ['id', ...given.map((c) => c.name)];
      const insert = raw.prepare(
        `INSERT INTO "${table}" (${names.map((n) => `"${n}"`).join(', ')}) VALUES (${names.map(() => '?').join(', ')})`,
      );
      for (const id of table === 'users' || table === 'messages' ? [1, 2, 3] : [1]) {
        insert.run(id, ...given.map((c) => (/int/i.test(c.type) ? 1 : `${table} ${c.name} ${id}`)));
      }
    }
    const rows = [
      { user_id: 1, message_id: 1, flags: 1 },
      { user_id: 2, message_id: 1, flags: 0 },
      { user_id: 3, message_id: 2, flags: 8 },
      { user_id: 1, message_id: 3, flags: 0 },
    ];
    for (const r of rows) {
      raw
        .prepare('INSERT INTO user_messages (user_id, message_id, flags) VALUES (?, ?, ?)')
        .run(r.user_id, r.message_id, r.flags);
    }
    assert.deepEqual(raw.prepare('PRAGMA foreign_key_check').all(), []);

    assert.deepEqual(await migrateToLatest(store.db as never, 'sqlite'), [
      '0016_user_messages_without_rowid',
    ]);
    const all = 'SELECT user_id, message_id, flags FROM user_messages ORDER BY user_id, message_id';
    assert.deepEqual(
      raw.prepare(all).all(),
      rows.toSorted((a, b) => a.user_id - b.user_id),
    );
    assert.throws(() => raw.prepare('SELECT rowid FROM user_messages').all(), /no such column/);
    const indexes = raw
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'user_messages'`)
      .pluck()
      .all();
    assert.deepEqual(indexes.toSorted(), ['user_messages_message', 'user_messages_unread']);
    assert.deepEqual(raw.prepare('PRAGMA foreign_key_check').all(), []);
    // The keys still hold: a row twice, or one for a message that does not exist, is refused.
    const insert = raw.prepare('INSERT INTO user_messages (user_id, message_id) VALUES (?, ?)');
    assert.throws(() => insert.run(2, 1), /UNIQUE constraint failed/);
    assert.throws(() => insert.run(2, 99), /FOREIGN KEY constraint failed/);
    const plan = (query: string, ...args: number[]) =>
      (raw.prepare(`EXPLAIN QUERY PLAN ${query}`).all(...args) as Array<{ detail: string }>)
        .map((p) => p.detail)
        .join('; ');
    assert.match(
      plan('SELECT flags FROM user_messages WHERE user_id = ? AND message_id = ?', 1, 1),
      /SEARCH user_messages USING PRIMARY KEY \(user_id=\? AND message_id=\?\)/,
    );
    assert.match(
      plan('SELECT user_id FROM user_messages WHERE message_id = ?', 1),
      /USING COVERING INDEX user_messages_message \(message_id=\?\)/,
    );
    assert.match(
      plan('SELECT message_id FROM user_messages WHERE user_id = ? AND (flags & 1) = 0', 2),
      /USING COVERING INDEX user_messages_unread \(user_id=\?\)/,
    );
    // Register's read of a user's unread messages (store/messages.ts, listUnreadMessages).
    assert.match(
      plan(
        `SELECT um.message_id, um.flags, m.channel_id, m.topic, m.recipient_id, m.sender_id
         FROM user_messages AS um JOIN messages AS m ON m.id = um.message_id
         WHERE um.user_id = ? AND (um.flags & 1) = 0 ORDER BY um.message_id DESC LIMIT ?`,
        2,
        50,
      ),
      /SEARCH um USING COVERING INDEX user_messages_unread \(user_id=\?\)/,
    );
  } finally {
    await store.close();
  }
});
