// Shared by the bots API tests: a bus recorder, expected bodies, and callers per role.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { captureNotices, type NoticeLog, type Sent } from './notices.ts';
import type { TestApp } from './app.ts';
import type { Client } from './client.ts';
import { ROLE_KEYS } from './fixture.ts';

export type Seen = Sent;
export type NoticeRecorder = NoticeLog;

/**
 * Collects notices from the bus. Channel events (peer lists, streams) that bot changes
 * cause are the channel suites' business, so they are left out here.
 */
export const recordNotices = (app: TestApp): NoticeLog =>
  captureNotices(app, { exclude: ['stream', 'subscription'] });

/** Notices in a canonical order, for changes whose event order is not part of the contract. */
export const unordered = (list: Seen[]): Seen[] =>
  [...list].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

export const ids = (...users: Array<{ id: number }>): number[] =>
  users.map((u) => u.id).sort((a, b) => a - b);

export const error = (msg: string, code = 'BAD_REQUEST', extra: Record<string, unknown> = {}) => ({
  result: 'error',
  msg,
  code,
  ...extra,
});

export const gravatar = (email: string, version = 1) =>
  `https://secure.gravatar.com/avatar/${createHash('md5').update(email.toLowerCase()).digest('hex')}?d=identicon&version=${version}`;

export const API_KEY = /^[A-Za-z0-9]{32}$/;

/** Active users of the fixture organization (everyone who can access a bot). */
export const everyone = (t: TestApp): number[] =>
  ids(t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member, t.fx.member2, t.fx.guest, t.fx.bot);

/** The fixture bot's managers: the administrators and its owner, member. */
export const helperBotManagers = (t: TestApp): number[] => ids(t.fx.owner, t.fx.admin, t.fx.member);

/** The fixture bot as GET /bots and realm_bot add show it. */
export function helperBot(
  t: TestApp,
  changes: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    user_id: t.fx.bot.id,
    email: 'helper-bot@parley.test',
    full_name: 'Helper Bot',
    bot_type: 1,
    is_active: true,
    api_key: t.fx.bot.api_key,
    avatar_url: gravatar('helper-bot@parley.test'),
    default_sending_stream: null,
    default_events_register_stream: null,
    default_all_public_streams: false,
    owner_id: t.fx.member.id,
    services: [],
    ...changes,
  };
}

export type Who = (typeof ROLE_KEYS)[number] | 'badKey' | 'noAuth';
export const EVERY_CALLER: Who[] = [...ROLE_KEYS, 'badKey', 'noAuth'];
/** The callers who manage the fixture bot: the administrators and its owner. */
export const MANAGES_HELPER_BOT: Who[] = ['owner', 'admin', 'member'];

export function as(t: TestApp, who: Who): Client {
  if (who === 'noAuth') return t.as(null);
  if (who === 'badKey') return t.as({ email: t.fx.member.email, api_key: 'Z'.repeat(32) });
  return t.as(t.fx[who]);
}

const UNAUTHORIZED: Partial<Record<Who, string>> = {
  deactivated: 'Account is deactivated',
  badKey: 'Invalid API key',
  noAuth: 'Missing authorization header for basic auth',
};

/** For callers who cannot authenticate, check the 401 and return true. */
export function assertUnauthorized(who: Who, res: { status: number; body: unknown }): boolean {
  const msg = UNAUTHORIZED[who];
  if (!msg) return false;
  assert.equal(res.status, 401);
  assert.deepEqual(res.body, error(msg, 'UNAUTHORIZED'));
  return true;
}

export async function groupId(t: TestApp, name: string): Promise<number> {
  const row = await t.ctx.db
    .selectFrom('user_groups')
    .select('id')
    .where('realm_id', '=', t.fx.realm.id)
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Create a bot; the email assumes the default organization. */
export async function createBot(
  client: Client,
  params: Record<string, unknown>,
): Promise<{ user_id: number; api_key: string; email: string }> {
  const res = await client.post('/bots', { full_name: 'Test Bot', short_name: 'test', ...params });
  assert.equal(res.status, 200, res.text);
  return {
    user_id: res.body.user_id as number,
    api_key: res.body.api_key as string,
    email: `${String(params.short_name ?? 'test').toLowerCase()}-bot@parley.test`,
  };
}

export async function botsOf(client: Client): Promise<Record<string, unknown>[]> {
  const res = await client.get('/bots');
  assert.equal(res.status, 200, res.text);
  return res.body.bots as Record<string, unknown>[];
}

/** A bot's `services`, as this client's GET /bots lists it. */
export async function servicesOf(
  client: Client,
  botId: number,
): Promise<Record<string, unknown>[]> {
  const bot = (await botsOf(client)).find((b) => b.user_id === botId);
  assert.ok(bot, `bot ${botId} is not listed`);
  return bot.services as Record<string, unknown>[];
}
