// Deleting messages, and reading a message's edit history.
//
// Deletion: the organization's can_delete_any_message_group or the channel's; otherwise
// one's own messages (and one's bots'), with can_delete_own_message_group (organization or
// channel) and within message_content_delete_limit_seconds.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { badRequest } from '../lib/errors.ts';
import {
  historySnapshots,
  isMoveEntry,
  readEditHistory,
  type HistorySnapshot,
} from '../lib/messages.ts';
import { unixNow } from '../infra/clock.ts';
import * as messagesStore from '../store/messages.ts';
import type { ChannelRow, MessageRow } from '../store/schema.ts';
import * as usersStore from '../store/users.ts';
import { groupIdsOf, inChannelGroup } from './channel-access.ts';
import { accessMessage, messageAudience } from './message-access.ts';
import { realmMessageSettings } from './message-present.ts';
import { announceFirstMessageIds, firstMessageIds } from './messages.ts';
import { accessCurrentActor, accessRealmSettings, hasRealmPermission } from './permissions.ts';
import { withTransaction, type Work } from './transaction.ts';

const cannotDelete = () => badRequest("You don't have permission to delete this message");

async function checkCanDelete(
  ctx: AppContext,
  work: Work,
  actor: Actor,
  message: MessageRow,
  channel: ChannelRow | null,
): Promise<void> {
  const db = work.db;
  const groupIds = await groupIdsOf(db, actor.user);
  const inChannel = (setting: 'can_delete_any_message_group' | 'can_delete_own_message_group') =>
    channel !== null && inChannelGroup(channel, setting, groupIds);
  if (
    (await hasRealmPermission(db, actor.user, 'can_delete_any_message_group')) ||
    inChannel('can_delete_any_message_group')
  ) {
    return;
  }
  if (message.sender_id !== actor.user.id) {
    const sender = await usersStore.getUserById(db, actor.realm.id, message.sender_id);
    if (sender?.bot_owner_id !== actor.user.id) throw cannotDelete();
  }
  if (
    !(await hasRealmPermission(db, actor.user, 'can_delete_own_message_group')) &&
    !inChannel('can_delete_own_message_group')
  ) {
    throw cannotDelete();
  }
  const limit = (await accessRealmSettings(db, actor.realm.id))
    .message_content_delete_limit_seconds;
  if (typeof limit === 'number' && unixNow(ctx.clock) - message.date_sent > limit) {
    throw badRequest('The time limit for deleting this message has passed');
  }
}

/**
 * Delete messages of one conversation (one channel topic, or one direct-message
 * conversation) and tell everyone who could see them, and the deleting user.
 */
export async function doDeleteMessages(
  work: Work,
  actor: Actor,
  channel: ChannelRow | null,
  messages: MessageRow[],
): Promise<void> {
  if (messages.length === 0) return;
  const firstBefore = channel ? await firstMessageIds(work.db, [channel]) : null;
  const sorted = [...messages].sort((a, b) => a.id - b.id);
  const ids = sorted.map((m) => m.id);
  const audience = await messageAudience(work.db, channel, ids);
  await messagesStore.deleteMessages(work.db, ids);
  work.emitOnCommit(
    {
      type: 'delete_message',
      message_ids: ids,
      message_type: channel ? 'stream' : 'private',
      // A topic's name is its newest message's (topics match regardless of case).
      ...(channel ? { stream_id: channel.id, topic: sorted[sorted.length - 1].topic } : {}),
    },
    [...audience, actor.user.id],
  );
  if (channel) await announceFirstMessageIds(work, actor.realm, [channel], firstBefore!);
}

export async function deleteMessage(ctx: AppContext, actor: Actor, id: number): Promise<void> {
  await withTransaction(ctx, actor.realm.id, async (work) => {
    // Checked inside: a deactivation or a change of the actor's role committed since counts.
    const me = await accessCurrentActor(work.db, actor);
    const { message, channel } = await accessMessage(work.db, me, id, { modifying: true });
    await checkCanDelete(ctx, work, me, message, channel);
    await doDeleteMessages(work, me, channel, [message]);
  });
}

/** GET /messages/{id}/history: snapshots oldest first, as the organization lets members see. */
export async function getMessageHistory(
  ctx: AppContext,
  actor: Actor,
  id: number,
  allowEmptyTopicName: boolean,
): Promise<HistorySnapshot[]> {
  const settings = realmMessageSettings(actor.realm);
  if (settings.editHistoryPolicy === 'none') {
    throw badRequest('Message edit history is disabled in this organization');
  }
  const { message } = await accessMessage(ctx.db, actor, id);
  let history = readEditHistory(message.edit_history);
  if (settings.editHistoryPolicy === 'moves') {
    history = history
      .filter(isMoveEntry)
      .map(({ prev_content: _c, prev_rendered_content: _r, ...e }) => e);
  }
  const snapshots = historySnapshots(message, message, history);
  if (allowEmptyTopicName || message.channel_id === null) return snapshots;
  const shown = (t: string) => (t === '' ? settings.emptyTopicName : t);
  return snapshots.map((s) => ({
    ...s,
    topic: shown(s.topic),
    ...(s.prev_topic !== undefined ? { prev_topic: shown(s.prev_topic) } : {}),
  }));
}
