// Emoji reactions to messages. Reading a message's reactions for presentation is
// messages.ts's listReactions.
import type { Q } from './db.ts';
import type { ReactionRow } from './schema.ts';

export type NewReaction = Omit<ReactionRow, 'id'>;

/** One user's reaction with this emoji to a message, if any. */
export async function getUserReaction(
  db: Q,
  messageId: number,
  userId: number,
  reactionType: string,
  emojiCode: string,
): Promise<ReactionRow | undefined> {
  return db
    .selectFrom('reactions')
    .selectAll()
    .where('message_id', '=', messageId)
    .where('user_id', '=', userId)
    .where('reaction_type', '=', reactionType)
    .where('emoji_code', '=', emojiCode)
    .executeTakeFirst();
}

/** The earliest reaction with this emoji to a message, by anyone. */
export async function getFirstReaction(
  db: Q,
  messageId: number,
  reactionType: string,
  emojiCode: string,
): Promise<ReactionRow | undefined> {
  return db
    .selectFrom('reactions')
    .selectAll()
    .where('message_id', '=', messageId)
    .where('reaction_type', '=', reactionType)
    .where('emoji_code', '=', emojiCode)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
}

/** Insert a reaction; undefined when the user already has it (a concurrent request added it). */
export async function insertReaction(db: Q, row: NewReaction): Promise<ReactionRow | undefined> {
  return db
    .insertInto('reactions')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['message_id', 'user_id', 'reaction_type', 'emoji_code']).doNothing(),
    )
    .returningAll()
    .executeTakeFirst();
}

export async function deleteReaction(db: Q, id: number): Promise<void> {
  await db.deleteFrom('reactions').where('id', '=', id).execute();
}
