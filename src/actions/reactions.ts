// Emoji reactions: adding and removing one's own reaction to a message one may read.
//
// Everyone reacting with the same emoji (type and code) shares the first reactor's emoji
// name, so one emoji never shows as two reactions. A reader of a shared-history channel
// message who never received it gets a historical delivery row, so that later changes to
// the message reach them.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { badRequest, JsonableError } from '../lib/errors.ts';
import { HISTORICAL_FLAGS } from '../lib/presenters/messages.ts';
import { canonicalReactionType, checkReactionEmoji, emojiForName } from '../lib/reactions.ts';
import * as emojiStore from '../store/custom-emoji.ts';
import type { Q } from '../store/db.ts';
import * as messagesStore from '../store/messages.ts';
import * as reactionsStore from '../store/reactions.ts';
import type { ChannelRow, MessageRow, ReactionRow } from '../store/schema.ts';
import { accessMessage, messageAudience } from './message-access.ts';
import { accessCurrentActor } from './permissions.ts';
import { withTransaction, type Work } from './transaction.ts';

export interface AddReactionParams {
  emojiName: string;
  emojiCode?: string;
  reactionType?: string;
}

export interface RemoveReactionParams {
  emojiName?: string;
  emojiCode?: string;
  reactionType?: string;
}

const reactionExists = (): JsonableError =>
  new JsonableError('Reaction already exists.', 'REACTION_ALREADY_EXISTS');
const reactionMissing = (): JsonableError =>
  new JsonableError("Reaction doesn't exist.", 'REACTION_DOES_NOT_EXIST');

export async function addReaction(
  ctx: AppContext,
  actor: Actor,
  messageId: number,
  params: AddReactionParams,
): Promise<void> {
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const db = work.db;
    // Checked inside: a deactivated actor reacts no more, nor one who lost sight of the message.
    const me = await accessCurrentActor(db, actor);
    const { message, channel, flags } = await accessMessage(db, me, messageId, {
      modifying: true,
    });
    let { emojiName: name, emojiCode: code, reactionType: type } = params;
    if (code === undefined || type === undefined) {
      const known = emojiForName(name, await customByName(db, me, name));
      code ??= known.code;
      type ??= known.type;
    }
    type = canonicalReactionType(type);
    if (await reactionsStore.getUserReaction(db, message.id, me.user.id, type, code)) {
      throw reactionExists();
    }
    const earlier = await reactionsStore.getFirstReaction(db, message.id, type, code);
    // Joining an existing reaction needs no check: its emoji may since have been retired.
    if (earlier) name = earlier.emoji_name;
    else checkReactionEmoji(name, code, type, await customById(db, me, type, code));
    if (flags === undefined) {
      await messagesStore.insertUserMessages(db, [
        { user_id: me.user.id, message_id: message.id, flags: HISTORICAL_FLAGS },
      ]);
    }
    const reaction = await reactionsStore.insertReaction(db, {
      message_id: message.id,
      user_id: me.user.id,
      emoji_name: name,
      emoji_code: code,
      reaction_type: type,
    });
    if (!reaction) throw reactionExists();
    await emitReaction(work, me, 'add', message, channel, reaction);
  });
}

/**
 * Remove one's reaction, named by emoji_code (with reaction_type, default unicode_emoji)
 * or by emoji_name. The stored reaction is not re-validated: its emoji may since have
 * been retired.
 */
export async function removeReaction(
  ctx: AppContext,
  actor: Actor,
  messageId: number,
  params: RemoveReactionParams,
): Promise<void> {
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const db = work.db;
    // As when adding: the actor and their sight of the message as they are now.
    const me = await accessCurrentActor(db, actor);
    const { message, channel } = await accessMessage(db, me, messageId, { modifying: true });
    let { emojiCode: code, reactionType: type } = params;
    if (code === undefined) {
      if (params.emojiName === undefined) {
        throw badRequest(
          'At least one of the following arguments must be present: emoji_name, emoji_code',
        );
      }
      const known = emojiForName(params.emojiName, await customByName(db, me, params.emojiName));
      code = known.code;
      // Unlike the reference server, a name alone also finds an extra emoji's reaction.
      type ??= known.type;
    }
    type = canonicalReactionType(type ?? 'unicode_emoji');
    const reaction = await reactionsStore.getUserReaction(db, message.id, me.user.id, type, code);
    if (!reaction) throw reactionMissing();
    await reactionsStore.deleteReaction(db, reaction.id);
    await emitReaction(work, me, 'remove', message, channel, reaction);
  });
}

async function customByName(db: Q, actor: Actor, name: string) {
  const row = await emojiStore.getActiveEmojiByName(db, actor.realm.id, name);
  return row && { id: row.id, name: row.name, deactivated: row.deactivated === 1 };
}

/** The custom emoji a realm_emoji code names (an id of this organization's emoji). */
async function customById(db: Q, actor: Actor, type: string, code: string) {
  if (type !== 'realm_emoji' || !/^[1-9][0-9]{0,9}$/.test(code)) return undefined;
  const row = await emojiStore.getEmojiById(db, actor.realm.id, Number(code));
  return row && { id: row.id, name: row.name, deactivated: row.deactivated === 1 };
}

/** The reaction event, to everyone told about changes to the message. */
async function emitReaction(
  work: Work,
  actor: Actor,
  op: 'add' | 'remove',
  message: MessageRow,
  channel: ChannelRow | null,
  reaction: ReactionRow,
): Promise<void> {
  const { user } = actor;
  work.emitOnCommit(
    {
      type: 'reaction',
      op,
      message_id: message.id,
      emoji_name: reaction.emoji_name,
      emoji_code: reaction.emoji_code,
      reaction_type: reaction.reaction_type,
      user_id: user.id,
      // Deprecated, still read by older clients.
      user: { user_id: user.id, email: user.email, full_name: user.full_name },
    },
    await messageAudience(work.db, channel, [message.id]),
  );
}
