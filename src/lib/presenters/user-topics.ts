// Topic preferences as the API shows them: user_topics entries and the legacy
// muted_topics tuples.
import type { UserTopicRow } from '../../store/schema.ts';

/**
 * One user_topics entry. emptyTopicName: what a client without empty_topic_name sees for
 * the empty topic, or null to keep "".
 */
export function presentUserTopic(
  row: Pick<UserTopicRow, 'channel_id' | 'topic_name' | 'last_updated' | 'visibility_policy'>,
  emptyTopicName: string | null,
): Record<string, unknown> {
  return {
    stream_id: row.channel_id,
    topic_name: row.topic_name === '' && emptyTopicName !== null ? emptyTopicName : row.topic_name,
    last_updated: row.last_updated,
    visibility_policy: row.visibility_policy,
  };
}

/** The legacy muted_topics list: [channel name, topic, muted at] per muted topic. */
export function presentMutedTopics(
  rows: Array<{ channel_name: string; topic_name: string; last_updated: number }>,
): Array<[string, string, number]> {
  return rows.map((r) => [r.channel_name, r.topic_name, r.last_updated]);
}
