// Register snapshot sections of the messages area: max_message_id, unread_msgs,
// starred_messages and recent_private_conversations.
import type { AppContext } from '../../context.ts';
import { emptyTopicDisplayName } from '../../lib/event-client.ts';
import { readRealmSettings } from '../../lib/realm-settings.ts';
import {
  MAX_UNREAD_MESSAGES,
  RECENT_CONVERSATIONS_MESSAGES,
  summarizeRecentConversations,
  summarizeUnreads,
  topicPolicyKey,
} from '../../lib/unreads.ts';
import * as channelsStore from '../../store/channels.ts';
import * as messagesStore from '../../store/messages.ts';
import * as userTopicsStore from '../../store/user-topics.ts';
import * as usersStore from '../../store/users.ts';
import type { SnapshotRequest, SnapshotSection } from '../initial-state.ts';

type Keys = Record<string, unknown>;

export async function maxMessageIdSection(ctx: AppContext, req: SnapshotRequest): Promise<Keys> {
  return { max_message_id: await usersStore.maxMessageIdForUser(ctx.db, req.actor.user.id) };
}

export async function unreadMessagesSection(ctx: AppContext, req: SnapshotRequest): Promise<Keys> {
  const { user, realm } = req.actor;
  const rows = await messagesStore.listUnreadMessages(ctx.db, user.id, MAX_UNREAD_MESSAGES + 1);
  const truncated = rows.length > MAX_UNREAD_MESSAGES;
  const kept = truncated ? rows.slice(rows.length - MAX_UNREAD_MESSAGES) : rows;
  const subs = (await channelsStore.listUserSubscriptions(ctx.db, user.id)).filter(
    (s) => s.active === 1,
  );
  const policies = await userTopicsStore.listUserTopics(ctx.db, user.id);
  const participants = await messagesStore.listDirectParticipants(
    ctx.db,
    kept.filter((r) => r.channel_id === null).map((r) => r.recipient_id),
  );
  const emptyName = emptyTopicDisplayName(
    readRealmSettings(realm.settings).empty_topic_display_name,
  );
  return {
    unread_msgs: summarizeUnreads(kept, {
      userId: user.id,
      subscribed: new Set(subs.map((s) => s.channel_id)),
      mutedChannels: new Set(subs.filter((s) => s.is_muted === 1).map((s) => s.channel_id)),
      topicPolicies: new Map(
        policies.map((p) => [topicPolicyKey(p.channel_id, p.topic_name), p.visibility_policy]),
      ),
      participants,
      emptyTopicName: req.client.capabilities.empty_topic_name ? null : emptyName,
      truncated,
    }),
  };
}

export async function starredMessagesSection(ctx: AppContext, req: SnapshotRequest): Promise<Keys> {
  return { starred_messages: await messagesStore.listStarredMessageIds(ctx.db, req.actor.user.id) };
}

export async function recentConversationsSection(
  ctx: AppContext,
  req: SnapshotRequest,
): Promise<Keys> {
  const userId = req.actor.user.id;
  const rows = await messagesStore.listRecentDirectMessages(
    ctx.db,
    userId,
    RECENT_CONVERSATIONS_MESSAGES,
  );
  const participants = await messagesStore.listDirectParticipants(
    ctx.db,
    rows.map((r) => r.recipient_id),
  );
  return {
    recent_private_conversations: summarizeRecentConversations(rows, participants, userId),
  };
}

/** A section fetched when every one of these event types is wanted. */
const wants =
  (...types: string[]) =>
  (req: SnapshotRequest): boolean =>
    types.every((t) => req.fetch === null || req.fetch.includes(t));

export const MESSAGE_SECTIONS: SnapshotSection[] = [
  { include: wants('message'), build: maxMessageIdSection },
  { include: wants('message', 'update_message_flags'), build: unreadMessagesSection },
  { include: wants('starred_messages'), build: starredMessagesSection },
  { include: wants('recent_private_conversations'), build: recentConversationsSection },
];
