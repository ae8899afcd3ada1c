// Editing a message's content, and moving messages to another topic or channel.
//
// Content: only the sender, while the organization allows editing, within its time limit.
// Topic moves: the organization's can_move_messages_between_topics_group or the channel's
// can_move_messages_within_channel_group (resolving: can_resolve_topics_group); channel
// moves: can_move_messages_between_channels_group or the channel's
// can_move_messages_out_of_channel_group. Moderators have no move time limits.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { badRequest, JsonableError } from '../lib/errors.ts';
import { renderTopicLinks } from '../lib/markdown/index.ts';
import { FLAG_BITS, flagsToNames } from '../lib/message-flags.ts';
import {
  checkTopicAllowed,
  isResolveOnlyChange,
  normalizeContent,
  normalizeTopic,
  readEditHistory,
  type EditHistoryEntry,
} from '../lib/messages.ts';
import { type RealmSettingName, type RealmSettings } from '../lib/realm-settings.ts';
import { isModerator } from '../lib/roles.ts';
import { unixNow } from '../infra/clock.ts';
import * as channelsStore from '../store/channels.ts';
import type { Q } from '../store/db.ts';
import * as messagesStore from '../store/messages.ts';
import type { ChannelRow, MessageRow } from '../store/schema.ts';
import * as usersStore from '../store/users.ts';
import {
  getChannelAccess,
  groupIdsOf,
  inChannelGroup,
  loadChannelAccessById,
} from './channel-access.ts';
import { accessMessage, messageAudience } from './message-access.ts';
import { realmMessageSettings } from './message-present.ts';
import { RENDERING_FLAG_BITS, renderMessage, renderingFlags } from './message-render.ts';
import { checkCanPost, checkWildcardMentions } from './message-destinations.ts';
import { announceFirstMessageIds, firstMessageIds } from './messages.ts';
import { accessCurrentActor, accessRealmSettings, hasRealmPermission } from './permissions.ts';
import { withTransaction, type Work } from './transaction.ts';

export type PropagateMode = 'change_one' | 'change_later' | 'change_all';

export interface UpdateMessageParams {
  content?: string;
  topic?: string;
  streamId?: number;
  propagateMode: PropagateMode;
}

/** Clients allow editing a little past the limit; the server allows for that. */
const EDIT_LIMIT_BUFFER_SECONDS = 20;

function limitSeconds(realmSettings: RealmSettings, name: RealmSettingName): number | null {
  const v = realmSettings[name];
  return typeof v === 'number' ? v : null;
}

/** Whether the user is in the organization's group for the setting, or the channel's. */
async function mayByGroups(
  db: Q,
  actor: Actor,
  channel: ChannelRow,
  realmSetting: RealmSettingName,
  channelSetting: Parameters<typeof inChannelGroup>[1],
): Promise<boolean> {
  if (await hasRealmPermission(db, actor.user, realmSetting)) return true;
  return inChannelGroup(channel, channelSetting, await groupIdsOf(db, actor.user));
}

/** Whether the actor may edit the message's content now (bufferSeconds past the limit). */
export function checkContentEditable(
  actor: Actor,
  message: MessageRow,
  settings: RealmSettings,
  now: number,
  bufferSeconds = EDIT_LIMIT_BUFFER_SECONDS,
): void {
  if (settings.allow_message_editing !== true) {
    throw badRequest('Your organization has turned off message editing');
  }
  if (message.sender_id !== actor.user.id) {
    throw badRequest("You don't have permission to edit this message");
  }
  const limit = limitSeconds(settings, 'message_content_edit_limit_seconds');
  if (limit !== null && now - message.date_sent > limit + bufferSeconds) {
    throw badRequest('The time limit for editing this message has passed');
  }
}

/** The messages a move takes along: the one, it and later ones, or the whole topic. */
async function messagesToMove(
  db: Q,
  actor: Actor,
  message: MessageRow,
  channel: ChannelRow,
  mode: PropagateMode,
): Promise<Array<{ id: number; date_sent: number }>> {
  if (mode === 'change_one') return [{ id: message.id, date_sent: message.date_sent }];
  // Without shared history, only the messages the mover received can move.
  return messagesStore.listTopicMessages(db, channel.id, message.topic, {
    fromId: mode === 'change_later' ? message.id : undefined,
    onlyWithRowOf: channel.history_public_to_subscribers === 1 ? undefined : actor.user.id,
  });
}

interface EditRequest {
  newContent: string | undefined;
  newTopic: string | undefined;
  newStreamId: number | undefined;
}

/** What the request really changes; refuses requests that make no sense. */
function checkEditRequest(
  message: MessageRow,
  channel: ChannelRow | null,
  p: UpdateMessageParams,
  emptyTopicName: string,
): EditRequest {
  if (p.content === undefined && p.topic === undefined && p.streamId === undefined) {
    throw badRequest('Nothing to change');
  }
  if (!channel) {
    if (p.streamId !== undefined) throw badRequest('Direct messages cannot be moved to channels.');
    if (p.topic !== undefined) throw badRequest('Direct messages cannot have topics.');
  }
  if (p.propagateMode !== 'change_one' && p.topic === undefined && p.streamId === undefined) {
    throw badRequest('Invalid propagate_mode without topic edit');
  }
  if (p.content !== undefined && p.streamId !== undefined) {
    throw badRequest('Cannot change message content while changing channel');
  }
  const topic = p.topic === undefined ? undefined : normalizeTopic(p.topic, emptyTopicName);
  // Emptied content reads "(deleted)", as in the reference server.
  const content =
    p.content === undefined
      ? undefined
      : normalizeContent(p.content.trim() === '' ? '(deleted)' : p.content);
  const out = {
    newContent: content === message.content ? undefined : content,
    newTopic: topic === message.topic ? undefined : topic,
    newStreamId: p.streamId === message.channel_id ? undefined : p.streamId,
  };
  if (Object.values(out).every((v) => v === undefined)) throw badRequest('Nothing to change');
  return out;
}

interface MovePlan {
  target: ChannelRow | null;
  moved: Array<{ id: number; date_sent: number }>;
  resolveOnly: boolean;
}

/** Permissions, time limits and destination of a move; the messages it takes along. */
async function planMove(
  db: Q,
  actor: Actor,
  message: MessageRow,
  channel: ChannelRow,
  req: EditRequest,
  mode: PropagateMode,
  now: number,
): Promise<MovePlan> {
  const settings = await accessRealmSettings(db, actor.realm.id);
  const names = realmMessageSettings(actor.realm);
  const resolveOnly =
    req.newStreamId === undefined && isResolveOnlyChange(message.topic, req.newTopic!);
  const limits: number[] = [];
  const checkLimit = (name: RealmSettingName, msg: string) => {
    const limit = limitSeconds(settings, name);
    if (limit === null || isModerator(actor.user)) return;
    if (now - message.date_sent > limit + EDIT_LIMIT_BUFFER_SECONDS) throw badRequest(msg);
    limits.push(limit);
  };
  if (req.newTopic !== undefined && resolveOnly) {
    if (
      !(await mayByGroups(
        db,
        actor,
        channel,
        'can_resolve_topics_group',
        'can_resolve_topics_group',
      ))
    ) {
      throw badRequest("You don't have permission to resolve topics in this channel.");
    }
  } else if (req.newTopic !== undefined) {
    const may = await mayByGroups(
      db,
      actor,
      channel,
      'can_move_messages_between_topics_group',
      'can_move_messages_within_channel_group',
    );
    if (!may) throw badRequest("You don't have permission to edit this message");
    checkLimit(
      'move_messages_within_stream_limit_seconds',
      "The time limit for editing this message's topic has passed.",
    );
  }
  let target: ChannelRow | null = null;
  if (req.newStreamId !== undefined) {
    const may = await mayByGroups(
      db,
      actor,
      channel,
      'can_move_messages_between_channels_group',
      'can_move_messages_out_of_channel_group',
    );
    if (!may) throw badRequest("You don't have permission to move this message");
    checkLimit(
      'move_messages_between_streams_limit_seconds',
      "The time limit for editing this message's channel has passed",
    );
    target = (await loadChannelAccessById(db, actor, req.newStreamId, { content: true })).channel;
    await checkCanPost(db, actor.user, target);
  }
  checkTopicAllowed(
    req.newTopic ?? message.topic,
    (target ?? channel).topics_policy,
    names.topicsPolicy,
    names.emptyTopicName,
  );
  const moved = await messagesToMove(db, actor, message, channel, mode);
  if (mode === 'change_all' && limits.length > 0) {
    checkWholeTopicMovable(moved, now - Math.min(...limits) - EDIT_LIMIT_BUFFER_SECONDS);
  }
  return { target, moved, resolveOnly };
}

export async function updateMessage(
  ctx: AppContext,
  actor: Actor,
  messageId: number,
  p: UpdateMessageParams,
): Promise<{ detached_uploads: unknown[] }> {
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const db = work.db;
    // Checked inside: a deactivation or a change of the actor's role (a moderator's time
    // limits, a guest's channel access) committed since counts as it would in turn.
    const me = await accessCurrentActor(db, actor);
    const { realm } = me;
    const { message, channel } = await accessMessage(db, me, messageId, { modifying: true });
    const now = unixNow(ctx.clock);
    const req = checkEditRequest(message, channel, p, realmMessageSettings(realm).emptyTopicName);
    const { newContent, newTopic } = req;
    if (newContent !== undefined) {
      checkContentEditable(me, message, await accessRealmSettings(db, realm.id), now);
    }
    const { target, moved, resolveOnly } =
      channel && (newTopic !== undefined || req.newStreamId !== undefined)
        ? await planMove(db, me, message, channel, req, p.propagateMode, now)
        : { target: null, moved: [], resolveOnly: false };

    const movedIds = moved.map((m) => m.id);
    const audienceBefore = await messageAudience(
      db,
      channel,
      movedIds.length > 0 ? movedIds : [message.id],
    );
    const contentChange =
      newContent === undefined
        ? null
        : await applyContentEdit(ctx, work, me, message, channel, newContent, now);
    const firstBefore = target ? await firstMessageIds(db, [channel!, target]) : null;
    let losing: number[] = [];
    if (movedIds.length > 0) {
      await applyMove(db, me.user.id, movedIds, {
        newTopic,
        from: channel!,
        to: target,
        now,
        resolveOnly,
        contentEntry: contentChange?.entry ?? null,
        targetId: message.id,
      });
      if (target) losing = await reassignAccess(db, channel!, target, movedIds, audienceBefore);
    }
    await emitUpdateMessage(work, {
      message,
      channel,
      movedIds,
      audience: audienceBefore.filter((u) => !losing.includes(u)),
      now,
      mode: p.propagateMode,
      newTopic,
      target,
      content: contentChange,
    });
    if (target) await announceFirstMessageIds(work, realm, [channel!, target], firstBefore!);
    if (losing.length > 0) {
      // Those who can no longer read the messages see them deleted from where they were.
      work.emitOnCommit(
        {
          type: 'delete_message',
          message_ids: [...movedIds].sort((a, b) => a - b),
          message_type: 'stream',
          stream_id: channel!.id,
          topic: message.topic,
        },
        losing.filter((u) => audienceBefore.includes(u)),
      );
    }
  });
  return { detached_uploads: [] };
}

/** change_all within a time limit: every message of the topic must be recent enough. */
function checkWholeTopicMovable(
  moved: Array<{ id: number; date_sent: number }>,
  oldestAllowed: number,
): void {
  const allowed = moved.filter((m) => m.date_sent >= oldestAllowed);
  if (allowed.length === moved.length) return;
  throw new JsonableError(
    `You only have permission to move the ${allowed.length}/${moved.length} most recent messages in this topic.`,
    'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED',
    400,
    {
      first_message_id_allowed_to_move: allowed[0]?.id ?? null,
      total_messages_in_topic: moved.length,
      total_messages_allowed_to_move: allowed.length,
    },
  );
}

interface ContentChange {
  entry: EditHistoryEntry;
  orig_content: string;
  orig_rendered_content: string;
  content: string;
  rendered_content: string;
  is_me_message: boolean;
}

/** Render the new content and recompute every recipient's mention and alert-word flags. */
async function applyContentEdit(
  ctx: AppContext,
  work: Work,
  actor: Actor,
  message: MessageRow,
  channel: ChannelRow | null,
  content: string,
  now: number,
): Promise<ContentChange> {
  const db = work.db;
  const rendering = await renderMessage(ctx, db, actor.realm, actor.user, content, {
    checkGroupMentions: true,
  });
  const rows = await messagesStore.listUserMessages(db, [message.id]);
  const participants = new Set(
    channel && rendering.rendered.topicWildcard
      ? await messagesStore.listTopicParticipants(db, channel.id, message.topic)
      : [],
  );
  if (channel) {
    const subscribers = await channelsStore.listSubscriberIds(db, channel.id);
    await checkWildcardMentions(
      db,
      actor.realm,
      actor.user,
      rendering,
      subscribers.length,
      participants.size,
    );
  }
  const alertWords = await messagesStore.listAlertWords(
    db,
    rows.map((r) => r.user_id),
  );
  for (const r of rows) {
    const bits =
      (r.flags & ~RENDERING_FLAG_BITS) |
      renderingFlags(rendering, r.user_id, alertWords.get(r.user_id), participants.has(r.user_id));
    if (bits !== r.flags) await messagesStore.setUserMessageFlags(db, r.user_id, message.id, bits);
  }
  const entry: EditHistoryEntry = {
    user_id: actor.user.id,
    timestamp: now,
    prev_content: message.content,
    prev_rendered_content: message.rendered_content,
  };
  const r = rendering.rendered;
  await messagesStore.updateMessage(db, message.id, {
    content,
    rendered_content: r.html,
    is_me_message: r.isMeMessage ? 1 : 0,
    has_link: r.hasLink ? 1 : 0,
    has_image: r.hasImage ? 1 : 0,
    has_attachment: r.hasAttachment ? 1 : 0,
    last_edit_time: now,
    edit_history: JSON.stringify([entry, ...readEditHistory(message.edit_history)]),
  });
  return {
    entry,
    orig_content: message.content,
    orig_rendered_content: message.rendered_content,
    content,
    rendered_content: r.html,
    is_me_message: r.isMeMessage,
  };
}

interface MoveSpec {
  newTopic: string | undefined;
  from: ChannelRow;
  to: ChannelRow | null;
  now: number;
  resolveOnly: boolean;
  /** The target message's content edit, recorded in the same history entry as its move. */
  contentEntry: EditHistoryEntry | null;
  targetId: number;
}

async function applyMove(db: Q, actorId: number, ids: number[], spec: MoveSpec): Promise<void> {
  const rows = await messagesStore.listMessagesByIds(db, spec.from.realm_id, ids);
  for (const row of rows) {
    const entry: EditHistoryEntry = { user_id: actorId, timestamp: spec.now };
    if (spec.newTopic !== undefined) {
      entry.prev_topic = row.topic;
      entry.topic = spec.newTopic;
    }
    if (spec.to) {
      entry.prev_stream = spec.from.id;
      entry.stream = spec.to.id;
    }
    let history = readEditHistory(row.edit_history);
    if (row.id === spec.targetId && spec.contentEntry) {
      // The content edit was just recorded as the newest entry; one edit, one entry.
      history = [{ ...history[0], ...entry }, ...history.slice(1)];
    } else {
      history = [entry, ...history];
    }
    await messagesStore.updateMessage(db, row.id, {
      topic: spec.newTopic ?? row.topic,
      ...(spec.to ? { channel_id: spec.to.id, recipient_id: spec.to.recipient_id! } : {}),
      ...(spec.resolveOnly ? {} : { last_moved_time: spec.now }),
      edit_history: JSON.stringify(history),
    });
  }
}

/**
 * After a move to another channel: users who cannot read the messages there lose their
 * rows; where the new channel does not share history, its subscribers get rows (read) so
 * they can. Returns the users who lost access.
 */
async function reassignAccess(
  db: Q,
  from: ChannelRow,
  to: ChannelRow,
  ids: number[],
  audienceBefore: number[],
): Promise<number[]> {
  const rows = await messagesStore.listUserMessages(db, ids);
  const holders = new Set(rows.map((r) => r.user_id));
  const subscribers = new Set(await channelsStore.listSubscriberIds(db, to.id));
  const candidates = await usersStore.listUsersByIds(db, from.realm_id, [
    ...new Set([...holders, ...audienceBefore]),
  ]);
  const losing: number[] = [];
  for (const u of candidates) {
    const access = await getChannelAccess(db, u, to);
    const keeps =
      access.content &&
      (to.history_public_to_subscribers === 1 || holders.has(u.id) || subscribers.has(u.id));
    if (!keeps) losing.push(u.id);
  }
  await messagesStore.deleteUserMessages(db, losing, ids);
  if (to.history_public_to_subscribers === 0) {
    const gaining = [...subscribers].filter((id) => !holders.has(id));
    await messagesStore.insertUserMessages(
      db,
      gaining.flatMap((user_id) =>
        ids.map((message_id) => ({ user_id, message_id, flags: FLAG_BITS.read })),
      ),
    );
  }
  return losing;
}

interface UpdateEventSpec {
  message: MessageRow;
  channel: ChannelRow | null;
  movedIds: number[];
  audience: number[];
  now: number;
  mode: PropagateMode;
  newTopic: string | undefined;
  target: ChannelRow | null;
  content: ContentChange | null;
}

/** update_message to everyone who could see the message, each with their flags on it. */
async function emitUpdateMessage(work: Work, s: UpdateEventSpec): Promise<void> {
  const ids = (s.movedIds.length > 0 ? s.movedIds : [s.message.id]).slice().sort((a, b) => a - b);
  const event: Record<string, unknown> = {
    type: 'update_message',
    user_id: s.message.sender_id,
    rendering_only: false,
    message_id: s.message.id,
    message_ids: ids,
    flags: [],
    edit_timestamp: s.now,
  };
  if (s.channel) {
    event.stream_name = s.channel.name;
    event.stream_id = s.channel.id;
  }
  if (s.movedIds.length > 0) {
    event.propagate_mode = s.mode;
    event.orig_subject = s.message.topic;
  }
  if (s.newTopic !== undefined) {
    event.subject = s.newTopic;
    event.topic_links = renderTopicLinks(s.newTopic);
  }
  if (s.target) event.new_stream_id = s.target.id;
  if (s.content) {
    const { entry: _entry, ...fields } = s.content;
    Object.assign(event, fields);
  }
  const flags = new Map(
    (await messagesStore.listUserMessages(work.db, [s.message.id])).map((r) => [
      r.user_id,
      r.flags,
    ]),
  );
  const perUser: Record<number, Record<string, unknown>> = {};
  for (const id of s.audience) {
    perUser[id] = { flags: flagsToNames(flags.get(id) ?? FLAG_BITS.read) };
  }
  work.emitOnCommit(event as { type: 'update_message' }, s.audience, { perUser });
}
