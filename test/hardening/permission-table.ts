// Who may do what: one row per registered route (method and path as registered), the
// callers allowed to call it, and what every other caller gets back. Each row's `call`
// builds a request that succeeds for an allowed caller; it runs once per caller, in a
// fresh app per row, so it creates whatever that one call consumes (a message to
// delete, an invitation to revoke). Callers that cannot authenticate (deactivated,
// badKey, noAuth) get UNAUTHORIZED on every authenticated route unless a row says so.
import type { TestApp } from '../support/app.ts';
import type { Params } from '../support/client.ts';
import { ROLE_KEYS } from '../support/fixture.ts';
import { err, type Who } from '../support/callers.ts';
import { animated, COLORS, solidPng } from '../support/images.ts';
import { sendToChannel } from '../support/messages.ts';
import { createGroup } from '../support/user-groups.ts';

export interface FilePart {
  field: string;
  filename: string;
  contentType: string;
  data: Buffer;
}

export interface Call {
  /** Below /api/v1, or the whole URL when `raw`. */
  path: string;
  params?: Params;
  /** Sent as multipart/form-data with these files. */
  files?: FilePart[];
  /** A URL outside /api/v1, fetched with the caller's credentials. */
  raw?: boolean;
}

export interface Outcome {
  status: number;
  body: Record<string, unknown>;
}

export interface Row {
  /** Method and path exactly as registered, e.g. 'DELETE /messages/:message_id'. */
  route: string;
  allow: readonly Who[];
  /** What every refused authenticated caller gets. */
  deny?: Outcome;
  /** Per-caller outcomes that differ from `deny` (or from UNAUTHORIZED). */
  except?: Partial<Record<Who, Outcome>>;
  call: (t: TestApp, who: Who) => Promise<Call> | Call;
  /** A fresh app for every caller: one caller's success would change the next one's outcome. */
  isolate?: boolean;
}

const no = (
  status: number,
  msg: string,
  code = 'BAD_REQUEST',
  extra: Record<string, unknown> = {},
): Outcome => ({ status, body: err(msg, code, extra) });
const ADMIN = no(400, 'Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
const INSUFFICIENT = no(400, 'Insufficient permission', 'UNAUTHORIZED_PRINCIPAL');
/** The same words with the plain code, where the reference server raises it so. */
const INSUFFICIENT_400 = no(400, 'Insufficient permission');
const NOT_GUEST = no(400, 'Not allowed for guest users');
const NO_BOTS = no(400, 'This endpoint does not accept bot requests.');

export const ANYONE: readonly Who[] = [...ROLE_KEYS, 'badKey', 'noAuth'];
export const USERS: readonly Who[] = ['owner', 'admin', 'moderator', 'member', 'guest', 'bot'];
export const HUMANS: readonly Who[] = ['owner', 'admin', 'moderator', 'member', 'guest'];
export const NON_GUESTS: readonly Who[] = ['owner', 'admin', 'moderator', 'member', 'bot'];
export const NON_GUEST_HUMANS: readonly Who[] = ['owner', 'admin', 'moderator', 'member'];
export const MODERATORS: readonly Who[] = ['owner', 'admin', 'moderator'];
export const ADMINS: readonly Who[] = ['owner', 'admin'];
export const OWNERS: readonly Who[] = ['owner'];

let serial = 0;
/** A name no other call in the process has used. */
const fresh = (prefix: string) => `${prefix}${++serial}`;
const png = async (): Promise<FilePart[]> => [
  { field: 'file', filename: 'x.png', contentType: 'image/png', data: await solidPng(8, 8) },
];
/** The caller's own fixture user, for setup; the member for callers that cannot log in. */
const selfOf = (t: TestApp, who: Who) =>
  (USERS as Who[]).includes(who) ? t.fx[who as 'member'] : t.fx.member;
const general = (t: TestApp) => t.fx.channels.general;
/** A message by member2 in #general: "someone else's message" for every caller. */
const othersMessage = (t: TestApp) =>
  sendToChannel(t, t.fx.member2, general(t), 'topic', fresh('hello '));
async function uploadEmoji(t: TestApp, name: string): Promise<void> {
  const res = await t.as(t.fx.member2).multipart('POST', `/realm/emoji/${name}`, {}, await png());
  if (res.status !== 200) throw new Error(res.text);
}
async function okBody(
  res: Promise<{ status: number; text: string; body: Record<string, unknown> }>,
): Promise<Record<string, unknown>> {
  const r = await res;
  if (r.status !== 200) throw new Error(`setup failed: ${r.text}`);
  return r.body;
}
const newUser = async (t: TestApp, name: string) =>
  okBody(
    t.as(t.fx.owner).post('/users', {
      email: `${name}@parley.test`,
      password: 'a strong enough password',
      full_name: name,
    }),
  );
const emailInvite = async (t: TestApp): Promise<number> => {
  await okBody(
    t
      .as(t.fx.admin)
      .post('/invites', { invitee_emails: `${fresh('inv')}@example.com`, stream_ids: [] }),
  );
  const list = (await okBody(t.as(t.fx.owner).get('/invites'))).invites as Array<{
    id: number;
    is_multiuse: boolean;
  }>;
  return Math.max(...list.filter((i) => !i.is_multiuse).map((i) => i.id));
};
const multiuseInvite = async (t: TestApp) =>
  okBody(t.as(t.fx.admin).post('/invites/multiuse', { stream_ids: [] }));
const newBot = async (t: TestApp) =>
  (
    await okBody(
      t.as(t.fx.member2).post('/bots', { full_name: fresh('Spare '), short_name: fresh('spare') }),
    )
  ).user_id as number;
const newDraft = async (t: TestApp, who: Who) => {
  const me = selfOf(t, who);
  const body = await okBody(
    t.as(me).post('/drafts', {
      drafts: [{ type: 'stream', to: [general(t).id], topic: 't', content: 'c', timestamp: 1 }],
    }),
  );
  return (body.ids as number[])[0];
};
const profileField = async (t: TestApp) =>
  (
    await okBody(
      t.as(t.fx.owner).post('/realm/profile_fields', { name: fresh('F'), field_type: 1 }),
    )
  ).id as number;
const channelFolder = async (t: TestApp) =>
  (
    await okBody(
      t.as(t.fx.owner).post('/channel_folders/create', { name: fresh('folder'), description: '' }),
    )
  ).channel_folder_id as number;
const defaultGroup = async (t: TestApp) => {
  const name = fresh('dg');
  await okBody(
    t.as(t.fx.owner).post('/default_stream_groups/create', {
      group_name: name,
      description: 'd',
      stream_names: ['design'],
    }),
  );
  const row = await t.ctx.db
    .selectFrom('default_channel_groups' as never)
    .select('id' as never)
    .where('name' as never, '=', name as never)
    .executeTakeFirstOrThrow();
  return (row as { id: number }).id;
};
/** A group member2 created: others manage it through can_manage_all_groups. */
const userGroup = (t: TestApp) => createGroup(t, t.fx.member2, fresh('group'));

// One line per row, wider than the usual limit, so the table reads as a table.
// prettier-ignore
export const PERMISSION_TABLE: Row[] = [
  // Server and authentication
  { route: 'GET /server_settings', allow: ANYONE, call: () => ({ path: '/server_settings' }) },
  {
    route: 'POST /fetch_api_key',
    allow: ANYONE,
    call: (t) => ({
      path: '/fetch_api_key',
      params: { username: t.fx.member.delivery_email, password: t.fx.member.password },
    }),
  },
  { route: 'GET /openapi.json', allow: ANYONE, call: () => ({ path: '/openapi.json' }) },
  // Users
  { route: 'GET /users', allow: USERS, call: () => ({ path: '/users' }) },
  { route: 'GET /users/me', allow: USERS, call: () => ({ path: '/users/me' }) },
  { route: 'GET /users/:user_id_or_email', allow: USERS, call: (t) => ({ path: `/users/${t.fx.member2.id}` }) },
  {
    route: 'POST /users',
    allow: ADMINS,
    deny: ADMIN,
    call: () => ({
      path: '/users',
      params: {
        email: `${fresh('new')}@parley.test`,
        password: 'a strong enough password',
        full_name: 'New',
      },
    }),
  },
  { route: 'PATCH /users/:user_id', allow: ADMINS, deny: INSUFFICIENT_400, call: (t) => ({ path: `/users/${t.fx.member2.id}`, params: { full_name: fresh('Nina ') } }) },
  // The only owner may not leave; a bot's account goes with its owner's, hence isolate.
  {
    route: 'DELETE /users/me',
    allow: ['admin', 'moderator', 'member', 'guest', 'bot'],
    except: {
      owner: no(
        400,
        'Cannot deactivate the only organization owner',
        'CANNOT_DEACTIVATE_LAST_USER',
        { is_last_owner: true, entity: 'organization owner' },
      ),
    },
    isolate: true,
    call: () => ({ path: '/users/me' }),
  },
  { route: 'DELETE /users/:user_id', allow: ADMINS, deny: INSUFFICIENT_400, call: async (t) => ({ path: `/users/${(await newUser(t, fresh('victim'))).user_id}` }) },
  {
    route: 'POST /users/:user_id/reactivate',
    allow: ADMINS,
    deny: INSUFFICIENT_400,
    call: async (t) => {
      const id = (await newUser(t, fresh('back'))).user_id as number;
      await okBody(t.as(t.fx.owner).delete(`/users/${id}`));
      return { path: `/users/${id}/reactivate` };
    },
  },
  { route: 'PATCH /settings', allow: HUMANS, deny: NO_BOTS, call: () => ({ path: '/settings', params: { enter_sends: true } }) },
  // Organization
  { route: 'PATCH /realm', allow: ADMINS, deny: ADMIN, call: () => ({ path: '/realm', params: { description: fresh('about ') } }) },
  { route: 'POST /realm/icon', allow: ADMINS, deny: ADMIN, call: async () => ({ path: '/realm/icon', files: await png() }) },
  { route: 'DELETE /realm/icon', allow: ADMINS, deny: ADMIN, call: () => ({ path: '/realm/icon' }) },
  {
    route: 'GET /user_avatars/:realm_id/realm/icon.png',
    allow: ANYONE,
    call: async (t) => {
      await okBody(t.as(t.fx.owner).multipart('POST', '/realm/icon', {}, await png()));
      return { raw: true, path: `/user_avatars/${t.fx.realm.id}/realm/icon.png` };
    },
  },
  { route: 'GET /realm/emoji', allow: USERS, call: () => ({ path: '/realm/emoji' }) },
  { route: 'POST /realm/emoji/:emoji_name', allow: NON_GUESTS, deny: INSUFFICIENT, call: async () => ({ path: `/realm/emoji/${fresh('emoji')}`, files: await png() }) },
  {
    route: 'DELETE /realm/emoji/:emoji_name',
    allow: ADMINS,
    deny: no(
      400,
      'Must be an organization administrator or emoji author',
      'UNAUTHORIZED_PRINCIPAL',
    ),
    call: async (t) => {
      const name = fresh('gone');
      await uploadEmoji(t, name);
      return { path: `/realm/emoji/${name}` };
    },
  },
  {
    route: 'GET /user_avatars/:realm_id/emoji/images/:file',
    allow: ANYONE,
    call: async (t) => {
      await uploadEmoji(t, fresh('pic'));
      const list = (await okBody(t.as(t.fx.owner).get('/realm/emoji'))).emoji as Record<
        string,
        { source_url: string }
      >;
      return { raw: true, path: Object.values(list).at(-1)!.source_url };
    },
  },
  {
    route: 'GET /user_avatars/:realm_id/emoji/images/still/:file',
    allow: ANYONE,
    call: async (t) => {
      const gif = await animated(8, 8, [COLORS.RED, COLORS.BLUE]);
      await okBody(
        t
          .as(t.fx.member2)
          .multipart('POST', `/realm/emoji/${fresh('still')}`, {}, [
            { field: 'file', filename: 'x.gif', contentType: 'image/gif', data: gif },
          ]),
      );
      const list = (await okBody(t.as(t.fx.owner).get('/realm/emoji'))).emoji as Record<
        string,
        { source_url: string; still_url: string | null }
      >;
      const last = Object.values(list).at(-1)!;
      return { raw: true, path: last.still_url! };
    },
  },
  // Invitations
  { route: 'GET /invites', allow: NON_GUEST_HUMANS, except: { guest: NOT_GUEST, bot: NO_BOTS }, call: () => ({ path: '/invites' }) },
  {
    route: 'POST /invites',
    allow: NON_GUEST_HUMANS,
    except: { guest: NOT_GUEST, bot: NO_BOTS },
    call: () => ({
      path: '/invites',
      params: { invitee_emails: `${fresh('x')}@example.com`, stream_ids: [] },
    }),
  },
  {
    route: 'POST /invites/multiuse',
    allow: ADMINS,
    deny: INSUFFICIENT,
    except: { guest: NOT_GUEST, bot: NO_BOTS },
    call: () => ({ path: '/invites/multiuse', params: { stream_ids: [] } }),
  },
  {
    route: 'DELETE /invites/:invite_id',
    allow: ADMINS,
    deny: ADMIN,
    except: { guest: NOT_GUEST, bot: NO_BOTS },
    call: async (t) => ({ path: `/invites/${await emailInvite(t)}` }),
  },
  {
    route: 'DELETE /invites/multiuse/:invite_id',
    allow: ADMINS,
    deny: ADMIN,
    except: { guest: NOT_GUEST, bot: NO_BOTS },
    call: async (t) => {
      await multiuseInvite(t);
      const list = (await okBody(t.as(t.fx.owner).get('/invites'))).invites as Array<{
        id: number;
        is_multiuse: boolean;
      }>;
      return {
        path: `/invites/multiuse/${Math.max(...list.filter((i) => i.is_multiuse).map((i) => i.id))}`,
      };
    },
  },
  {
    route: 'POST /invites/:invite_id/resend',
    allow: ADMINS,
    deny: ADMIN,
    except: { guest: NOT_GUEST, bot: NO_BOTS },
    call: async (t) => ({ path: `/invites/${await emailInvite(t)}/resend` }),
  },
  {
    route: 'POST /invites/accept',
    allow: ANYONE,
    call: async (t) => {
      const link = (await multiuseInvite(t)).invite_link as string;
      return {
        path: '/invites/accept',
        params: {
          key: /\/join\/([A-Za-z0-9]+)\/$/.exec(link)![1],
          full_name: 'Joiner',
          password: 'a strong enough password',
          email: `${fresh('joiner')}@example.com`,
        },
      };
    },
  },
  // Bots (the fixture bot belongs to member; others' bots are member2's)
  { route: 'GET /bots', allow: NON_GUEST_HUMANS, except: { guest: NOT_GUEST, bot: NO_BOTS }, call: () => ({ path: '/bots' }) },
  {
    route: 'POST /bots',
    allow: NON_GUEST_HUMANS,
    except: { guest: NOT_GUEST, bot: NO_BOTS },
    call: () => ({ path: '/bots', params: { full_name: fresh('Bot '), short_name: fresh('b') } }),
  },
  { route: 'PATCH /bots/:bot_id', allow: ADMINS, deny: INSUFFICIENT, call: async (t) => ({ path: `/bots/${await newBot(t)}`, params: { full_name: fresh('Renamed ') } }) },
  { route: 'DELETE /bots/:bot_id', allow: ADMINS, deny: INSUFFICIENT, call: async (t) => ({ path: `/bots/${await newBot(t)}` }) },
  { route: 'POST /bots/:bot_id/api_key/regenerate', allow: ADMINS, deny: INSUFFICIENT, call: async (t) => ({ path: `/bots/${await newBot(t)}/api_key/regenerate` }) },
  { route: 'GET /bots/:bot_id/config', allow: ADMINS, deny: INSUFFICIENT, call: async (t) => ({ path: `/bots/${await newBot(t)}/config` }) },
  // Event queues
  { route: 'POST /register', allow: USERS, call: () => ({ path: '/register' }) },
  {
    route: 'GET /events',
    allow: USERS,
    call: async (t, who) => {
      const me = selfOf(t, who);
      const q = await okBody(t.as(me).post('/register'));
      return {
        path: '/events',
        params: { queue_id: q.queue_id as string, last_event_id: -1, dont_block: true },
      };
    },
  },
  {
    route: 'DELETE /events',
    allow: USERS,
    call: async (t, who) => {
      const me = selfOf(t, who);
      const q = await okBody(t.as(me).post('/register'));
      return { path: '/events', params: { queue_id: q.queue_id as string } };
    },
  },
  // Channels
  { route: 'GET /streams', allow: USERS, call: () => ({ path: '/streams' }) },
  { route: 'GET /streams/:stream_id', allow: USERS, call: (t) => ({ path: `/streams/${general(t).id}` }) },
  { route: 'GET /streams/:stream_id/members', allow: USERS, call: (t) => ({ path: `/streams/${general(t).id}/members` }) },
  { route: 'GET /get_stream_id', allow: USERS, call: () => ({ path: '/get_stream_id', params: { stream: 'general' } }) },
  {
    route: 'PATCH /streams/:stream_id',
    allow: ADMINS,
    deny: no(
      400,
      'You do not have permission to administer this channel.',
      'CANNOT_ADMINISTER_CHANNEL',
    ),
    except: { guest: no(400, 'Invalid channel ID') },
    call: (t) => ({
      path: `/streams/${t.fx.channels.design.id}`,
      params: { description: fresh('about ') },
    }),
  },
  {
    route: 'DELETE /streams/:stream_id',
    allow: ADMINS,
    deny: no(
      400,
      'You do not have permission to administer this channel.',
      'CANNOT_ADMINISTER_CHANNEL',
    ),
    except: { guest: no(400, 'Invalid channel ID') },
    call: async (t) => {
      const name = fresh('doomed');
      await okBody(t.as(t.fx.owner).post('/users/me/subscriptions', { subscriptions: [{ name }] }));
      const id = (await okBody(t.as(t.fx.owner).get('/get_stream_id', { stream: name })))
        .stream_id as number;
      return { path: `/streams/${id}` };
    },
  },
  { route: 'POST /default_streams', allow: ADMINS, deny: ADMIN, call: (t) => ({ path: '/default_streams', params: { stream_id: t.fx.channels.design.id } }) },
  {
    route: 'DELETE /default_streams',
    allow: ADMINS,
    deny: ADMIN,
    call: async (t) => {
      await okBody(
        t.as(t.fx.owner).post('/default_streams', { stream_id: t.fx.channels.design.id }),
      );
      return { path: '/default_streams', params: { stream_id: t.fx.channels.design.id } };
    },
  },
  {
    route: 'POST /default_stream_groups/create',
    allow: ADMINS,
    deny: ADMIN,
    call: () => ({
      path: '/default_stream_groups/create',
      params: { group_name: fresh('dg'), description: 'd', stream_names: ['design'] },
    }),
  },
  {
    route: 'PATCH /default_stream_groups/:group_id',
    allow: ADMINS,
    deny: ADMIN,
    call: async (t) => ({
      path: `/default_stream_groups/${await defaultGroup(t)}`,
      params: { new_description: 'changed' },
    }),
  },
  {
    route: 'PATCH /default_stream_groups/:group_id/streams',
    allow: ADMINS,
    deny: ADMIN,
    call: async (t) => ({
      path: `/default_stream_groups/${await defaultGroup(t)}/streams`,
      params: { op: 'add', stream_names: ['general'] },
    }),
  },
  { route: 'DELETE /default_stream_groups/:group_id', allow: ADMINS, deny: ADMIN, call: async (t) => ({ path: `/default_stream_groups/${await defaultGroup(t)}` }) },
  // Subscriptions
  { route: 'GET /users/me/subscriptions', allow: USERS, call: () => ({ path: '/users/me/subscriptions' }) },
  {
    route: 'POST /users/me/subscriptions',
    allow: NON_GUESTS,
    deny: NOT_GUEST,
    call: () => ({
      path: '/users/me/subscriptions',
      params: { subscriptions: [{ name: fresh('c') }] },
    }),
  },
  { route: 'DELETE /users/me/subscriptions', allow: USERS, call: () => ({ path: '/users/me/subscriptions', params: { subscriptions: ['general'] } }) },
  {
    route: 'POST /users/me/subscriptions/properties',
    allow: USERS,
    call: (t) => ({
      path: '/users/me/subscriptions/properties',
      params: {
        subscription_data: [{ stream_id: general(t).id, property: 'pin_to_top', value: true }],
      },
    }),
  },
  {
    route: 'PATCH /users/me/subscriptions/:stream_id',
    allow: USERS,
    call: (t) => ({
      path: `/users/me/subscriptions/${general(t).id}`,
      params: { property: 'pin_to_top', value: true },
    }),
  },
  { route: 'GET /users/:user_id/subscriptions/:stream_id', allow: USERS, call: (t) => ({ path: `/users/${t.fx.member2.id}/subscriptions/${general(t).id}` }) },
  // Messages
  { route: 'POST /messages', allow: USERS, call: () => ({ path: '/messages', params: { type: 'stream', to: 'general', topic: 't', content: fresh('hi ') } }) },
  { route: 'GET /messages', allow: USERS, call: () => ({ path: '/messages', params: { anchor: 'newest', num_before: 5, num_after: 0, narrow: [] } }) },
  { route: 'GET /messages/:message_id', allow: USERS, call: async (t) => ({ path: `/messages/${await othersMessage(t)}` }) },
  { route: 'PATCH /messages/:message_id', allow: USERS, call: async (t) => ({ path: `/messages/${await othersMessage(t)}`, params: { topic: fresh('moved ') } }) },
  {
    route: 'DELETE /messages/:message_id',
    allow: ADMINS,
    deny: no(400, "You don't have permission to delete this message"),
    call: async (t) => ({ path: `/messages/${await othersMessage(t)}` }),
  },
  { route: 'GET /messages/:message_id/history', allow: USERS, call: async (t) => ({ path: `/messages/${await othersMessage(t)}/history` }) },
  { route: 'POST /messages/render', allow: USERS, call: () => ({ path: '/messages/render', params: { content: '**hi**' } }) },
  { route: 'GET /users/me/:stream_id/topics', allow: USERS, call: (t) => ({ path: `/users/me/${general(t).id}/topics` }) },
  {
    route: 'POST /streams/:stream_id/delete_topic',
    allow: ADMINS,
    deny: ADMIN,
    call: async (t) => {
      const topic = fresh('old ');
      await sendToChannel(t, t.fx.member2, general(t), topic, 'x');
      return { path: `/streams/${general(t).id}/delete_topic`, params: { topic_name: topic } };
    },
  },
  // Message flags
  {
    route: 'POST /messages/flags',
    allow: USERS,
    call: async (t) => ({
      path: '/messages/flags',
      params: { messages: [await othersMessage(t)], op: 'add', flag: 'starred' },
    }),
  },
  {
    route: 'POST /messages/flags/narrow',
    allow: USERS,
    call: () => ({
      path: '/messages/flags/narrow',
      params: {
        anchor: 'newest',
        num_before: 5,
        num_after: 0,
        narrow: [],
        op: 'add',
        flag: 'read',
      },
    }),
  },
  { route: 'POST /mark_all_as_read', allow: USERS, call: () => ({ path: '/mark_all_as_read' }) },
  { route: 'POST /mark_stream_as_read', allow: USERS, call: (t) => ({ path: '/mark_stream_as_read', params: { stream_id: general(t).id } }) },
  {
    route: 'POST /mark_topic_as_read',
    allow: USERS,
    call: async (t) => {
      await othersMessage(t);
      return {
        path: '/mark_topic_as_read',
        params: { stream_id: general(t).id, topic_name: 'topic' },
      };
    },
  },
  {
    route: 'POST /messages/:message_id/report',
    allow: NON_GUESTS,
    deny: NOT_GUEST,
    call: async (t) => {
      await okBody(
        t
          .as(t.fx.owner)
          .patch('/realm', { moderation_request_channel_id: t.fx.channels.private.id }),
      );
      return {
        path: `/messages/${await othersMessage(t)}/report`,
        params: { report_type: 'spam', description: 'x' },
      };
    },
  },
  // Reactions
  {
    route: 'POST /messages/:message_id/reactions',
    allow: USERS,
    call: async (t) => ({
      path: `/messages/${await othersMessage(t)}/reactions`,
      params: { emoji_name: 'smile' },
    }),
  },
  {
    route: 'DELETE /messages/:message_id/reactions',
    allow: USERS,
    call: async (t, who) => {
      const id = await othersMessage(t);
      {
        await t.as(selfOf(t, who)).post(`/messages/${id}/reactions`, { emoji_name: 'smile' });
      }
      return { path: `/messages/${id}/reactions`, params: { emoji_name: 'smile' } };
    },
  },
  // Topics, alert words, drafts
  { route: 'POST /user_topics', allow: USERS, call: (t) => ({ path: '/user_topics', params: { stream_id: general(t).id, topic: 'topic', visibility_policy: 1 } }) },
  {
    route: 'PATCH /users/me/subscriptions/muted_topics',
    allow: USERS,
    call: (t) => ({
      path: '/users/me/subscriptions/muted_topics',
      params: { stream_id: general(t).id, topic: 'topic', op: 'add' },
    }),
  },
  { route: 'GET /users/me/alert_words', allow: USERS, call: () => ({ path: '/users/me/alert_words' }) },
  { route: 'POST /users/me/alert_words', allow: USERS, call: () => ({ path: '/users/me/alert_words', params: { alert_words: ['ping'] } }) },
  { route: 'DELETE /users/me/alert_words', allow: USERS, call: () => ({ path: '/users/me/alert_words', params: { alert_words: ['ping'] } }) },
  { route: 'GET /drafts', allow: USERS, call: () => ({ path: '/drafts' }) },
  {
    route: 'POST /drafts',
    allow: USERS,
    call: (t) => ({
      path: '/drafts',
      params: {
        drafts: [{ type: 'stream', to: [general(t).id], topic: 't', content: 'c', timestamp: 1 }],
      },
    }),
  },
  {
    route: 'PATCH /drafts/:draft_id',
    allow: USERS,
    call: async (t, who) => ({
      path: `/drafts/${await newDraft(t, who)}`,
      params: {
        draft: { type: 'stream', to: [general(t).id], topic: 't', content: 'new', timestamp: 2 },
      },
    }),
  },
  { route: 'DELETE /drafts/:draft_id', allow: USERS, call: async (t, who) => ({ path: `/drafts/${await newDraft(t, who)}` }) },
  // Channel folders
  { route: 'POST /channel_folders/create', allow: ADMINS, deny: ADMIN, call: () => ({ path: '/channel_folders/create', params: { name: fresh('f'), description: '' } }) },
  { route: 'GET /channel_folders', allow: USERS, call: () => ({ path: '/channel_folders' }) },
  {
    route: 'PATCH /channel_folders',
    allow: ADMINS,
    deny: ADMIN,
    call: async (t) => {
      await channelFolder(t);
      const all = (await okBody(t.as(t.fx.owner).get('/channel_folders')))
        .channel_folders as Array<{
        id: number;
      }>;
      return { path: '/channel_folders', params: { order: all.map((f) => f.id) } };
    },
  },
  {
    route: 'PATCH /channel_folders/:channel_folder_id',
    allow: ADMINS,
    deny: ADMIN,
    call: async (t) => ({
      path: `/channel_folders/${await channelFolder(t)}`,
      params: { description: 'd' },
    }),
  },
  // Presence and typing
  { route: 'POST /users/me/presence', allow: USERS, call: () => ({ path: '/users/me/presence', params: { status: 'active' } }) },
  {
    route: 'GET /users/:user_id_or_email/presence',
    allow: USERS,
    call: async (t) => {
      await okBody(t.as(t.fx.owner).post('/users/me/presence', { status: 'active' }));
      return { path: `/users/${t.fx.owner.id}/presence` };
    },
  },
  { route: 'GET /realm/presence', allow: USERS, call: () => ({ path: '/realm/presence' }) },
  { route: 'POST /typing', allow: USERS, call: (t) => ({ path: '/typing', params: { op: 'start', type: 'stream', stream_id: general(t).id, topic: 't' } }) },
  // Typing while editing one's own message.
  {
    route: 'POST /messages/:message_id/typing',
    allow: USERS,
    call: async (t, who) => ({
      path: `/messages/${await sendToChannel(t, selfOf(t, who), general(t), 't', 'mine')}/typing`,
      params: { op: 'start' },
    }),
  },
  // User groups
  { route: 'GET /user_groups', allow: USERS, call: () => ({ path: '/user_groups' }) },
  {
    route: 'POST /user_groups/create',
    allow: NON_GUESTS,
    deny: INSUFFICIENT_400,
    call: () => ({
      path: '/user_groups/create',
      params: { name: fresh('g'), description: '', members: [] },
    }),
  },
  {
    route: 'PATCH /user_groups/:user_group_id',
    allow: OWNERS,
    deny: INSUFFICIENT_400,
    call: async (t) => ({
      path: `/user_groups/${await userGroup(t)}`,
      params: { description: 'changed' },
    }),
  },
  {
    route: 'POST /user_groups/:user_group_id/members',
    allow: OWNERS,
    deny: INSUFFICIENT_400,
    call: async (t) => ({
      path: `/user_groups/${await userGroup(t)}/members`,
      params: { add: [t.fx.member2.id] },
    }),
  },
  { route: 'GET /user_groups/:user_group_id/members', allow: USERS, call: async (t) => ({ path: `/user_groups/${await userGroup(t)}/members` }) },
  {
    route: 'GET /user_groups/:user_group_id/members/:user_id',
    allow: USERS,
    call: async (t) => ({ path: `/user_groups/${await userGroup(t)}/members/${t.fx.owner.id}` }),
  },
  {
    route: 'POST /user_groups/:user_group_id/subgroups',
    allow: OWNERS,
    deny: INSUFFICIENT_400,
    call: async (t) => ({
      path: `/user_groups/${await userGroup(t)}/subgroups`,
      params: { add: [await userGroup(t)] },
    }),
  },
  { route: 'GET /user_groups/:user_group_id/subgroups', allow: USERS, call: async (t) => ({ path: `/user_groups/${await userGroup(t)}/subgroups` }) },
  {
    route: 'POST /user_groups/:user_group_id/deactivate',
    allow: OWNERS,
    deny: INSUFFICIENT_400,
    call: async (t) => ({ path: `/user_groups/${await userGroup(t)}/deactivate` }),
  },
  // Muted users
  { route: 'POST /users/me/muted_users/:muted_user_id', allow: USERS, call: (t) => ({ path: `/users/me/muted_users/${t.fx.member2.id}` }) },
  {
    route: 'DELETE /users/me/muted_users/:muted_user_id',
    allow: USERS,
    call: async (t, who) => {
      await t.as(selfOf(t, who)).post(`/users/me/muted_users/${t.fx.member2.id}`);
      return { path: `/users/me/muted_users/${t.fx.member2.id}` };
    },
  },
  // Custom profile fields
  { route: 'GET /realm/profile_fields', allow: USERS, call: () => ({ path: '/realm/profile_fields' }) },
  { route: 'POST /realm/profile_fields', allow: ADMINS, deny: ADMIN, call: () => ({ path: '/realm/profile_fields', params: { name: fresh('Field'), field_type: 1 } }) },
  {
    route: 'PATCH /realm/profile_fields',
    allow: ADMINS,
    deny: ADMIN,
    call: async (t) => {
      await profileField(t);
      const all = (await okBody(t.as(t.fx.owner).get('/realm/profile_fields')))
        .custom_fields as Array<{ id: number }>;
      return { path: '/realm/profile_fields', params: { order: all.map((f) => f.id) } };
    },
  },
  {
    route: 'PATCH /realm/profile_fields/:field_id',
    allow: ADMINS,
    deny: ADMIN,
    call: async (t) => ({
      path: `/realm/profile_fields/${await profileField(t)}`,
      params: { hint: 'h' },
    }),
  },
  { route: 'DELETE /realm/profile_fields/:field_id', allow: ADMINS, deny: ADMIN, call: async (t) => ({ path: `/realm/profile_fields/${await profileField(t)}` }) },
  {
    route: 'PATCH /users/me/profile_data',
    allow: HUMANS,
    deny: NO_BOTS,
    call: async (t) => ({
      path: '/users/me/profile_data',
      params: { data: [{ id: await profileField(t), value: 'v' }] },
    }),
  },
  {
    route: 'DELETE /users/me/profile_data',
    allow: HUMANS,
    deny: NO_BOTS,
    call: async (t) => ({
      path: '/users/me/profile_data',
      params: { data: [await profileField(t)] },
    }),
  },
  // Playgrounds, push tokens, onboarding
  {
    route: 'POST /realm/playgrounds',
    allow: ADMINS,
    deny: ADMIN,
    call: () => ({
      path: '/realm/playgrounds',
      params: {
        name: fresh('P'),
        pygments_language: 'Python',
        url_template: 'https://p.test/{code}',
      },
    }),
  },
  {
    route: 'DELETE /realm/playgrounds/:playground_id',
    allow: ADMINS,
    deny: ADMIN,
    call: async (t) => {
      const body = await okBody(
        t.as(t.fx.owner).post('/realm/playgrounds', {
          name: fresh('P'),
          pygments_language: 'Python',
          url_template: 'https://p.test/{code}',
        }),
      );
      return { path: `/realm/playgrounds/${body.id as number}` };
    },
  },
  { route: 'POST /users/me/android_gcm_reg_id', allow: HUMANS, deny: NO_BOTS, call: () => ({ path: '/users/me/android_gcm_reg_id', params: { token: 'abcdef0123' } }) },
  {
    route: 'DELETE /users/me/android_gcm_reg_id',
    allow: HUMANS,
    deny: NO_BOTS,
    call: async (t, who) => {
      {
        await t.as(selfOf(t, who)).post('/users/me/android_gcm_reg_id', { token: 'abcdef0123' });
      }
      return { path: '/users/me/android_gcm_reg_id', params: { token: 'abcdef0123' } };
    },
  },
  {
    route: 'POST /users/me/apns_device_token',
    allow: HUMANS,
    deny: NO_BOTS,
    call: () => ({
      path: '/users/me/apns_device_token',
      params: { token: 'abcdef0123abcdef', appid: 'org.parley.app' },
    }),
  },
  {
    route: 'DELETE /users/me/apns_device_token',
    allow: HUMANS,
    deny: NO_BOTS,
    call: async (t, who) => {
      {
        await t.as(selfOf(t, who)).post('/users/me/apns_device_token', {
          token: 'abcdef0123abcdef',
          appid: 'org.parley.app',
        });
      }
      return { path: '/users/me/apns_device_token', params: { token: 'abcdef0123abcdef' } };
    },
  },
  {
    route: 'POST /users/me/onboarding_steps',
    allow: HUMANS,
    deny: NO_BOTS,
    call: () => ({
      path: '/users/me/onboarding_steps',
      params: { onboarding_step: 'visibility_policy_banner' },
    }),
  },
];
