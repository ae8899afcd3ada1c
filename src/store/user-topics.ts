// A user's per-topic preferences (visibility policies). A topic is matched regardless of
// case through topic_key, the lower-cased name.
import { compiledQuery } from './compiled.ts';
import type { Q } from './db.ts';
import type { UserTopicRow } from './schema.ts';

export async function getUserTopic(
  db: Q,
  userId: number,
  channelId: number,
  topicKey: string,
): Promise<UserTopicRow | undefined> {
  return db
    .selectFrom('user_topics')
    .selectAll()
    .where('user_id', '=', userId)
    .where('channel_id', '=', channelId)
    .where('topic_key', '=', topicKey)
    .executeTakeFirst();
}

/** Insert or replace the user's preference for the topic. */
export async function upsertUserTopic(db: Q, row: UserTopicRow): Promise<void> {
  const { topic_name, visibility_policy, last_updated } = row;
  await db
    .insertInto('user_topics')
    .values(row)
    .onConflict((oc) =>
      oc
        .columns(['user_id', 'channel_id', 'topic_key'])
        .doUpdateSet({ topic_name, visibility_policy, last_updated }),
    )
    .execute();
}

export async function deleteUserTopic(
  db: Q,
  userId: number,
  channelId: number,
  topicKey: string,
): Promise<void> {
  await db
    .deleteFrom('user_topics')
    .where('user_id', '=', userId)
    .where('channel_id', '=', channelId)
    .where('topic_key', '=', topicKey)
    .execute();
}

// Sorted here rather than in SQL: the databases' collations order text differently.
const byChannelAndTopic = (
  a: { channel_id: number; topic_key: string },
  b: { channel_id: number; topic_key: string },
): number =>
  a.channel_id - b.channel_id ||
  (a.topic_key < b.topic_key ? -1 : a.topic_key > b.topic_key ? 1 : 0);

/** Every preference of the user, by channel and topic. */
export async function listUserTopics(db: Q, userId: number): Promise<UserTopicRow[]> {
  return (await topicsOfUser.all(db, userId)).sort(byChannelAndTopic);
}

const topicsOfUser = compiledQuery(1, (db, userId: number) =>
  db.selectFrom('user_topics').selectAll().where('user_id', '=', userId),
);

/** The user's muted topics with their channel's name, as the legacy muted_topics list has them. */
export async function listMutedTopics(
  db: Q,
  userId: number,
): Promise<Array<{ channel_name: string; topic_name: string; last_updated: number }>> {
  const rows = await db
    .selectFrom('user_topics as ut')
    .innerJoin('channels as c', 'c.id', 'ut.channel_id')
    .select([
      'ut.channel_id',
      'ut.topic_key',
      'c.name as channel_name',
      'ut.topic_name',
      'ut.last_updated',
    ])
    .where('ut.user_id', '=', userId)
    .where('ut.visibility_policy', '=', 1)
    .execute();
  return rows.sort(byChannelAndTopic).map(({ channel_name, topic_name, last_updated }) => ({
    channel_name,
    topic_name,
    last_updated,
  }));
}
