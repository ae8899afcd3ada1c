import type { Q } from './db.ts';
import type { ChannelRow, SubscriptionRow } from './schema.ts';

export type NewChannel = Omit<ChannelRow, 'id' | 'recipient_id'>;

export async function insertChannel(db: Q, row: NewChannel): Promise<ChannelRow> {
  const channel = await db
    .insertInto('channels')
    .values(row)
    .returningAll()
    .executeTakeFirstOrThrow();
  const recipient = await db
    .insertInto('recipients')
    .values({ realm_id: row.realm_id, channel_id: channel.id, direct_key: null })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db
    .updateTable('channels')
    .set({ recipient_id: recipient.id })
    .where('id', '=', channel.id)
    .execute();
  return { ...channel, recipient_id: recipient.id };
}

export async function updateChannel(
  db: Q,
  id: number,
  changes: Partial<Omit<ChannelRow, 'id' | 'realm_id'>>,
): Promise<void> {
  await db.updateTable('channels').set(changes).where('id', '=', id).execute();
}

export async function getChannel(
  db: Q,
  realmId: number,
  id: number,
): Promise<ChannelRow | undefined> {
  return db
    .selectFrom('channels')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function getChannelByName(
  db: Q,
  realmId: number,
  name: string,
): Promise<ChannelRow | undefined> {
  return db
    .selectFrom('channels')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('name_key', '=', name.trim().toLowerCase())
    .executeTakeFirst();
}

export async function listChannels(db: Q, realmId: number): Promise<ChannelRow[]> {
  return db
    .selectFrom('channels')
    .selectAll()
    .where('realm_id', '=', realmId)
    .orderBy('id')
    .execute();
}

export async function listChannelsByIds(
  db: Q,
  realmId: number,
  ids: number[],
): Promise<ChannelRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('channels')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('id', 'in', ids)
    .orderBy('id')
    .execute();
}

export async function getSubscription(
  db: Q,
  userId: number,
  channelId: number,
): Promise<SubscriptionRow | undefined> {
  return db
    .selectFrom('subscriptions')
    .selectAll()
    .where('user_id', '=', userId)
    .where('channel_id', '=', channelId)
    .executeTakeFirst();
}

/** All subscription rows of a user, active or not. */
export async function listUserSubscriptions(db: Q, userId: number): Promise<SubscriptionRow[]> {
  return db
    .selectFrom('subscriptions')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('channel_id')
    .execute();
}

/** Active subscribers of a channel who are themselves active users. */
export async function listSubscriberIds(db: Q, channelId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('subscriptions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select('s.user_id')
    .where('s.channel_id', '=', channelId)
    .where('s.active', '=', 1)
    .where('u.is_active', '=', 1)
    .orderBy('s.user_id')
    .execute();
  return rows.map((r) => r.user_id);
}

/** Active subscriber ids of several channels at once, by channel. */
export async function listSubscriberIdsByChannel(
  db: Q,
  channelIds: number[],
): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>(channelIds.map((id) => [id, []]));
  if (channelIds.length === 0) return out;
  const rows = await db
    .selectFrom('subscriptions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select(['s.channel_id', 's.user_id'])
    .where('s.channel_id', 'in', channelIds)
    .where('s.active', '=', 1)
    .where('u.is_active', '=', 1)
    .orderBy('s.user_id')
    .execute();
  for (const r of rows) out.get(r.channel_id)?.push(r.user_id);
  return out;
}

export async function upsertSubscription(db: Q, row: SubscriptionRow): Promise<void> {
  await db
    .insertInto('subscriptions')
    .values(row)
    .onConflict((oc) => oc.columns(['user_id', 'channel_id']).doUpdateSet({ active: row.active }))
    .execute();
}

export async function updateSubscription(
  db: Q,
  userId: number,
  channelId: number,
  changes: Partial<Omit<SubscriptionRow, 'user_id' | 'channel_id'>>,
): Promise<void> {
  await db
    .updateTable('subscriptions')
    .set(changes)
    .where('user_id', '=', userId)
    .where('channel_id', '=', channelId)
    .execute();
}

/** Users who share an active subscription with the user (for guests with limited access). */
export async function listUsersSharingChannels(db: Q, userId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('subscriptions as mine')
    .innerJoin('subscriptions as theirs', 'theirs.channel_id', 'mine.channel_id')
    .select('theirs.user_id')
    .distinct()
    .where('mine.user_id', '=', userId)
    .where('mine.active', '=', 1)
    .where('theirs.active', '=', 1)
    .execute();
  return rows.map((r) => r.user_id);
}
