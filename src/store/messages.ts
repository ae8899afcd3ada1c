// Messages, their conversations and per-user delivery rows.
import { sql } from 'kysely';
import { cachedQuery, compiledQuery, type CompiledQueryRunner } from './compiled.ts';
import { isPostgres, type Q } from './db.ts';
import type { MessageRow, ReactionRow, RecipientRow } from './schema.ts';

export type NewMessage = Omit<MessageRow, 'id'>;

export interface UserMessageRow {
  user_id: number;
  message_id: number;
  flags: number;
}

/** Rows per INSERT: keeps every statement under SQLite's bound-parameter limit. */
const CHUNK = 300;

function chunks<T>(items: T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Every column of a new message: the type makes leaving one out a compile error. */
const MESSAGE_COLUMN_SET: Record<keyof NewMessage, true> = {
  realm_id: true,
  recipient_id: true,
  channel_id: true,
  sender_id: true,
  topic: true,
  content: true,
  rendered_content: true,
  date_sent: true,
  sending_client: true,
  is_me_message: true,
  last_edit_time: true,
  last_moved_time: true,
  edit_history: true,
  has_link: true,
  has_image: true,
  has_attachment: true,
};
/** The compiled INSERT's parameter order. */
const MESSAGE_COLUMNS = Object.keys(MESSAGE_COLUMN_SET) as Array<keyof NewMessage>;

/**
 * Several messages in one statement, their rows returned in the order given. PostgreSQL
 * returns an INSERT … VALUES' rows in the order of its VALUES (bulk inserts of ORMs rely on
 * it too); the sender and the content of each row are checked against the input all the same.
 */
export async function insertMessages(db: Q, rows: NewMessage[]): Promise<MessageRow[]> {
  let insert = messageInserts.get(rows.length);
  if (!insert) {
    const size = rows.length;
    const width = MESSAGE_COLUMNS.length;
    insert = compiledQuery(width * size, (db, ...values: unknown[]) =>
      db
        .insertInto('messages')
        .values(
          Array.from(
            { length: size },
            (_, r) =>
              Object.fromEntries(
                MESSAGE_COLUMNS.map((c, i) => [c, values[r * width + i]]),
              ) as NewMessage,
          ),
        )
        .returningAll(),
    );
    messageInserts.set(size, insert);
  }
  const inserted = await insert.all(
    db,
    ...rows.flatMap((row) => MESSAGE_COLUMNS.map((c) => row[c])),
  );
  const inOrder =
    inserted.length === rows.length &&
    inserted.every((m, i) => m.sender_id === rows[i].sender_id && m.content === rows[i].content);
  if (!inOrder) throw new Error('insertMessages: rows returned out of order');
  return inserted;
}

const messageInserts = new Map<number, CompiledQueryRunner<unknown[], MessageRow>>();

export async function insertUserMessages(db: Q, rows: UserMessageRow[]): Promise<void> {
  if (isPostgres(db)) return insertUserMessagesFromArrays(db, rows);
  // Every statement here is compiled once per size: building and compiling an INSERT of many
  // rows through Kysely costs more than SQLite takes to run it. Large sends go 200 rows at a
  // time, the rest 32 at a time and then the exact remainder (at most 33 shapes in all).
  let at = 0;
  while (at < rows.length) {
    const left = rows.length - at;
    const size =
      left >= USER_MESSAGE_BATCH ? USER_MESSAGE_BATCH : left > SMALL_BATCH ? SMALL_BATCH : left;
    const args: number[] = [];
    for (let i = at; i < at + size; i++) {
      args.push(rows[i].user_id, rows[i].message_id, rows[i].flags);
    }
    await userMessageInsert(size).all(db, ...args);
    at += size;
  }
}

/**
 * On PostgreSQL any number of rows go in one statement of three array parameters: a batch of
 * sends writes hundreds, which as 200-row VALUES statements took four round trips, each
 * parsed and bound with 600 parameters (docs/performance-history.md, session 18).
 */
async function insertUserMessagesFromArrays(db: Q, rows: UserMessageRow[]): Promise<void> {
  if (rows.length === 0) return;
  const userIds = new Array<number>(rows.length);
  const messageIds = new Array<number>(rows.length);
  const flags = new Array<number>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    userIds[i] = rows[i].user_id;
    messageIds[i] = rows[i].message_id;
    flags[i] = rows[i].flags;
  }
  await sql`insert into user_messages (user_id, message_id, flags)
    select * from unnest(${userIds}::integer[], ${messageIds}::integer[], ${flags}::integer[])`.execute(
    db,
  );
}

/** Rows per INSERT of a large send: 3 parameters each, under every database's limit. */
const USER_MESSAGE_BATCH = 200;
const SMALL_BATCH = 32;

const userMessageInserts = new Map<number, CompiledQueryRunner<number[], unknown>>();

function userMessageInsert(size: number): CompiledQueryRunner<number[], unknown> {
  let insert = userMessageInserts.get(size);
  if (!insert) {
    insert = compiledQuery(3 * size, (db, ...args: number[]) =>
      db.insertInto('user_messages').values(
        Array.from({ length: size }, (_, i) => ({
          user_id: args[3 * i],
          message_id: args[3 * i + 1],
          flags: args[3 * i + 2],
        })),
      ),
    );
    userMessageInserts.set(size, insert);
  }
  return insert;
}

export async function getMessage(
  db: Q,
  realmId: number,
  id: number,
): Promise<MessageRow | undefined> {
  return db
    .selectFrom('messages')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function listMessagesByIds(
  db: Q,
  realmId: number,
  ids: number[],
): Promise<MessageRow[]> {
  const out: MessageRow[] = [];
  for (const part of chunks([...new Set(ids)])) {
    out.push(
      ...(await db
        .selectFrom('messages')
        .selectAll()
        .where('realm_id', '=', realmId)
        .where('id', 'in', part)
        .execute()),
    );
  }
  return out.sort((a, b) => a.id - b.id);
}

export async function updateMessage(
  db: Q,
  id: number,
  changes: Partial<Omit<MessageRow, 'id' | 'realm_id'>>,
): Promise<void> {
  await db.updateTable('messages').set(changes).where('id', '=', id).execute();
}

/** Delete messages with their delivery rows and reactions. */
export async function deleteMessages(db: Q, ids: number[]): Promise<void> {
  for (const part of chunks(ids)) {
    await db.deleteFrom('user_messages').where('message_id', 'in', part).execute();
    await db.deleteFrom('reactions').where('message_id', 'in', part).execute();
    await db.deleteFrom('messages').where('id', 'in', part).execute();
  }
}

/** The user's flags on each of these messages they have a row for. */
export async function getUserMessageFlags(
  db: Q,
  userId: number,
  messageIds: number[],
): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (const part of chunks([...new Set(messageIds)])) {
    const rows = await db
      .selectFrom('user_messages')
      .select(['message_id', 'flags'])
      .where('user_id', '=', userId)
      .where('message_id', 'in', part)
      .execute();
    for (const r of rows) out.set(r.message_id, r.flags);
  }
  return out;
}

/** Rows of these messages held by active users. */
export async function listUserMessages(db: Q, messageIds: number[]): Promise<UserMessageRow[]> {
  const out: UserMessageRow[] = [];
  for (const part of chunks([...new Set(messageIds)])) {
    out.push(
      ...(await db
        .selectFrom('user_messages as um')
        .innerJoin('users as u', 'u.id', 'um.user_id')
        .select(['um.user_id', 'um.message_id', 'um.flags'])
        .where('um.message_id', 'in', part)
        .where('u.is_active', '=', 1)
        .execute()),
    );
  }
  return out;
}

export async function setUserMessageFlags(
  db: Q,
  userId: number,
  messageId: number,
  flags: number,
): Promise<void> {
  await db
    .updateTable('user_messages')
    .set({ flags })
    .where('user_id', '=', userId)
    .where('message_id', '=', messageId)
    .execute();
}

export async function deleteUserMessages(
  db: Q,
  userIds: number[],
  messageIds: number[],
): Promise<void> {
  if (userIds.length === 0) return;
  for (const part of chunks(messageIds)) {
    await db
      .deleteFrom('user_messages')
      .where('user_id', 'in', userIds)
      .where('message_id', 'in', part)
      .execute();
  }
}

export async function getDirectRecipient(
  db: Q,
  realmId: number,
  key: string,
): Promise<RecipientRow | undefined> {
  return db
    .selectFrom('recipients')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('direct_key', '=', key)
    .executeTakeFirst();
}

export async function insertDirectRecipient(
  db: Q,
  realmId: number,
  key: string,
  userIds: number[],
): Promise<RecipientRow> {
  // Two first messages to one conversation may race (PostgreSQL runs them side by side):
  // the loser waits for the winner's commit and takes its conversation.
  const recipient = await db
    .insertInto('recipients')
    .values({ realm_id: realmId, channel_id: null, direct_key: key })
    .onConflict((oc) => oc.columns(['realm_id', 'direct_key']).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (!recipient) {
    return db
      .selectFrom('recipients')
      .selectAll()
      .where('realm_id', '=', realmId)
      .where('direct_key', '=', key)
      .executeTakeFirstOrThrow();
  }
  await db
    .insertInto('direct_participants')
    .values(userIds.map((user_id) => ({ recipient_id: recipient.id, user_id })))
    .execute();
  return recipient;
}

/** Participant ids of each direct-message conversation. */
export async function listDirectParticipants(
  db: Q,
  recipientIds: number[],
): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>();
  for (const part of chunks([...new Set(recipientIds)])) {
    const rows = await db
      .selectFrom('direct_participants')
      .select(['recipient_id', 'user_id'])
      .where('recipient_id', 'in', part)
      .orderBy('user_id')
      .execute();
    for (const r of rows) {
      const list = out.get(r.recipient_id);
      if (list) list.push(r.user_id);
      else out.set(r.recipient_id, [r.user_id]);
    }
  }
  return out;
}

export async function conversationHasMessages(db: Q, recipientId: number): Promise<boolean> {
  const row = await db
    .selectFrom('messages')
    .select('id')
    .where('recipient_id', '=', recipientId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export async function listReactions(db: Q, messageIds: number[]): Promise<ReactionRow[]> {
  const out: ReactionRow[] = [];
  for (const part of chunks([...new Set(messageIds)])) {
    out.push(
      ...(await db.selectFrom('reactions').selectAll().where('message_id', 'in', part).execute()),
    );
  }
  return out;
}

/** Messages of a channel topic (case-insensitively), oldest first. */
export async function listTopicMessages(
  db: Q,
  channelId: number,
  topic: string,
  opts: { fromId?: number; onlyWithRowOf?: number; newestFirst?: boolean; limit?: number } = {},
): Promise<Array<{ id: number; date_sent: number }>> {
  let q = db
    .selectFrom('messages as m')
    .select(['m.id', 'm.date_sent'])
    .where('m.channel_id', '=', channelId)
    .where(sql<boolean>`lower(m.topic) = lower(${topic})`);
  if (opts.fromId !== undefined) q = q.where('m.id', '>=', opts.fromId);
  if (opts.onlyWithRowOf !== undefined) {
    const userId = opts.onlyWithRowOf;
    q = q.where(({ exists, selectFrom }) =>
      exists(
        selectFrom('user_messages as um')
          .select('um.message_id')
          .whereRef('um.message_id', '=', 'm.id')
          .where('um.user_id', '=', userId),
      ),
    );
  }
  q = q.orderBy('m.id', opts.newestFirst ? 'desc' : 'asc');
  if (opts.limit !== undefined) q = q.limit(opts.limit);
  return q.execute();
}

/** Who took part in a topic: its senders and the users who reacted to its messages. */
export async function listTopicParticipants(
  db: Q,
  channelId: number,
  topic: string,
): Promise<number[]> {
  const senders = await db
    .selectFrom('messages')
    .select('sender_id as user_id')
    .distinct()
    .where('channel_id', '=', channelId)
    .where(sql<boolean>`lower(topic) = lower(${topic})`)
    .execute();
  const reactors = await db
    .selectFrom('reactions as r')
    .innerJoin('messages as m', 'm.id', 'r.message_id')
    .select('r.user_id')
    .distinct()
    .where('m.channel_id', '=', channelId)
    .where(sql<boolean>`lower(m.topic) = lower(${topic})`)
    .execute();
  return [...new Set([...senders, ...reactors].map((r) => r.user_id))];
}

/** Topics of a channel with their newest message, newest first; optionally only the user's. */
export async function listChannelTopics(
  db: Q,
  channelId: number,
  onlyWithRowOf: number | null,
): Promise<Array<{ name: string; max_id: number }>> {
  let q = db
    .selectFrom('messages as m')
    .select((eb) => [sql<string>`lower(m.topic)`.as('topic_key'), eb.fn.max('m.id').as('max_id')])
    .where('m.channel_id', '=', channelId)
    .groupBy(sql`lower(m.topic)`);
  if (onlyWithRowOf !== null) {
    q = q.innerJoin('user_messages as um', (j) =>
      j.onRef('um.message_id', '=', 'm.id').on('um.user_id', '=', onlyWithRowOf),
    );
  }
  const groups = await q.execute();
  const ids = groups.map((g) => Number(g.max_id));
  const names = new Map<number, string>();
  for (const part of chunks(ids)) {
    const rows = await db
      .selectFrom('messages')
      .select(['id', 'topic'])
      .where('id', 'in', part)
      .execute();
    for (const r of rows) names.set(r.id, r.topic);
  }
  return ids
    .map((id) => ({ name: names.get(id) ?? '', max_id: id }))
    .sort((a, b) => b.max_id - a.max_id);
}

const minMessageIdOfChannel = compiledQuery(1, (db, channelId: number) =>
  db
    .selectFrom('messages')
    .select((eb) => eb.fn.min('id').as('id'))
    .where('channel_id', '=', channelId),
);

export async function minChannelMessageId(db: Q, channelId: number): Promise<number | null> {
  const row = await minMessageIdOfChannel.first(db, channelId);
  return row?.id === null || row?.id === undefined ? null : Number(row.id);
}

/** An unread message of a user, with where it was sent. */
export interface UnreadRow {
  message_id: number;
  flags: number;
  channel_id: number | null;
  topic: string;
  recipient_id: number;
  sender_id: number;
}

/** The user's unread messages, oldest first, at most limit of them. */
export async function listUnreadMessages(
  db: Q,
  userId: number,
  limit: number,
): Promise<UnreadRow[]> {
  return db
    .selectFrom('user_messages as um')
    .innerJoin('messages as m', 'm.id', 'um.message_id')
    .select([
      'um.message_id',
      'um.flags',
      'm.channel_id',
      'm.topic',
      'm.recipient_id',
      'm.sender_id',
    ])
    .where('um.user_id', '=', userId)
    .where(sql<boolean>`(um.flags & 1) = 0`)
    .orderBy('um.message_id', 'desc')
    .limit(limit)
    .execute()
    .then((rows) => rows.reverse());
}

export async function listStarredMessageIds(db: Q, userId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('user_messages')
    .select('message_id')
    .where('user_id', '=', userId)
    .where(sql<boolean>`(flags & 2) <> 0`)
    .orderBy('message_id')
    .execute();
  return rows.map((r) => r.message_id);
}

/** The user's most recent direct messages: conversation and message id, newest first. */
export async function listRecentDirectMessages(
  db: Q,
  userId: number,
  limit: number,
): Promise<Array<{ recipient_id: number; message_id: number }>> {
  return db
    .selectFrom('user_messages as um')
    .innerJoin('messages as m', 'm.id', 'um.message_id')
    .select(['m.recipient_id', 'um.message_id'])
    .where('um.user_id', '=', userId)
    .where('m.channel_id', 'is', null)
    .orderBy('um.message_id', 'desc')
    .limit(limit)
    .execute();
}

/** Each user's alert words. */
export async function listAlertWords(db: Q, userIds: number[]): Promise<Map<number, string[]>> {
  const rows: Array<{ user_id: number; word: string }> = [];
  for (const part of chunks([...new Set(userIds)])) {
    rows.push(
      ...(await db
        .selectFrom('alert_words')
        .select(['user_id', 'word'])
        .where('user_id', 'in', part)
        .execute()),
    );
  }
  return groupAlertWords(rows);
}

/**
 * The alert words of a channel's active subscribers and of the sender, by user. Kept by
 * channel and by user apart: kept by sender and channel together, a large channel's words
 * were kept again for every member who posted there.
 */
export async function listChannelAlertWords(
  db: Q,
  channelId: number,
  userId: number,
): Promise<Map<number, string[]>> {
  const words = groupAlertWords(await subscriberAlertWords.all(db, channelId));
  const own = await userAlertWords.all(db, userId);
  if (own.length > 0)
    words.set(
      userId,
      own.map((r) => r.word),
    );
  return words;
}

const subscriberAlertWords = cachedQuery(1, (db, channelId: number) =>
  db
    .selectFrom('alert_words')
    .select(['user_id', 'word'])
    .where('user_id', 'in', (eb) =>
      eb
        .selectFrom('subscriptions')
        .select('user_id')
        .where('channel_id', '=', channelId)
        .where('active', '=', 1),
    ),
);

const userAlertWords = cachedQuery(1, (db, userId: number) =>
  db.selectFrom('alert_words').select(['user_id', 'word']).where('user_id', '=', userId),
);

function groupAlertWords(
  rows: ReadonlyArray<{ user_id: number; word: string }>,
): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const r of rows) {
    const list = out.get(r.user_id);
    if (list) list.push(r.word);
    else out.set(r.user_id, [r.word]);
  }
  return out;
}

/** Named user groups of the organization (system groups included), for mentions. */
export async function listNamedGroups(
  db: Q,
  realmId: number,
): Promise<Array<{ id: number; name: string; deactivated: number; settings: string }>> {
  const rows = await db
    .selectFrom('user_groups')
    .select(['id', 'name', 'deactivated', 'settings'])
    .where('realm_id', '=', realmId)
    .where('name', 'is not', null)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ ...r, name: r.name as string }));
}
