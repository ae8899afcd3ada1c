import { sql, type ExpressionBuilder, type Kysely } from 'kysely';
import { cachedQuery, compiledQuery } from './compiled.ts';
import type { Q } from './db.ts';
import type { ChannelRow, DB, SubscriptionRow } from './schema.ts';
import type { RecipientRow } from './users.ts';

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
  return channelById.first(db, realmId, id);
}

const channelById = cachedQuery(2, (db, realmId: number, id: number) =>
  db.selectFrom('channels').selectAll().where('realm_id', '=', realmId).where('id', '=', id),
);

export async function getChannelByName(
  db: Q,
  realmId: number,
  name: string,
): Promise<ChannelRow | undefined> {
  return channelByNameKey.first(db, realmId, name.trim().toLowerCase());
}

const channelByNameKey = compiledQuery(2, (db, realmId: number, nameKey: string) =>
  db
    .selectFrom('channels')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('name_key', '=', nameKey),
);

/** Every channel of the organization, by id (a cached read: every channel list starts here). */
export async function listChannels(
  db: Q,
  realmId: number,
): Promise<ReadonlyArray<Readonly<ChannelRow>>> {
  return channelsOfRealm.all(db, realmId);
}

const channelsOfRealm = cachedQuery(1, (db, realmId: number) =>
  db.selectFrom('channels').selectAll().where('realm_id', '=', realmId).orderBy('id'),
);

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
  return subscriptionOf.first(db, userId, channelId);
}

const subscriptionOf = cachedQuery(2, (db, userId: number, channelId: number) =>
  db
    .selectFrom('subscriptions')
    .selectAll()
    .where('user_id', '=', userId)
    .where('channel_id', '=', channelId),
);

/** The user's subscriptions, former ones included, by channel (a cached read). */
export async function listUserSubscriptions(
  db: Q,
  userId: number,
): Promise<ReadonlyArray<Readonly<SubscriptionRow>>> {
  return subscriptionsOfUser.all(db, userId);
}

const subscriptionsOfUser = cachedQuery(1, (db, userId: number) =>
  db.selectFrom('subscriptions').selectAll().where('user_id', '=', userId).orderBy('channel_id'),
);

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

/**
 * The active subscribers of a channel, with the columns a send needs of each recipient, by
 * id. One statement whatever the channel's size: a list of ids as parameters would run into
 * the databases' limits on bound parameters for the largest channels.
 */
export async function listSubscriberRecipients(
  db: Q,
  channelId: number,
): Promise<readonly RecipientRow[]> {
  return subscriberRecipients.all(db, channelId);
}

const subscriberRecipients = cachedQuery(1, (db, channelId: number) =>
  db
    .selectFrom('subscriptions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select(['u.id', 'u.realm_id', 'u.role', 'u.is_bot', 'u.bot_type', 'u.is_active'])
    .where('s.channel_id', '=', channelId)
    .where('s.active', '=', 1)
    .where('u.is_active', '=', 1)
    .orderBy('s.user_id'),
);

/**
 * The organization's active subscriptions, grouped by channel, deactivated users' included.
 * Deactivated users are few: the callers below read every subscription through the covering
 * index and take theirs off afterwards, which costs half as much as checking each
 * subscription against them in SQL (a register of 200 channels reads 20,000). The reads are
 * kept between calls (cached reads): a register reads every channel's subscribers, far more
 * often than subscriptions change.
 */
function activeSubscriptionsOfRealm(db: Kysely<DB>, realmId: number) {
  return db
    .selectFrom('subscriptions as s')
    .innerJoin('channels as c', 'c.id', 's.channel_id')
    .where('c.realm_id', '=', realmId)
    .where('s.active', '=', 1)
    .groupBy('s.channel_id');
}

const activeSubscriptionCountsOfRealm = cachedQuery(1, (db, realmId: number) =>
  activeSubscriptionsOfRealm(db, realmId).select((eb) => [
    's.channel_id',
    eb.fn.countAll().as('n'),
  ]),
);

// One row per channel with its ids joined in a string: a register with subscriber lists reads
// every subscriber of every visible channel, and a row per subscription costs far more to hand
// over than the query itself.
const activeSubscriberListsOfRealm = cachedQuery(1, (db, realmId: number) =>
  activeSubscriptionsOfRealm(db, realmId).select([
    's.channel_id',
    sql<string>`string_agg(cast(s.user_id as text), ',')`.as('ids'),
  ]),
);

/** The active subscriptions of the organization's deactivated users: the ones to take off. */
function listInactiveSubscriptions(db: Q, realmId: number) {
  return inactiveSubscriptionsOfRealm.all(db, realmId);
}

const inactiveSubscriptionsOfRealm = cachedQuery(1, (db, realmId: number) =>
  db
    .selectFrom('subscriptions')
    .select(['channel_id', 'user_id'])
    .where('user_id', 'in', (eb) =>
      eb
        .selectFrom('users')
        .select('id')
        .where('realm_id', '=', realmId)
        .where('is_active', '=', 0),
    )
    .where('active', '=', 1),
);

/** Active subscriber ids of several channels at once, by channel. */
export async function listSubscriberIdsByChannel(
  db: Q,
  realmId: number,
  channelIds: number[],
): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>(channelIds.map((id) => [id, []]));
  if (channelIds.length === 0) return out;
  for (const r of await activeSubscriberListsOfRealm.all(db, realmId)) {
    if (out.has(r.channel_id)) out.set(r.channel_id, parseIdList(r.ids));
  }
  const inactive = await listInactiveSubscriptions(db, realmId);
  for (const [channelId, ids] of groupIds(inactive)) {
    const list = out.get(channelId);
    if (list)
      out.set(
        channelId,
        list.filter((id) => !ids.has(id)),
      );
  }
  return out;
}

/** The number of active subscribers of several channels, by channel: the same users as above. */
export async function countSubscribersByChannel(
  db: Q,
  realmId: number,
  channelIds: number[],
): Promise<Map<number, number>> {
  const out = new Map<number, number>(channelIds.map((id) => [id, 0]));
  if (channelIds.length === 0) return out;
  for (const r of await activeSubscriptionCountsOfRealm.all(db, realmId)) {
    // PostgreSQL's count is a bigint, which pg hands over as a string.
    if (out.has(r.channel_id)) out.set(r.channel_id, Number(r.n));
  }
  for (const r of await listInactiveSubscriptions(db, realmId)) {
    const n = out.get(r.channel_id);
    if (n !== undefined) out.set(r.channel_id, n - 1);
  }
  return out;
}

function groupIds(
  rows: ReadonlyArray<{ channel_id: number; user_id: number }>,
): Map<number, Set<number>> {
  const out = new Map<number, Set<number>>();
  for (const r of rows) {
    const ids = out.get(r.channel_id);
    if (ids) ids.add(r.user_id);
    else out.set(r.channel_id, new Set([r.user_id]));
  }
  return out;
}

/**
 * The ids of a comma-separated list, ascending. Read digit by digit: a register parses one
 * list per channel, tens of thousands of ids, and splitting made a string of each. The
 * database hands them over in index order, so sorting is rarely needed.
 */
export function parseIdList(text: string): number[] {
  const ids: number[] = [];
  if (text === '') return ids;
  let value = 0;
  let sorted = true;
  for (let i = 0; i <= text.length; i++) {
    const code = i < text.length ? text.charCodeAt(i) : 44;
    if (code === 44) {
      if (ids.length > 0 && ids[ids.length - 1] > value) sorted = false;
      ids.push(value);
      value = 0;
    } else {
      value = value * 10 + (code - 48);
    }
  }
  return sorted ? ids : ids.sort((a, b) => a - b);
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

/** Channels of the realm by (case-insensitive) name, keyed by lower-cased name. */
export async function getChannelsByNames(
  db: Q,
  realmId: number,
  names: string[],
): Promise<Map<string, ChannelRow>> {
  const keys = [...new Set(names.map((n) => n.trim().toLowerCase()))];
  const out = new Map<string, ChannelRow>();
  if (keys.length === 0) return out;
  const rows = await db
    .selectFrom('channels')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('name_key', 'in', keys)
    .execute();
  for (const r of rows) out.set(r.name_key, r);
  return out;
}

/** Subscription rows of several users to several channels. */
export async function listSubscriptionRows(
  db: Q,
  userIds: number[],
  channelIds: number[],
): Promise<SubscriptionRow[]> {
  if (userIds.length === 0 || channelIds.length === 0) return [];
  return db
    .selectFrom('subscriptions')
    .selectAll()
    .where('user_id', 'in', userIds)
    .where('channel_id', 'in', channelIds)
    .execute();
}

export async function deactivateSubscriptions(
  db: Q,
  pairs: Array<{ userId: number; channelId: number }>,
): Promise<void> {
  for (const p of pairs) {
    await db
      .updateTable('subscriptions')
      .set({ active: 0 })
      .where('user_id', '=', p.userId)
      .where('channel_id', '=', p.channelId)
      .execute();
  }
}

/** The first message of each channel (null when it has none). */
export async function firstMessageIds(
  db: Q,
  realmId: number,
  channelIds: number[],
): Promise<Map<number, number | null>> {
  const out = new Map<number, number | null>(channelIds.map((id) => [id, null]));
  if (channelIds.length === 0) return out;
  // One look into the channel index per channel: grouping the messages of all of them
  // would read every message of every channel. Many channels (a register presents them
  // all) are read for the whole organization by one compiled query instead of a list of
  // ids, whose query would be built and compiled again on every call.
  const rows =
    channelIds.length > FIRST_IDS_BY_LIST
      ? await firstMessageIdsOfRealm.all(db, realmId)
      : await db
          .selectFrom('channels as c')
          .select((eb) => ['c.id', firstMessageIdOf(eb)])
          .where('c.id', 'in', channelIds)
          .execute();
  for (const r of rows) {
    if (r.first_id !== null && out.has(r.id)) out.set(r.id, Number(r.first_id));
  }
  return out;
}

/** Past this many channels, firstMessageIds reads the organization's every channel. */
const FIRST_IDS_BY_LIST = 20;

const firstMessageIdOf = (eb: ExpressionBuilder<DB & { c: DB['channels'] }, 'c'>) =>
  eb
    .selectFrom('messages as m')
    .select((m) => m.fn.min<number>('m.id').as('first'))
    .whereRef('m.channel_id', '=', 'c.id')
    .as('first_id');

const firstMessageIdsOfRealm = compiledQuery(1, (db, realmId: number) =>
  db
    .selectFrom('channels as c')
    .select((eb) => ['c.id', firstMessageIdOf(eb)])
    .where('c.realm_id', '=', realmId),
);

/** Whether the channel has a message outside the empty topic. */
export async function channelHasNamedTopics(db: Q, channelId: number): Promise<boolean> {
  const row = await db
    .selectFrom('messages')
    .select('id')
    .where('channel_id', '=', channelId)
    .where('topic', '!=', '')
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Ids of the realm's default channels, ascending. */
export async function listDefaultChannelIds(db: Q, realmId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('default_channels')
    .select('channel_id')
    .where('realm_id', '=', realmId)
    .orderBy('channel_id')
    .execute();
  return rows.map((r) => r.channel_id);
}

export async function addDefaultChannel(db: Q, realmId: number, channelId: number): Promise<void> {
  await db
    .insertInto('default_channels')
    .values({ realm_id: realmId, channel_id: channelId })
    .onConflict((oc) => oc.columns(['realm_id', 'channel_id']).doNothing())
    .execute();
}

export async function removeDefaultChannel(
  db: Q,
  realmId: number,
  channelId: number,
): Promise<void> {
  await db
    .deleteFrom('default_channels')
    .where('realm_id', '=', realmId)
    .where('channel_id', '=', channelId)
    .execute();
}

export interface DefaultChannelGroup {
  id: number;
  name: string;
  description: string;
  /** Channel ids, in the order of the channels' names. */
  channelIds: number[];
}

/** The realm's default channel groups, by name. */
export async function listDefaultChannelGroups(
  db: Q,
  realmId: number,
): Promise<DefaultChannelGroup[]> {
  const groups = await db
    .selectFrom('default_channel_groups')
    .selectAll()
    .where('realm_id', '=', realmId)
    .orderBy('name')
    .orderBy('id')
    .execute();
  if (groups.length === 0) return [];
  const members = await db
    .selectFrom('default_channel_group_channels as g')
    .innerJoin('channels as c', 'c.id', 'g.channel_id')
    .select(['g.group_id', 'g.channel_id'])
    .where(
      'g.group_id',
      'in',
      groups.map((g) => g.id),
    )
    .orderBy('c.name')
    .orderBy('c.id')
    .execute();
  return groups.map((g) => ({
    id: g.id,
    name: g.name,
    description: g.description,
    channelIds: members.filter((m) => m.group_id === g.id).map((m) => m.channel_id),
  }));
}

export async function getDefaultChannelGroup(
  db: Q,
  realmId: number,
  id: number,
): Promise<DefaultChannelGroup | undefined> {
  return (await listDefaultChannelGroups(db, realmId)).find((g) => g.id === id);
}

export async function defaultChannelGroupNameTaken(
  db: Q,
  realmId: number,
  name: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('default_channel_groups')
    .select('id')
    .where('realm_id', '=', realmId)
    .where('name', '=', name)
    .executeTakeFirst();
  return row !== undefined;
}

export async function insertDefaultChannelGroup(
  db: Q,
  row: { realm_id: number; name: string; description: string },
): Promise<number> {
  const inserted = await db
    .insertInto('default_channel_groups')
    .values(row)
    .returning('id')
    .executeTakeFirstOrThrow();
  return inserted.id;
}

export async function updateDefaultChannelGroup(
  db: Q,
  id: number,
  changes: { name?: string; description?: string },
): Promise<void> {
  await db.updateTable('default_channel_groups').set(changes).where('id', '=', id).execute();
}

export async function deleteDefaultChannelGroup(db: Q, id: number): Promise<void> {
  await db.deleteFrom('default_channel_group_channels').where('group_id', '=', id).execute();
  await db.deleteFrom('default_channel_groups').where('id', '=', id).execute();
}

export async function addChannelsToDefaultGroup(
  db: Q,
  groupId: number,
  channelIds: number[],
): Promise<void> {
  if (channelIds.length === 0) return;
  await db
    .insertInto('default_channel_group_channels')
    .values(channelIds.map((channel_id) => ({ group_id: groupId, channel_id })))
    .onConflict((oc) => oc.columns(['group_id', 'channel_id']).doNothing())
    .execute();
}

export async function removeChannelsFromDefaultGroup(
  db: Q,
  groupId: number,
  channelIds: number[],
): Promise<void> {
  if (channelIds.length === 0) return;
  await db
    .deleteFrom('default_channel_group_channels')
    .where('group_id', '=', groupId)
    .where('channel_id', 'in', channelIds)
    .execute();
}

/** Ids of the default channel groups holding the channel. */
export async function listDefaultGroupIdsWithChannel(db: Q, channelId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('default_channel_group_channels')
    .select('group_id')
    .where('channel_id', '=', channelId)
    .orderBy('group_id')
    .execute();
  return rows.map((r) => r.group_id);
}

/** Every subscription row of a channel, active or not, of any user. */
export async function listSubscriptionRowsOfChannel(
  db: Q,
  channelId: number,
): Promise<SubscriptionRow[]> {
  return db
    .selectFrom('subscriptions')
    .selectAll()
    .where('channel_id', '=', channelId)
    .orderBy('user_id')
    .execute();
}
