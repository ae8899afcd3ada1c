// Shared by the message tests: sending through HTTP, a clock tests move, and the message
// objects the API should return, written from the API's description (not the presenter).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { doSubscribeUsers } from '../../src/actions/channels.ts';
import { withTransaction } from '../../src/actions/transaction.ts';
import { doCreateUser } from '../../src/actions/users.ts';
import { getChannel } from '../../src/store/channels.ts';
import { getRealmById } from '../../src/store/realms.ts';
import type { TestApp } from './app.ts';
import type { ApiResponse, Params } from './client.ts';
import type { FixtureChannel, FixtureUser } from './fixture.ts';

/** A fixed start time for message tests (2025-01-01T00:00:00Z). */
export const T0 = 1735689600;

/** Replace the app's clock; returns a setter in UNIX seconds. */
export function useClock(t: TestApp, start = T0): (seconds: number) => void {
  let now = start;
  t.ctx.clock = { nowMs: () => now * 1000 };
  return (s) => {
    now = s;
  };
}

export async function sendToChannel(
  t: TestApp,
  who: FixtureUser,
  channel: FixtureChannel | string | number,
  topic: string,
  content: string,
  extra: Params = {},
): Promise<number> {
  const to = typeof channel === 'object' ? channel.name : channel;
  const res = await t.as(who).post('/messages', { type: 'stream', to, topic, content, ...extra });
  assert.equal(res.status, 200, `send failed: ${res.text}`);
  return res.body.id as number;
}

export async function sendDirect(
  t: TestApp,
  who: FixtureUser,
  to: FixtureUser[],
  content: string,
  extra: Params = {},
): Promise<number> {
  const res = await t
    .as(who)
    .post('/messages', { type: 'direct', to: to.map((u) => u.id), content, ...extra });
  assert.equal(res.status, 200, `send failed: ${res.text}`);
  return res.body.id as number;
}

/** GET /messages; fails unless it succeeds. */
export async function getMessages(
  t: TestApp,
  who: FixtureUser,
  params: Params,
): Promise<Record<string, unknown>> {
  const res = await t.as(who).get('/messages', params);
  assert.equal(res.status, 200, `GET /messages failed: ${res.text}`);
  return res.body;
}

/** Ids of the messages GET /messages returns for this narrow (everything, oldest first). */
export async function idsIn(t: TestApp, who: FixtureUser, narrow: unknown[]): Promise<number[]> {
  const body = await getMessages(t, who, {
    anchor: 'oldest',
    num_before: 0,
    num_after: 1000,
    narrow,
  });
  return (body.messages as Array<{ id: number }>).map((m) => m.id);
}

export function assertError(res: ApiResponse, status: number, code: string, msg: string): void {
  assert.deepEqual(
    { status: res.status, body: res.body },
    { status, body: { result: 'error', msg, code } },
  );
}

export function gravatar(email: string, version = 1): string {
  const hash = createHash('md5').update(email.toLowerCase()).digest('hex');
  return `https://secure.gravatar.com/avatar/${hash}?d=identicon&version=${version}`;
}

export interface ExpectedMessage {
  id: number;
  sender: FixtureUser;
  html: string;
  timestamp?: number;
  client?: string;
  flags?: string[];
  /** A channel message: its channel, topic and recipient id. */
  channel?: FixtureChannel & { recipientId: number };
  topic?: string;
  /** A direct message: participants and the conversation's recipient id. */
  direct?: { users: FixtureUser[]; recipientId: number };
  /** avatar_url: null under client_gravatar (the default for GET /messages). */
  avatarNull?: boolean;
}

/** The message object GET /messages returns with default parameters. */
export function expectedMessage(e: ExpectedMessage): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: e.id,
    sender_id: e.sender.id,
    content: e.html,
    recipient_id: e.channel?.recipientId ?? e.direct?.recipientId,
    timestamp: e.timestamp ?? T0,
    client: e.client ?? 'lightMyRequest',
    subject: e.channel ? (e.topic ?? '') : '',
    topic_links: [],
    is_me_message: false,
    reactions: [],
    submessages: [],
    sender_full_name: e.sender.full_name,
    sender_email: e.sender.email,
    sender_realm_str: '',
    display_recipient: e.channel
      ? e.channel.name
      : [...e.direct!.users]
          .sort((a, b) => a.id - b.id)
          .map((u) => ({
            id: u.id,
            email: u.email,
            full_name: u.full_name,
            is_mirror_dummy: false,
          })),
    type: e.channel ? 'stream' : 'private',
    avatar_url: e.avatarNull === false ? gravatar(e.sender.delivery_email) : null,
    content_type: 'text/html',
    flags: e.flags ?? [],
  };
  if (e.channel) out.stream_id = e.channel.id;
  return out;
}

/** The recipient id of a fixture channel (its conversation). */
export async function channelRecipientId(t: TestApp, channelId: number): Promise<number> {
  const row = await t.ctx.db
    .selectFrom('channels')
    .select('recipient_id')
    .where('id', '=', channelId)
    .executeTakeFirstOrThrow();
  return row.recipient_id!;
}

export async function messageRecipientId(t: TestApp, messageId: number): Promise<number> {
  const row = await t.ctx.db
    .selectFrom('messages')
    .select('recipient_id')
    .where('id', '=', messageId)
    .executeTakeFirstOrThrow();
  return row.recipient_id;
}

/** Each user's flag bitmask on a message (users without a row are absent). */
export async function rowsOf(t: TestApp, messageId: number): Promise<Record<number, number>> {
  const rows = await t.ctx.db
    .selectFrom('user_messages')
    .select(['user_id', 'flags'])
    .where('message_id', '=', messageId)
    .execute();
  return Object.fromEntries(rows.map((r) => [r.user_id, r.flags]));
}

/** Change an organization setting directly (setup, not the thing under test). */
export async function setRealmSetting(t: TestApp, name: string, value: unknown): Promise<void> {
  const row = await t.ctx.db
    .selectFrom('realms')
    .select('settings')
    .where('id', '=', t.fx.realm.id)
    .executeTakeFirstOrThrow();
  const settings = JSON.parse(row.settings) as Record<string, unknown>;
  settings[name] = value;
  await t.ctx.db
    .updateTable('realms')
    .set({ settings: JSON.stringify(settings) })
    .where('id', '=', t.fx.realm.id)
    .execute();
}

/** Change a channel's columns or group settings directly (setup). */
export async function setChannel(
  t: TestApp,
  channelId: number,
  changes: { topics_policy?: string; is_archived?: number; groups?: Record<string, number> },
): Promise<void> {
  const row = await t.ctx.db
    .selectFrom('channels')
    .select('settings')
    .where('id', '=', channelId)
    .executeTakeFirstOrThrow();
  const settings = { ...(JSON.parse(row.settings) as Record<string, number>), ...changes.groups };
  const { groups: _g, ...columns } = changes;
  await t.ctx.db
    .updateTable('channels')
    .set({ ...columns, settings: JSON.stringify(settings) })
    .where('id', '=', channelId)
    .execute();
}

/** A new member (or other role) of the fixture organization, subscribed to these channels. */
export async function addUser(
  t: TestApp,
  name: string,
  opts: { role?: number; channels?: number[] } = {},
): Promise<FixtureUser> {
  const email = `${name.toLowerCase().replace(/[^a-z0-9]/g, '')}@parley.test`;
  const row = await withTransaction(t.ctx, t.fx.realm.id, async (work) => {
    const realm = (await getRealmById(work.db, t.fx.realm.id))!;
    const user = await doCreateUser(t.ctx, work, realm, {
      email,
      fullName: name,
      role: opts.role ?? 400,
    });
    for (const id of opts.channels ?? []) {
      const channel = (await getChannel(work.db, realm.id, id))!;
      await doSubscribeUsers(t.ctx, work, realm, channel, [user]);
    }
    return user;
  });
  return {
    id: row.id,
    email: row.email,
    delivery_email: row.delivery_email,
    full_name: row.full_name,
    api_key: row.api_key,
    password: '',
    role: row.role,
  };
}
