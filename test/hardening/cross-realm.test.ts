// Organizations are sealed from each other: the fixture organization's owner (who may do
// almost anything in their own) naming an object of the organization 'other' gets the
// same answer as for an id that exists nowhere, on every route that takes an id or a name,
// and the other organization's object is left as it was.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import type { ApiResponse, Client, Params } from '../support/client.ts';
import { solidPng } from '../support/images.ts';
import { registerQueue } from '../support/events.ts';
import { sendToChannel } from '../support/messages.ts';

let t: TestApp;
/** The other organization's objects, each next to an id of the same kind that exists nowhere. */
type Kind =
  | 'user'
  | 'email'
  | 'channel'
  | 'message'
  | 'group'
  | 'systemGroup'
  | 'emoji'
  | 'bot'
  | 'invite'
  | 'multiuse'
  | 'queue'
  | 'draft'
  | 'folder'
  | 'field'
  | 'playground'
  | 'defaultGroup';
let other: Record<Kind, number | string>;
const MISSING: Record<Kind, number | string> = {
  user: 999999,
  email: 'nobody@other.test',
  channel: 999999,
  message: 999999,
  group: 999999,
  systemGroup: 999999,
  emoji: 'nosuchemoji',
  bot: 999999,
  invite: 999999,
  multiuse: 999999,
  queue: '1700000000:999999',
  draft: 999999,
  folder: 999999,
  field: 999999,
  playground: 999999,
  defaultGroup: 999999,
};

const otherClient = (): Client => t.as({ ...t.fx.otherOwner, host: 'other.parley.test' });
const owner = (): Client => t.as(t.fx.owner);

async function ok(res: Promise<ApiResponse>): Promise<Record<string, unknown>> {
  const r = await res;
  assert.equal(r.status, 200, `setup failed: ${r.text}`);
  return r.body;
}

/** Objects of every kind in the other organization, made by its owner. */
async function seedOtherRealm(): Promise<Record<Kind, number | string>> {
  const o = otherClient();
  const message = await ok(
    o.post('/messages', { type: 'stream', to: 'general', topic: 'there', content: 'theirs' }),
  );
  const group = await ok(
    o.post('/user_groups/create', { name: 'theirs', description: '', members: [] }),
  );
  const groups = (await ok(o.get('/user_groups'))).user_groups as Array<{
    id: number;
    name: string;
  }>;
  const png = await solidPng(8, 8);
  await ok(
    o.multipart('POST', '/realm/emoji/theiremoji', {}, [
      { field: 'file', filename: 'e.png', contentType: 'image/png', data: png },
    ]),
  );
  const bot = await ok(o.post('/bots', { full_name: 'Their Bot', short_name: 'theirs' }));
  await ok(o.post('/invites', { invitee_emails: 'x@example.com', stream_ids: [] }));
  await ok(o.post('/invites/multiuse', { stream_ids: [] }));
  const invites = (await ok(o.get('/invites'))).invites as Array<{
    id: number;
    is_multiuse: boolean;
  }>;
  const queue = await registerQueue(o);
  const draft = await ok(
    o.post('/drafts', {
      drafts: [{ type: 'stream', to: [t.fx.channels.otherGeneral.id], topic: 'x', content: 'y' }],
    }),
  );
  const folder = await ok(o.post('/channel_folders/create', { name: 'Theirs', description: '' }));
  const field = await ok(o.post('/realm/profile_fields', { name: 'Theirs', field_type: 1 }));
  const playground = await ok(
    o.post('/realm/playgrounds', {
      name: 'Theirs',
      pygments_language: 'Python',
      url_template: 'https://p.test/{code}',
    }),
  );
  await ok(
    o.post('/default_stream_groups/create', {
      group_name: 'theirs',
      description: 'd',
      stream_names: ['general'],
    }),
  );
  const defaultGroup = await t.ctx.db
    .selectFrom('default_channel_groups')
    .select('id')
    .where('realm_id', '=', t.fx.other.id)
    .executeTakeFirstOrThrow();
  return {
    user: t.fx.otherOwner.id,
    email: t.fx.otherOwner.email,
    channel: t.fx.channels.otherGeneral.id,
    message: message.id as number,
    group: group.group_id as number,
    systemGroup: groups.find((g) => g.name === 'role:members')!.id,
    emoji: 'theiremoji',
    bot: bot.user_id as number,
    invite: Math.max(...invites.filter((i) => !i.is_multiuse).map((i) => i.id)),
    multiuse: Math.max(...invites.filter((i) => i.is_multiuse).map((i) => i.id)),
    queue: queue.queue_id,
    draft: (draft.ids as number[])[0],
    folder: folder.channel_folder_id as number,
    field: field.id as number,
    playground: playground.id as number,
    defaultGroup: defaultGroup.id,
  };
}

interface Row {
  route: string;
  /** What the row names, when a route takes several ids. */
  what?: string;
  kind: Kind;
  /** The request naming `id`; `mine` is a message of the caller's, made fresh per call. */
  call: (id: number | string, mine: number) => { path: string; params?: Params };
  /** A missing id is no error here (an empty result): only the sameness is asserted. */
  quiet?: boolean;
}

const g = () => t.fx.channels.general.id;
// One line per row, wider than the usual limit, so the table reads as a table.
// prettier-ignore
const ROWS: Row[] = [
  { route: 'GET /users', kind: 'user', call: (id) => ({ path: '/users', params: { user_ids: [id] } }) },
  { route: 'GET /users/:user_id_or_email', kind: 'user', call: (id) => ({ path: `/users/${id}` }) },
  { route: 'GET /users/:user_id_or_email', kind: 'email', call: (id) => ({ path: `/users/${id}` }) },
  { route: 'PATCH /users/:user_id', kind: 'user', call: (id) => ({ path: `/users/${id}`, params: { full_name: 'X' } }) },
  { route: 'DELETE /users/:user_id', kind: 'user', call: (id) => ({ path: `/users/${id}` }) },
  { route: 'POST /users/:user_id/reactivate', kind: 'user', call: (id) => ({ path: `/users/${id}/reactivate` }) },
  { route: 'GET /users/:user_id_or_email/presence', kind: 'user', call: (id) => ({ path: `/users/${id}/presence` }) },
  { route: 'GET /users/:user_id_or_email/presence', kind: 'email', call: (id) => ({ path: `/users/${id}/presence` }) },
  { route: 'GET /users/:user_id/subscriptions/:stream_id', kind: 'user', call: (id) => ({ path: `/users/${id}/subscriptions/${g()}` }) },
  { route: 'GET /users/:user_id/subscriptions/:stream_id', kind: 'channel', call: (id) => ({ path: `/users/${t.fx.member.id}/subscriptions/${id}` }) },
  { route: 'PATCH /realm', what: 'a group setting', kind: 'systemGroup', call: (id) => ({ path: '/realm', params: { can_create_bots_group: { new: id } } }) },
  { route: 'PATCH /realm', what: 'a group member', kind: 'user', call: (id) => ({ path: '/realm', params: { can_create_bots_group: { new: { direct_members: [id], direct_subgroups: [] } } } }) },
  { route: 'PATCH /realm', what: 'the moderation channel', kind: 'channel', call: (id) => ({ path: '/realm', params: { moderation_request_channel_id: id } }) },
  { route: 'DELETE /realm/emoji/:emoji_name', kind: 'emoji', call: (id) => ({ path: `/realm/emoji/${id}` }) },
  { route: 'POST /invites', what: 'a channel', kind: 'channel', call: (id) => ({ path: '/invites', params: { invitee_emails: 'z@example.com', stream_ids: [id] } }) },
  { route: 'POST /invites', what: 'a group', kind: 'group', call: (id) => ({ path: '/invites', params: { invitee_emails: 'z@example.com', stream_ids: [], group_ids: [id] } }) },
  { route: 'POST /invites/multiuse', kind: 'channel', call: (id) => ({ path: '/invites/multiuse', params: { stream_ids: [id] } }) },
  { route: 'DELETE /invites/:invite_id', kind: 'invite', call: (id) => ({ path: `/invites/${id}` }) },
  { route: 'DELETE /invites/multiuse/:invite_id', kind: 'multiuse', call: (id) => ({ path: `/invites/multiuse/${id}` }) },
  { route: 'POST /invites/:invite_id/resend', kind: 'invite', call: (id) => ({ path: `/invites/${id}/resend` }) },
  { route: 'PATCH /bots/:bot_id', kind: 'bot', call: (id) => ({ path: `/bots/${id}`, params: { full_name: 'Mine Now' } }) },
  { route: 'PATCH /bots/:bot_id', what: 'the new bot owner', kind: 'user', call: (id) => ({ path: `/bots/${t.fx.bot.id}`, params: { bot_owner_id: id } }) },
  { route: 'DELETE /bots/:bot_id', kind: 'bot', call: (id) => ({ path: `/bots/${id}` }) },
  { route: 'POST /bots/:bot_id/api_key/regenerate', kind: 'bot', call: (id) => ({ path: `/bots/${id}/api_key/regenerate` }) },
  { route: 'GET /bots/:bot_id/config', kind: 'bot', call: (id) => ({ path: `/bots/${id}/config` }) },
  { route: 'GET /events', kind: 'queue', call: (id) => ({ path: '/events', params: { queue_id: id, last_event_id: -1, dont_block: true } }) },
  { route: 'DELETE /events', kind: 'queue', call: (id) => ({ path: '/events', params: { queue_id: id } }) },
  { route: 'GET /streams/:stream_id', kind: 'channel', call: (id) => ({ path: `/streams/${id}` }) },
  { route: 'GET /streams/:stream_id/members', kind: 'channel', call: (id) => ({ path: `/streams/${id}/members` }) },
  { route: 'PATCH /streams/:stream_id', kind: 'channel', call: (id) => ({ path: `/streams/${id}`, params: { description: 'mine' } }) },
  { route: 'PATCH /streams/:stream_id', what: 'a folder', kind: 'folder', call: (id) => ({ path: `/streams/${g()}`, params: { folder_id: id } }) },
  { route: 'DELETE /streams/:stream_id', kind: 'channel', call: (id) => ({ path: `/streams/${id}` }) },
  { route: 'POST /default_streams', kind: 'channel', call: (id) => ({ path: '/default_streams', params: { stream_id: id } }) },
  { route: 'DELETE /default_streams', kind: 'channel', call: (id) => ({ path: '/default_streams', params: { stream_id: id } }) },
  { route: 'PATCH /default_stream_groups/:group_id', kind: 'defaultGroup', call: (id) => ({ path: `/default_stream_groups/${id}`, params: { new_description: 'mine' } }) },
  { route: 'PATCH /default_stream_groups/:group_id/streams', kind: 'defaultGroup', call: (id) => ({ path: `/default_stream_groups/${id}/streams`, params: { op: 'add', stream_names: ['design'] } }) },
  { route: 'DELETE /default_stream_groups/:group_id', kind: 'defaultGroup', call: (id) => ({ path: `/default_stream_groups/${id}` }) },
  { route: 'POST /users/me/subscriptions', kind: 'user', call: (id) => ({ path: '/users/me/subscriptions', params: { subscriptions: [{ name: 'general' }], principals: [id] } }) },
  { route: 'POST /users/me/subscriptions', what: 'an email', kind: 'email', call: (id) => ({ path: '/users/me/subscriptions', params: { subscriptions: [{ name: 'general' }], principals: [id] } }) },
  { route: 'DELETE /users/me/subscriptions', kind: 'user', call: (id) => ({ path: '/users/me/subscriptions', params: { subscriptions: ['general'], principals: [id] } }) },
  { route: 'POST /users/me/subscriptions/properties', kind: 'channel', call: (id) => ({ path: '/users/me/subscriptions/properties', params: { subscription_data: [{ stream_id: id, property: 'pin_to_top', value: true }] } }) },
  { route: 'PATCH /users/me/subscriptions/:stream_id', kind: 'channel', call: (id) => ({ path: `/users/me/subscriptions/${id}`, params: { property: 'pin_to_top', value: true } }) },
  { route: 'POST /messages', what: 'a direct recipient', kind: 'user', call: (id) => ({ path: '/messages', params: { type: 'direct', to: [id], content: 'hi' } }) },
  { route: 'POST /messages', what: 'a direct recipient by email', kind: 'email', call: (id) => ({ path: '/messages', params: { type: 'direct', to: [id], content: 'hi' } }) },
  { route: 'POST /messages', what: 'a channel', kind: 'channel', call: (id) => ({ path: '/messages', params: { type: 'stream', to: id, topic: 't', content: 'hi' } }) },
  { route: 'GET /messages', what: 'a channel narrow', kind: 'channel', call: (id) => ({ path: '/messages', params: { anchor: 'newest', num_before: 5, num_after: 0, narrow: [{ operator: 'channel', operand: id }] } }) },
  { route: 'GET /messages', what: 'a dm narrow', kind: 'user', call: (id) => ({ path: '/messages', params: { anchor: 'newest', num_before: 5, num_after: 0, narrow: [{ operator: 'dm', operand: [id] }] } }) },
  { route: 'GET /messages', what: 'a sender narrow', kind: 'user', call: (id) => ({ path: '/messages', params: { anchor: 'newest', num_before: 5, num_after: 0, narrow: [{ operator: 'sender', operand: id }] } }) },
  { route: 'GET /messages', what: 'an id narrow', kind: 'message', quiet: true, call: (id) => ({ path: '/messages', params: { anchor: 'newest', num_before: 5, num_after: 0, narrow: [{ operator: 'id', operand: id }] } }) },
  { route: 'GET /messages', what: 'message_ids', kind: 'message', quiet: true, call: (id) => ({ path: '/messages', params: { message_ids: [id] } }) },
  { route: 'GET /messages', what: 'the anchor', kind: 'message', quiet: true, call: (id) => ({ path: '/messages', params: { anchor: id, num_before: 0, num_after: 0, narrow: [] } }) },
  { route: 'GET /messages/:message_id', kind: 'message', call: (id) => ({ path: `/messages/${id}` }) },
  { route: 'PATCH /messages/:message_id', kind: 'message', call: (id) => ({ path: `/messages/${id}`, params: { topic: 'mine now' } }) },
  { route: 'PATCH /messages/:message_id', what: 'the destination channel', kind: 'channel', call: (id, mine) => ({ path: `/messages/${mine}`, params: { stream_id: id } }) },
  { route: 'DELETE /messages/:message_id', kind: 'message', call: (id) => ({ path: `/messages/${id}` }) },
  { route: 'GET /messages/:message_id/history', kind: 'message', call: (id) => ({ path: `/messages/${id}/history` }) },
  { route: 'GET /users/me/:stream_id/topics', kind: 'channel', call: (id) => ({ path: `/users/me/${id}/topics` }) },
  { route: 'POST /streams/:stream_id/delete_topic', kind: 'channel', call: (id) => ({ path: `/streams/${id}/delete_topic`, params: { topic_name: 'there' } }) },
  { route: 'POST /messages/flags', kind: 'message', call: (id) => ({ path: '/messages/flags', params: { messages: [id], op: 'add', flag: 'starred' } }) },
  { route: 'POST /messages/flags/narrow', kind: 'channel', call: (id) => ({ path: '/messages/flags/narrow', params: { anchor: 'oldest', num_before: 0, num_after: 10, narrow: [{ operator: 'channel', operand: id }], op: 'add', flag: 'starred' } }) },
  { route: 'POST /mark_stream_as_read', kind: 'channel', call: (id) => ({ path: '/mark_stream_as_read', params: { stream_id: id } }) },
  { route: 'POST /mark_topic_as_read', kind: 'channel', call: (id) => ({ path: '/mark_topic_as_read', params: { stream_id: id, topic_name: 'there' } }) },
  { route: 'POST /messages/:message_id/report', kind: 'message', call: (id) => ({ path: `/messages/${id}/report`, params: { report_type: 'spam', description: 'x' } }) },
  { route: 'POST /messages/:message_id/reactions', kind: 'message', call: (id) => ({ path: `/messages/${id}/reactions`, params: { emoji_name: 'smile' } }) },
  { route: 'POST /messages/:message_id/reactions', what: 'a custom emoji', kind: 'emoji', call: (id, mine) => ({ path: `/messages/${mine}/reactions`, params: { emoji_name: id, reaction_type: 'realm_emoji' } }) },
  { route: 'DELETE /messages/:message_id/reactions', kind: 'message', call: (id) => ({ path: `/messages/${id}/reactions`, params: { emoji_name: 'smile' } }) },
  { route: 'POST /user_topics', kind: 'channel', call: (id) => ({ path: '/user_topics', params: { stream_id: id, topic: 'there', visibility_policy: 1 } }) },
  { route: 'PATCH /users/me/subscriptions/muted_topics', kind: 'channel', call: (id) => ({ path: '/users/me/subscriptions/muted_topics', params: { stream_id: id, topic: 'there', op: 'add' } }) },
  { route: 'POST /drafts', kind: 'channel', call: (id) => ({ path: '/drafts', params: { drafts: [{ type: 'stream', to: [id], topic: 't', content: 'c' }] } }) },
  { route: 'POST /drafts', what: 'a direct recipient', kind: 'user', call: (id) => ({ path: '/drafts', params: { drafts: [{ type: 'private', to: [id], topic: '', content: 'c' }] } }) },
  { route: 'PATCH /drafts/:draft_id', kind: 'draft', call: (id) => ({ path: `/drafts/${id}`, params: { draft: { type: 'stream', to: [g()], topic: 't', content: 'c' } } }) },
  { route: 'DELETE /drafts/:draft_id', kind: 'draft', call: (id) => ({ path: `/drafts/${id}` }) },
  { route: 'PATCH /channel_folders', kind: 'folder', call: (id) => ({ path: '/channel_folders', params: { order: [id] } }) },
  { route: 'PATCH /channel_folders/:channel_folder_id', kind: 'folder', call: (id) => ({ path: `/channel_folders/${id}`, params: { description: 'mine' } }) },
  { route: 'POST /typing', what: 'a direct recipient', kind: 'user', call: (id) => ({ path: '/typing', params: { op: 'start', type: 'direct', to: [id] } }) },
  { route: 'POST /typing', what: 'a channel', kind: 'channel', call: (id) => ({ path: '/typing', params: { op: 'start', type: 'stream', stream_id: id, topic: 't' } }) },
  { route: 'POST /messages/:message_id/typing', kind: 'message', call: (id) => ({ path: `/messages/${id}/typing`, params: { op: 'start' } }) },
  { route: 'POST /user_groups/create', what: 'a member', kind: 'user', call: (id) => ({ path: '/user_groups/create', params: { name: 'mixed', description: '', members: [id] } }) },
  { route: 'POST /user_groups/create', what: 'a subgroup', kind: 'group', call: (id) => ({ path: '/user_groups/create', params: { name: 'mixed', description: '', members: [], subgroups: [id] } }) },
  { route: 'POST /user_groups/create', what: 'a group setting', kind: 'systemGroup', call: (id) => ({ path: '/user_groups/create', params: { name: 'mixed', description: '', members: [], can_manage_group: id } }) },
  { route: 'PATCH /user_groups/:user_group_id', kind: 'group', call: (id) => ({ path: `/user_groups/${id}`, params: { description: 'mine' } }) },
  { route: 'POST /user_groups/:user_group_id/members', kind: 'group', call: (id) => ({ path: `/user_groups/${id}/members`, params: { add: [t.fx.member.id] } }) },
  { route: 'GET /user_groups/:user_group_id/members', kind: 'group', call: (id) => ({ path: `/user_groups/${id}/members` }) },
  { route: 'GET /user_groups/:user_group_id/members', what: 'a system group', kind: 'systemGroup', call: (id) => ({ path: `/user_groups/${id}/members` }) },
  { route: 'GET /user_groups/:user_group_id/members/:user_id', kind: 'group', call: (id) => ({ path: `/user_groups/${id}/members/${t.fx.member.id}` }) },
  { route: 'POST /user_groups/:user_group_id/subgroups', kind: 'group', call: (id) => ({ path: `/user_groups/${id}/subgroups`, params: { add: [] } }) },
  { route: 'GET /user_groups/:user_group_id/subgroups', kind: 'group', call: (id) => ({ path: `/user_groups/${id}/subgroups` }) },
  { route: 'POST /user_groups/:user_group_id/deactivate', kind: 'group', call: (id) => ({ path: `/user_groups/${id}/deactivate` }) },
  { route: 'POST /users/me/muted_users/:muted_user_id', kind: 'user', call: (id) => ({ path: `/users/me/muted_users/${id}` }) },
  { route: 'DELETE /users/me/muted_users/:muted_user_id', kind: 'user', call: (id) => ({ path: `/users/me/muted_users/${id}` }) },
  { route: 'PATCH /realm/profile_fields', kind: 'field', call: (id) => ({ path: '/realm/profile_fields', params: { order: [id] } }) },
  { route: 'PATCH /realm/profile_fields/:field_id', kind: 'field', call: (id) => ({ path: `/realm/profile_fields/${id}`, params: { hint: 'mine' } }) },
  { route: 'DELETE /realm/profile_fields/:field_id', kind: 'field', call: (id) => ({ path: `/realm/profile_fields/${id}` }) },
  { route: 'PATCH /users/me/profile_data', kind: 'field', call: (id) => ({ path: '/users/me/profile_data', params: { data: [{ id, value: 'v' }] } }) },
  { route: 'DELETE /users/me/profile_data', kind: 'field', call: (id) => ({ path: '/users/me/profile_data', params: { data: [id] } }) },
  { route: 'DELETE /realm/playgrounds/:playground_id', kind: 'playground', call: (id) => ({ path: `/realm/playgrounds/${id}` }) },
];

/** The answer with the named id written as <id> in its texts, so answers naming different ids compare. */
function normalized(res: ApiResponse, id: number | string) {
  const escaped = String(id).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const named = new RegExp(`(?<![\\w.@-])${escaped}(?![\\w@-])`, 'g');
  const body = Object.fromEntries(
    Object.entries(res.body).map(([k, v]) => [
      k,
      v === id ? '<id>' : typeof v === 'string' ? v.replace(named, '<id>') : v,
    ]),
  );
  return { status: res.status, body };
}

async function callRow(row: Row, id: number | string): Promise<ApiResponse> {
  const mine = await sendToChannel(t, t.fx.owner, t.fx.channels.general, 'mine', 'my message');
  const { path, params } = row.call(id, mine);
  return owner().request(row.route.split(' ')[0], path, params ?? {});
}

/** What the other organization's owner sees of everything the rows name. */
async function otherRealmState(): Promise<unknown[]> {
  const o = otherClient();
  const reads: Array<[string, Params?]> = [
    ['/users'],
    ['/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow: [] }],
    ['/streams', { include_all: true }],
    ['/users/me/subscriptions', { include_subscribers: true }],
    ['/user_groups', { include_deactivated_groups: true }],
    ['/realm/emoji'],
    ['/bots'],
    ['/invites'],
    ['/drafts'],
    ['/channel_folders', { include_archived: true }],
    ['/realm/profile_fields'],
    ['/users/me/muted_users'],
  ];
  const state: unknown[] = [];
  for (const [path, params] of reads) state.push((await o.get(path, params)).body);
  state.push(
    (
      await o.post('/register', {
        fetch_event_types: [
          'realm',
          'default_streams',
          'default_stream_groups',
          'realm_playgrounds',
        ],
      })
    ).body,
  );
  return state;
}

let before0: unknown[];
before(async () => {
  t = await buildTestApp();
  other = await seedOtherRealm();
  before0 = await otherRealmState();
});
after(() => t.close());

describe("another organization's objects are as good as missing", () => {
  for (const row of ROWS) {
    test(`${row.route}: ${row.what ?? row.kind}`, async () => {
      const missing = await callRow(row, MISSING[row.kind]);
      const theirs = await callRow(row, other[row.kind]);
      assert.deepEqual(normalized(theirs, other[row.kind]), normalized(missing, MISSING[row.kind]));
      if (!row.quiet)
        assert.ok(theirs.status >= 400, `${row.route} answered ${theirs.status}: ${theirs.text}`);
    });
  }
});

test('the other organization is as it was', async () => {
  const now = await otherRealmState();
  // Queue ids differ per registration; the rest must not.
  const strip = (state: unknown[]) =>
    JSON.stringify(state)
      .replace(/"queue_id":"[^"]*"/g, '')
      .replace(/"last_event_id":-?\d+/g, '');
  assert.equal(strip(now), strip(before0));
});
