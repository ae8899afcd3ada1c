// The reads of one channel's messages (its first message on every send and in every channel
// object, its topics, a topic's messages and participants) start from the channel's index:
// none of them walks the messages table, whose size is the whole organization's history.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { firstMessageIds, channelHasNamedTopics } from '../../src/store/channels.ts';
import { openSqlite } from '../../src/store/db.ts';
import {
  listChannelTopics,
  listTopicMessages,
  listTopicParticipants,
  minChannelMessageId,
} from '../../src/store/messages.ts';
import { migrateToLatest } from '../../src/store/migrations/index.ts';

test('every read of one channel’s messages finds them through an index', async () => {
  const store = openSqlite({ source: ':memory:' });
  try {
    await migrateToLatest(store.db as never, 'sqlite');
    const raw = store.sqlite!;
    // Each statement is prepared once (then reused): its text is seen here the first time.
    const prepared: string[] = [];
    const prepare = raw.prepare.bind(raw);
    raw.prepare = ((source: string) => {
      prepared.push(source);
      return prepare(source);
    }) as typeof raw.prepare;
    const reads: Array<[string, () => Promise<unknown>]> = [
      ['first message', () => minChannelMessageId(store.db, 1)],
      ['first messages', () => firstMessageIds(store.db, 1, [1, 2, 3])],
      // Past 20 channels, the organization's every channel (a register presents them all).
      [
        'first messages of many channels',
        () =>
          firstMessageIds(
            store.db,
            1,
            Array.from({ length: 25 }, (_, i) => i + 1),
          ),
      ],
      ['named topics', () => channelHasNamedTopics(store.db, 1)],
      ['topics', () => listChannelTopics(store.db, 1, null)],
      ['topics of a user', () => listChannelTopics(store.db, 1, 7)],
      ['topic messages', () => listTopicMessages(store.db, 1, 'a topic', { limit: 10 })],
      [
        'topic messages of a user',
        () => listTopicMessages(store.db, 1, 'a topic', { fromId: 5, onlyWithRowOf: 7 }),
      ],
      ['topic participants', () => listTopicParticipants(store.db, 1, 'a topic')],
    ];
    const walking: string[] = [];
    for (const [name, read] of reads) {
      prepared.length = 0;
      await read();
      const statements = prepared.filter((s) => /\bfrom\s+"messages"/i.test(s));
      assert.ok(statements.length > 0, `${name}: reads messages`);
      for (const sql of statements) {
        const parameters = Array.from(sql.matchAll(/\?/g), () => 1);
        const plan = (
          prepare(`EXPLAIN QUERY PLAN ${sql}`).all(parameters) as Array<{ detail: string }>
        ).map((row) => row.detail);
        // SQLite names the table or its alias. A SCAN reads all of it (through an index too);
        // a SEARCH without an index walks the primary key from one end.
        const walks = plan.filter(
          (d) => /^SCAN (messages|m)\b/.test(d) || /^SEARCH (messages|m)\b(?!.* USING )/.test(d),
        );
        if (walks.length > 0) walking.push(`${name}: ${walks.join(', ')}`);
      }
    }
    assert.deepEqual(walking, []);
  } finally {
    await store.close();
  }
});
