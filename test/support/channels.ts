// Shared by the channel and subscription tests: the fixture channels as the API should
// present them (written from the fixture's description, not from the presenter), and
// small lookups in the test database.
import assert from 'node:assert/strict';
import { listSystemGroups } from '../../src/store/user-groups.ts';
import type { TestApp } from './app.ts';
import type { ApiResponse } from './client.ts';
import type { Fixture } from './fixture.ts';

export type ChannelKey = keyof Fixture['channels'];

/** System group name -> id in the fixture organization. */
export async function systemGroups(t: TestApp): Promise<Record<string, number>> {
  return Object.fromEntries(
    (await listSystemGroups(t.ctx.db, t.fx.realm.id)).map((g) => [g.name as string, g.id]),
  );
}

export async function channelRow(t: TestApp, id: number) {
  return t.ctx.db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

export async function subscriptionRow(t: TestApp, userId: number, channelId: number) {
  return t.ctx.db
    .selectFrom('subscriptions')
    .selectAll()
    .where('user_id', '=', userId)
    .where('channel_id', '=', channelId)
    .executeTakeFirst();
}

/** The fixture's channels: who made each, and how many (active) users it has. */
function fixtureFacts(fx: Fixture): Record<
  ChannelKey,
  {
    creator: number;
    description: string;
    inviteOnly: boolean;
    history: boolean;
    webPublic: boolean;
    subscribers: number[];
    adminsOnlyPost?: boolean;
  }
> {
  const everyone = [fx.owner, fx.admin, fx.moderator, fx.member, fx.member2, fx.guest, fx.bot];
  const ids = (...us: Array<{ id: number }>) => us.map((u) => u.id).sort((a, b) => a - b);
  return {
    general: {
      creator: fx.owner.id,
      description: 'Everyone is here.',
      inviteOnly: false,
      history: true,
      webPublic: false,
      subscribers: ids(...everyone),
    },
    design: {
      creator: fx.admin.id,
      description: '',
      inviteOnly: false,
      history: true,
      webPublic: false,
      subscribers: ids(fx.admin, fx.member),
    },
    private: {
      creator: fx.owner.id,
      description: '',
      inviteOnly: true,
      history: true,
      webPublic: false,
      subscribers: ids(fx.owner, fx.member),
    },
    secret: {
      creator: fx.moderator.id,
      description: '',
      inviteOnly: true,
      history: false,
      webPublic: false,
      subscribers: ids(fx.moderator, fx.member2),
    },
    announce: {
      creator: fx.owner.id,
      description: '',
      inviteOnly: false,
      history: true,
      webPublic: false,
      subscribers: ids(fx.owner, fx.admin, fx.moderator, fx.member, fx.member2),
      adminsOnlyPost: true,
    },
    web: {
      creator: fx.owner.id,
      description: '',
      inviteOnly: false,
      history: true,
      webPublic: true,
      subscribers: ids(fx.owner),
    },
    otherGeneral: {
      creator: fx.otherOwner.id,
      description: '',
      inviteOnly: false,
      history: true,
      webPublic: false,
      subscribers: ids(fx.otherOwner),
    },
  };
}

export function subscribersOf(t: TestApp, key: ChannelKey): number[] {
  return fixtureFacts(t.fx)[key].subscribers;
}

/** A fixture channel as every channel endpoint and event presents it. */
export async function expectedChannel(
  t: TestApp,
  key: ChannelKey,
  overrides: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const f = fixtureFacts(t.fx)[key];
  const id = t.fx.channels[key].id;
  const g = await systemGroups(t);
  const row = await channelRow(t, id);
  return {
    stream_id: id,
    name: t.fx.channels[key].name,
    description: f.description,
    rendered_description: f.description ? `<p>${f.description}</p>` : '',
    date_created: row.date_created,
    creator_id: f.creator,
    invite_only: f.inviteOnly,
    is_archived: false,
    is_web_public: f.webPublic,
    stream_post_policy: f.adminsOnlyPost ? 2 : 1,
    is_announcement_only: f.adminsOnlyPost === true,
    message_retention_days: null,
    history_public_to_subscribers: f.history,
    first_message_id: null,
    is_recently_active: true,
    topics_policy: 'inherit',
    folder_id: null,
    stream_weekly_traffic: null,
    subscriber_count: f.subscribers.length,
    can_add_subscribers_group: g['role:nobody'],
    can_administer_channel_group: { direct_members: [f.creator], direct_subgroups: [] },
    can_remove_subscribers_group: g['role:administrators'],
    can_send_message_group: f.adminsOnlyPost ? g['role:administrators'] : g['role:everyone'],
    can_subscribe_group: g['role:nobody'],
    can_delete_any_message_group: g['role:nobody'],
    can_delete_own_message_group: g['role:nobody'],
    can_move_messages_out_of_channel_group: g['role:nobody'],
    can_move_messages_within_channel_group: g['role:nobody'],
    can_resolve_topics_group: g['role:nobody'],
    ...overrides,
  };
}

/** A subscription object: the channel plus the user's settings (as stored). */
export async function expectedSubscription(
  t: TestApp,
  userId: number,
  key: ChannelKey,
  overrides: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const sub = await subscriptionRow(t, userId, t.fx.channels[key].id);
  assert.ok(sub, `user ${userId} has no subscription row for ${key}`);
  return {
    ...(await expectedChannel(t, key)),
    color: sub.color,
    pin_to_top: false,
    is_muted: false,
    in_home_view: true,
    desktop_notifications: null,
    audible_notifications: null,
    push_notifications: null,
    email_notifications: null,
    wildcard_mentions_notify: null,
    ...overrides,
  };
}

export const errorBody = (
  msg: string,
  code = 'BAD_REQUEST',
  extra: Record<string, unknown> = {},
) => ({
  result: 'error',
  msg,
  code,
  ...extra,
});

/** Asserts a 400 error body. */
export function assertError(
  res: ApiResponse,
  msg: string,
  code = 'BAD_REQUEST',
  extra: Record<string, unknown> = {},
): void {
  assert.deepEqual(res.body, errorBody(msg, code, extra), res.text);
  assert.equal(res.status, 400, res.text);
}

export const namesOf = (list: unknown): string[] =>
  (list as Array<{ name: string }>).map((s) => s.name);
