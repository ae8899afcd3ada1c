// Topics of a channel: listing them, and deleting one (every message in it).
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { unixNow } from '../infra/clock.ts';
import * as messagesStore from '../store/messages.ts';
import { accessChannelById, loadChannelAccessById } from './channel-access.ts';
import { doDeleteMessages } from './message-delete.ts';
import { realmMessageSettings, topicNamedIn } from './message-present.ts';
import { accessCurrentAdmin, checkAdmin } from './permissions.ts';
import { withTransaction } from './transaction.ts';

/** Messages deleted per transaction when deleting a topic. */
export const DELETE_TOPIC_BATCH = 500;
/** How long one request keeps deleting before answering complete=false. */
export const DELETE_TOPIC_BUDGET_SECONDS = 50;

/**
 * The topics of a channel the user may read, newest first with their newest message id.
 * Without shared history, only topics of messages the user received.
 */
export async function listTopics(
  ctx: AppContext,
  actor: Actor,
  channelId: number,
  allowEmptyTopicName: boolean,
): Promise<Array<{ max_id: number; name: string }>> {
  const { channel } = await accessChannelById(ctx, actor, channelId, {
    content: true,
    allowArchived: true,
  });
  const topics = await messagesStore.listChannelTopics(
    ctx.db,
    channel.id,
    channel.history_public_to_subscribers === 1 ? null : actor.user.id,
  );
  const emptyName = realmMessageSettings(actor.realm).emptyTopicName;
  return topics.map((t) => ({
    max_id: t.max_id,
    name: t.name === '' && !allowEmptyTopicName ? emptyName : t.name,
  }));
}

/**
 * Delete every message of a topic the administrator may read, newest first in batches,
 * each batch its own transaction; a request that runs out of time answers complete=false
 * and the client repeats it.
 */
export async function deleteTopic(
  ctx: AppContext,
  actor: Actor,
  channelId: number,
  topicName: string,
): Promise<{ complete: boolean }> {
  checkAdmin(actor);
  const { channel } = await accessChannelById(ctx, actor, channelId, { content: true });
  const deadline = unixNow(ctx.clock) + DELETE_TOPIC_BUDGET_SECONDS;
  for (;;) {
    const more = await withTransaction(ctx, actor.realm.id, async (work) => {
      // Each batch checks the actor again: one no longer an administrator deletes no more.
      const me = await accessCurrentAdmin(work.db, actor);
      const current = (await loadChannelAccessById(work.db, me, channel.id, { content: true }))
        .channel;
      // Named as the organization names the empty topic now.
      const topic = topicNamedIn(me.realm, topicName);
      const batch = await messagesStore.listTopicMessages(work.db, current.id, topic, {
        onlyWithRowOf: current.history_public_to_subscribers === 1 ? undefined : me.user.id,
        newestFirst: true,
        limit: DELETE_TOPIC_BATCH,
      });
      const rows = await messagesStore.listMessagesByIds(
        work.db,
        actor.realm.id,
        batch.map((b) => b.id),
      );
      await doDeleteMessages(work, me, current, rows);
      return batch.length === DELETE_TOPIC_BATCH;
    });
    if (!more) return { complete: true };
    if (unixNow(ctx.clock) >= deadline) return { complete: false };
  }
}
