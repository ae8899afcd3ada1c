// GET /messages as SQL: a narrow whose names the action already resolved to ids, over
// either the user's own delivery rows or (shared channel history) every message of the
// channels the narrow names, with the user's flags where they have a row.
import { sql, type RawBuilder } from 'kysely';
import type { Q } from './db.ts';

/** One resolved narrow term; `negated` inverts it. */
export type MessageCondition = { negated: boolean } & (
  | { kind: 'recipients'; recipientIds: number[] }
  | { kind: 'topic'; topic: string }
  | { kind: 'sender'; userId: number }
  | { kind: 'direct' }
  /** Direct messages whose conversation includes the user and has at least n participants. */
  | { kind: 'directWith'; userId: number; minParticipants: number }
  /** Any of these flag bits set. */
  | { kind: 'flagsAny'; mask: number }
  | { kind: 'unread' }
  | { kind: 'resolved' }
  /** The user's topic visibility policy for the message's topic equals this one. */
  | { kind: 'topicPolicy'; userId: number; policy: number }
  /** In a muted channel (and the topic not unmuted or followed), or in a muted topic. */
  | { kind: 'muted'; userId: number }
  | { kind: 'has'; what: 'link' | 'image' | 'attachment' | 'reaction' }
  | { kind: 'id'; id: number }
  | { kind: 'search'; words: string[] }
);

export interface MessageSearch {
  realmId: number;
  userId: number;
  /** Also messages without a row of the user's (only with a channel term that allows it). */
  includeHistory: boolean;
  conditions: MessageCondition[];
}

export interface FoundMessage {
  id: number;
  /** The user's flags, or read|historical where they have no row. */
  flags: number;
}

/** Flags of messages seen through shared history: read and historical. */
const HISTORICAL = 1 | 128;
const TOPIC_POLICY = { muted: 1, unmuted: 2, followed: 3 } as const;

const likePattern = (word: string): string => `%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

const sameTopic = sql`lower(ut.topic_name) = lower(m.topic) AND ut.channel_id = m.channel_id`;

function conditionSql(c: MessageCondition): RawBuilder<boolean> {
  const flags = sql`coalesce(um.flags, ${HISTORICAL})`;
  switch (c.kind) {
    case 'recipients':
      return c.recipientIds.length === 0
        ? sql<boolean>`1 = 0`
        : sql<boolean>`m.recipient_id IN (${sql.join(c.recipientIds)})`;
    case 'topic':
      return sql<boolean>`(m.channel_id IS NOT NULL AND lower(m.topic) = lower(${c.topic}))`;
    case 'sender':
      return sql<boolean>`m.sender_id = ${c.userId}`;
    case 'direct':
      return sql<boolean>`m.channel_id IS NULL`;
    case 'directWith':
      return sql<boolean>`(m.channel_id IS NULL AND m.recipient_id IN (
        SELECT dp.recipient_id FROM direct_participants dp WHERE dp.user_id = ${c.userId}
          AND (SELECT count(*) FROM direct_participants n WHERE n.recipient_id = dp.recipient_id) >= ${c.minParticipants}))`;
    case 'flagsAny':
      return sql<boolean>`(${flags} & ${c.mask}) <> 0`;
    case 'unread':
      return sql<boolean>`(${flags} & 1) = 0`;
    case 'resolved':
      return sql<boolean>`(m.channel_id IS NOT NULL AND m.topic LIKE ${'✔ %'})`;
    case 'topicPolicy':
      return sql<boolean>`(m.channel_id IS NOT NULL AND EXISTS (SELECT 1 FROM user_topics ut
        WHERE ut.user_id = ${c.userId} AND ${sameTopic} AND ut.visibility_policy = ${c.policy}))`;
    case 'muted':
      return sql<boolean>`(m.channel_id IS NOT NULL AND (
        EXISTS (SELECT 1 FROM user_topics ut WHERE ut.user_id = ${c.userId} AND ${sameTopic}
          AND ut.visibility_policy = ${TOPIC_POLICY.muted})
        OR (EXISTS (SELECT 1 FROM subscriptions s WHERE s.user_id = ${c.userId}
              AND s.channel_id = m.channel_id AND s.is_muted = 1)
            AND NOT EXISTS (SELECT 1 FROM user_topics ut WHERE ut.user_id = ${c.userId} AND ${sameTopic}
              AND ut.visibility_policy IN (${TOPIC_POLICY.unmuted}, ${TOPIC_POLICY.followed})))))`;
    case 'has':
      if (c.what === 'reaction') {
        return sql<boolean>`EXISTS (SELECT 1 FROM reactions r WHERE r.message_id = m.id)`;
      }
      return sql<boolean>`${sql.ref(`m.has_${c.what}`)} = 1`;
    case 'id':
      return sql<boolean>`m.id = ${c.id}`;
    case 'search':
      return sql<boolean>`(${sql.join(
        c.words.map((w) => {
          const p = likePattern(w);
          return sql`(lower(m.content) LIKE lower(${p}) ESCAPE '\\' OR lower(m.topic) LIKE lower(${p}) ESCAPE '\\')`;
        }),
        sql` AND `,
      )})`;
  }
}

function baseQuery(db: Q, s: MessageSearch) {
  let q = db
    .selectFrom('messages as m')
    .leftJoin('user_messages as um', (j) =>
      j.onRef('um.message_id', '=', 'm.id').on('um.user_id', '=', s.userId),
    )
    .select(['m.id', sql<number>`coalesce(um.flags, ${HISTORICAL})`.as('flags')])
    .where('m.realm_id', '=', s.realmId);
  if (!s.includeHistory) q = q.where('um.user_id', 'is not', null);
  for (const c of s.conditions) {
    const cond = conditionSql(c);
    q = q.where(c.negated ? sql<boolean>`NOT (${cond})` : cond);
  }
  return q;
}

/** Ids are 32-bit integers on PostgreSQL; anchors beyond them must not reach the query. */
const MAX_ID = 2147483647;

const toFound = (rows: Array<{ id: number; flags: number }>): FoundMessage[] =>
  rows.map((r) => ({ id: Number(r.id), flags: Number(r.flags) }));

/** Matching messages with ids below the anchor, newest first. */
export async function findBefore(
  db: Q,
  s: MessageSearch,
  anchor: number,
  limit: number,
): Promise<FoundMessage[]> {
  if (limit <= 0) return [];
  let q = baseQuery(db, s);
  if (anchor <= MAX_ID) q = q.where('m.id', '<', anchor);
  const rows = await q.orderBy('m.id', 'desc').limit(limit).execute();
  return toFound(rows);
}

/** Matching messages with ids above the anchor (or from it, inclusive), oldest first. */
export async function findAfter(
  db: Q,
  s: MessageSearch,
  anchor: number,
  limit: number,
  inclusive: boolean,
): Promise<FoundMessage[]> {
  if (limit <= 0 || anchor >= MAX_ID) return [];
  const rows = await baseQuery(db, s)
    .where('m.id', inclusive ? '>=' : '>', anchor)
    .orderBy('m.id', 'asc')
    .limit(limit)
    .execute();
  return toFound(rows);
}

export async function findById(db: Q, s: MessageSearch, id: number): Promise<FoundMessage | null> {
  if (id > MAX_ID) return null;
  const rows = await baseQuery(db, s).where('m.id', '=', id).execute();
  return toFound(rows)[0] ?? null;
}

export async function findAmong(db: Q, s: MessageSearch, ids: number[]): Promise<FoundMessage[]> {
  const out: FoundMessage[] = [];
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += 300) {
    const part = unique.slice(i, i + 300);
    out.push(...toFound(await baseQuery(db, s).where('m.id', 'in', part).execute()));
  }
  return out.sort((a, b) => a.id - b.id);
}

/** The oldest matching unread message, optionally leaving out muted conversations. */
export async function findFirstUnread(
  db: Q,
  s: MessageSearch,
  excludeMuted: boolean,
): Promise<number | null> {
  const extra: MessageCondition[] = [{ kind: 'unread', negated: false }];
  if (excludeMuted) extra.push({ kind: 'muted', userId: s.userId, negated: true });
  const row = await baseQuery(db, { ...s, conditions: [...s.conditions, ...extra] })
    .orderBy('m.id', 'asc')
    .limit(1)
    .executeTakeFirst();
  return row ? Number(row.id) : null;
}
