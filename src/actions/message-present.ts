// Messages as a viewer sees them: the rows a presentation needs, loaded in bulk, and the
// viewer's options (content form, avatars, empty topic, edit history, inaccessible senders).
import type { AppContext } from '../context.ts';
import { emptyTopicDisplayName } from '../lib/event-client.ts';
import { renderTopicLinks } from '../lib/markdown/index.ts';
import { normalizeTopic } from '../lib/messages.ts';
import {
  presentFlags,
  presentMessage,
  type EditHistoryPolicy,
  type MessageForPresenting,
  type MessagePresentOptions,
  type SenderPlaceholder,
} from '../lib/presenters/messages.ts';
import { readRealmSettings } from '../lib/realm-settings.ts';
import * as channelsStore from '../store/channels.ts';
import type { Q } from '../store/db.ts';
import * as messagesStore from '../store/messages.ts';
import type { MessageRow, RealmRow, UserRow } from '../store/schema.ts';
import * as usersStore from '../store/users.ts';
import { accessibleUserIds } from './user-access.ts';
import { presentInaccessibleUserFor } from './user-directory.ts';

export interface ViewOptions {
  applyMarkdown: boolean;
  clientGravatar: boolean;
  allowEmptyTopicName: boolean;
  /** Add rendered_content (the outgoing-webhook shape). */
  includeRenderedContent?: boolean;
}

/** The empty-topic display name and edit-history policy of the organization. */
export function realmMessageSettings(realm: RealmRow): {
  emptyTopicName: string;
  editHistoryPolicy: EditHistoryPolicy;
  topicsPolicy: string;
} {
  const s = readRealmSettings(realm.settings);
  return {
    emptyTopicName: emptyTopicDisplayName(s.empty_topic_display_name),
    editHistoryPolicy: s.message_edit_history_visibility_policy as EditHistoryPolicy,
    topicsPolicy: String(s.topics_policy),
  };
}

/** The topic a client named: the organization's display name for the empty topic stands for it. */
export function topicNamedIn(realm: RealmRow, named: string): string {
  return normalizeTopic(named, realmMessageSettings(realm).emptyTopicName);
}

/**
 * A channel message just inserted, from rows its sender's transaction already holds: it has
 * no reactions yet, and its sender and channel were read in the same transaction.
 */
export function newChannelMessageForPresenting(
  row: MessageRow,
  sender: UserRow,
  channelName: string,
): MessageForPresenting {
  return {
    row,
    sender,
    recipient: { channelName },
    reactions: [],
    topicLinks: renderTopicLinks(row.topic),
  };
}

/** Everything the presenter needs for these messages, in a few queries. */
export async function loadForPresenting(
  db: Q,
  realmId: number,
  rows: MessageRow[],
): Promise<MessageForPresenting[]> {
  const channelIds = [...new Set(rows.map((r) => r.channel_id).filter((c) => c !== null))];
  const directIds = [
    ...new Set(rows.filter((r) => r.channel_id === null).map((r) => r.recipient_id)),
  ];
  const [channels, participants, reactions] = await Promise.all([
    channelsStore.listChannelsByIds(db, realmId, channelIds),
    messagesStore.listDirectParticipants(db, directIds),
    messagesStore.listReactions(
      db,
      rows.map((r) => r.id),
    ),
  ]);
  const userIds = new Set(rows.map((r) => r.sender_id));
  for (const ids of participants.values()) for (const id of ids) userIds.add(id);
  const users = new Map(
    (await usersStore.listUsersByIds(db, realmId, [...userIds])).map((u) => [u.id, u]),
  );
  const channelNames = new Map(channels.map((c) => [c.id, c.name]));
  return rows.map((row) => ({
    row,
    sender: users.get(row.sender_id)!,
    recipient:
      row.channel_id !== null
        ? { channelName: channelNames.get(row.channel_id) ?? '' }
        : {
            participants: (participants.get(row.recipient_id) ?? [])
              .map((id) => users.get(id))
              .filter((u): u is UserRow => u !== undefined),
          },
    reactions: reactions.filter((r) => r.message_id === row.id),
    topicLinks: row.channel_id !== null ? renderTopicLinks(row.topic) : [],
  }));
}

export function presentOptions(
  realm: RealmRow,
  viewer: UserRow | null,
  view: ViewOptions,
): MessagePresentOptions {
  const settings = realmMessageSettings(realm);
  return {
    viewer,
    applyMarkdown: view.applyMarkdown,
    clientGravatar: view.clientGravatar,
    allowEmptyTopicName: view.allowEmptyTopicName,
    emptyTopicDisplayName: settings.emptyTopicName,
    editHistoryPolicy: settings.editHistoryPolicy,
    realmStringId: realm.string_id,
    includeRenderedContent: view.includeRenderedContent,
  };
}

/** What a viewer who may not access the sender sees instead of them. */
export function senderPlaceholder(
  ctx: AppContext,
  realm: RealmRow,
  senderId: number,
): SenderPlaceholder {
  const p = presentInaccessibleUserFor(ctx, realm, senderId);
  return {
    full_name: p.full_name as string,
    email: p.email as string,
    avatar_url: p.avatar_url as string,
  };
}

/** Messages the viewer may read, presented with their flags, in id order. */
export async function presentMessagesFor(
  ctx: AppContext,
  db: Q,
  realm: RealmRow,
  viewer: UserRow,
  items: Array<{ message: MessageRow; flags: number | undefined }>,
  view: ViewOptions,
): Promise<Record<string, unknown>[]> {
  const loaded = await loadForPresenting(
    db,
    realm.id,
    items.map((i) => i.message),
  );
  const base = presentOptions(realm, viewer, view);
  const accessible = await accessibleUserIds(db, realm, viewer);
  return loaded.map((m, i) => {
    const hidden = accessible !== null && m.sender.is_bot === 0 && !accessible.has(m.sender.id);
    const opts = hidden
      ? { ...base, senderPlaceholder: senderPlaceholder(ctx, realm, m.sender.id) }
      : base;
    return { ...presentMessage(m, opts), flags: presentFlags(items[i].flags) };
  });
}

/**
 * The message-listing shape an outgoing webhook carries: Markdown in content, the HTML in
 * rendered_content, avatar URLs in full, the empty topic as is; no flags.
 */
export async function presentMessageForWebhook(
  ctx: AppContext,
  db: Q,
  realm: RealmRow,
  bot: UserRow,
  message: MessageRow,
): Promise<Record<string, unknown>> {
  const [presented] = await presentMessagesFor(ctx, db, realm, bot, [{ message, flags: 0 }], {
    applyMarkdown: false,
    clientGravatar: false,
    allowEmptyTopicName: true,
    includeRenderedContent: true,
  });
  const { flags: _flags, ...rest } = presented;
  return rest;
}
