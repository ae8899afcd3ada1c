// Changing a user's flag bits on their delivery rows, and finding their unread rows.
import { sql } from 'kysely';
import type { Q } from './db.ts';

/** Ids per statement: keeps every statement under SQLite's bound-parameter limit. */
const CHUNK = 300;

/** Set (add) or clear (remove) one flag bit on the user's rows of these messages. */
export async function updateFlagBit(
  db: Q,
  userId: number,
  messageIds: number[],
  bit: number,
  add: boolean,
): Promise<void> {
  for (let i = 0; i < messageIds.length; i += CHUNK) {
    const part = messageIds.slice(i, i + CHUNK);
    await db
      .updateTable('user_messages')
      .set({ flags: add ? sql<number>`flags | ${bit}` : sql<number>`flags & ${~bit}` })
      .where('user_id', '=', userId)
      .where('message_id', 'in', part)
      .execute();
  }
}

/**
 * The user's unread messages, oldest first: all, or those of one conversation (and topic),
 * or of one sender.
 */
export async function listUnreadMessageIds(
  db: Q,
  userId: number,
  where: { recipientId?: number; topic?: string; senderId?: number } = {},
): Promise<number[]> {
  let q = db
    .selectFrom('user_messages as um')
    .innerJoin('messages as m', 'm.id', 'um.message_id')
    .select('um.message_id')
    .where('um.user_id', '=', userId)
    .where(sql<boolean>`(um.flags & 1) = 0`);
  if (where.recipientId !== undefined) q = q.where('m.recipient_id', '=', where.recipientId);
  if (where.topic !== undefined) q = q.where(sql<boolean>`lower(m.topic) = lower(${where.topic})`);
  if (where.senderId !== undefined) q = q.where('m.sender_id', '=', where.senderId);
  const rows = await q.orderBy('um.message_id').execute();
  return rows.map((r) => r.message_id);
}
