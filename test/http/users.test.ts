// Users: listing and reading them, creating, changing names and roles, deactivating and
// reactivating, through HTTP, with the exact events each change publishes.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { buildTestApp, type TestApp } from '../support/app.ts';
import type { Client } from '../support/client.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { captureNotices, ids, type NoticeLog } from '../support/notices.ts';
import { callerFor, err, EVERY_CALLER, OK, UNAUTHORIZED, type Who } from '../support/callers.ts';

let t: TestApp;
let bus: NoticeLog;
beforeEach(async () => {
  t = await buildTestApp();
  // Channel events caused by role changes and deactivation are asserted in the channel suites.
  bus = captureNotices(t, { exclude: ['stream', 'subscription'] });
});
afterEach(async () => {
  await t.close();
});

const as = (who: Who): Client => callerFor(t, who);
const mustBeAdmin = err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
const mustBeOwner = err('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL');
const insufficient = err('Insufficient permission');

const gravatar = (email: string) =>
  `https://secure.gravatar.com/avatar/${createHash('md5').update(email).digest('hex')}?d=identicon&version=1`;

/** Active users of the fixture organization. */
const everyone = () =>
  ids(t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member, t.fx.member2, t.fx.guest, t.fx.bot);
const without = (list: number[], ...gone: Array<{ id: number }>) =>
  list.filter((id) => !gone.some((g) => g.id === id));

async function joined(id: number): Promise<string> {
  const row = await t.ctx.db
    .selectFrom('users')
    .select('date_joined')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return new Date(row.date_joined * 1000).toISOString();
}

async function groupId(name: string, realmId = t.fx.realm.id): Promise<number> {
  const row = await t.ctx.db
    .selectFrom('user_groups')
    .select('id')
    .where('realm_id', '=', realmId)
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  return row.id;
}

/** A fixture user as an administrator sees them, with the full User table of the spec. */
async function userObject(
  u: FixtureUser,
  changes: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const isBot = u.id === t.fx.bot.id;
  return {
    user_id: u.id,
    delivery_email: u.delivery_email,
    email: u.email,
    full_name: u.full_name,
    date_joined: await joined(u.id),
    is_active: u.id !== t.fx.deactivated.id,
    is_owner: u.role === 100,
    is_admin: u.role <= 200,
    is_guest: u.role === 600,
    is_bot: isBot,
    bot_type: isBot ? 1 : null,
    bot_owner_id: isBot ? t.fx.member.id : null,
    role: u.role,
    timezone: '',
    avatar_url: gravatar(u.delivery_email),
    avatar_version: 1,
    ...(isBot ? {} : { profile_data: {} }),
    ...changes,
  };
}

const FIXTURE_ORDER = [
  'owner',
  'admin',
  'moderator',
  'member',
  'member2',
  'guest',
  'bot',
  'deactivated',
] as const;

async function setVisibility(who: FixtureUser, visibility: number): Promise<void> {
  const res = await t.as(who).patch('/settings', { email_address_visibility: visibility });
  assert.deepEqual(res.body, OK);
  await bus.take();
}

/** Make guests limited to the users they share a conversation with. */
async function limitGuests(): Promise<void> {
  const res = await t
    .as(t.fx.owner)
    .patch('/realm', { can_access_all_users_group: { new: await groupId('role:members') } });
  assert.equal(res.status, 200, res.text);
  await bus.take();
}

/** Take the guest out of every channel, so a limited guest shares nothing with anyone. */
async function isolateGuest(): Promise<void> {
  await t.ctx.db
    .updateTable('subscriptions')
    .set({ active: 0 })
    .where('user_id', '=', t.fx.guest.id)
    .execute();
}

describe('GET /users', () => {
  test('lists every user, bots and deactivated users included, with client-side gravatars', async () => {
    const res = await as('admin').get('/users');
    assert.equal(res.status, 200);
    const members = [];
    for (const key of FIXTURE_ORDER) {
      const u = t.fx[key];
      const { profile_data: _omit, ...user } = await userObject(u, { avatar_url: null });
      members.push(user);
    }
    assert.deepEqual(res.body, { ...OK, members });
  });

  test('client_gravatar=false gives URLs; include_custom_profile_fields adds profile_data to humans', async () => {
    const res = await as('member').get('/users', {
      client_gravatar: false,
      include_custom_profile_fields: true,
    });
    assert.equal(res.status, 200);
    const members = [];
    for (const key of FIXTURE_ORDER) members.push(await userObject(t.fx[key]));
    assert.deepEqual(res.body, { ...OK, members });
  });

  test('user_ids narrows the list; an unknown id is refused', async () => {
    const res = await as('member').get('/users', {
      user_ids: [t.fx.bot.id, t.fx.admin.id],
      client_gravatar: false,
    });
    const { profile_data: _a, ...admin } = await userObject(t.fx.admin);
    assert.deepEqual(res.body, { ...OK, members: [admin, await userObject(t.fx.bot)] });
    for (const bad of [999, 2 ** 40, 0, -3]) {
      const r = await as('member').get('/users', { user_ids: [t.fx.admin.id, bad] });
      assert.equal(r.status, 400);
      assert.deepEqual(r.body, err(`Invalid user ID: ${bad}`));
    }
    // Users of another organization do not exist here.
    const other = await as('member').get('/users', { user_ids: [t.fx.otherOwner.id] });
    assert.deepEqual(other.body, err(`Invalid user ID: ${t.fx.otherOwner.id}`));
  });

  test('every authenticated role may list users; others get 401', async () => {
    for (const who of EVERY_CALLER) {
      const res = await as(who).get('/users');
      if (UNAUTHORIZED[who]) {
        assert.equal(res.status, 401, who);
        assert.equal(res.headers['www-authenticate'], 'Basic realm="parley"');
        assert.deepEqual(res.body, UNAUTHORIZED[who], who);
      } else {
        assert.equal(res.status, 200, who);
        assert.equal((res.body.members as unknown[]).length, 8, who);
      }
    }
  });

  test('a limited guest sees bots and their conversation partners, and placeholders for the rest', async () => {
    await limitGuests();
    await isolateGuest();
    const res = await as('guest').get('/users', { client_gravatar: false });
    assert.equal(res.status, 200);
    const placeholder = (id: number) => ({
      user_id: id,
      delivery_email: null,
      email: `user${id}@parley.test`,
      full_name: 'Unknown user',
      date_joined: '1970-01-01T00:00:00.000Z',
      is_active: true,
      is_owner: false,
      is_admin: false,
      is_guest: false,
      is_bot: false,
      bot_type: null,
      bot_owner_id: null,
      role: 400,
      timezone: '',
      avatar_url: 'http://parley.test/static/images/unknown-user-avatar.png',
      avatar_version: 1,
      profile_data: {},
    });
    const strip = async (u: FixtureUser) => {
      const { profile_data: _p, ...rest } = await userObject(u);
      return rest;
    };
    assert.deepEqual(res.body.members, [
      placeholder(t.fx.owner.id),
      placeholder(t.fx.admin.id),
      placeholder(t.fx.moderator.id),
      placeholder(t.fx.member.id),
      placeholder(t.fx.member2.id),
      await strip(t.fx.guest),
      await userObject(t.fx.bot),
      placeholder(t.fx.deactivated.id),
    ]);
    // A shared channel gives access again.
    await t.ctx.db
      .updateTable('subscriptions')
      .set({ active: 1 })
      .where('user_id', '=', t.fx.guest.id)
      .execute();
    const again = await as('guest').get('/users', { client_gravatar: false });
    const members = again.body.members as Array<Record<string, unknown>>;
    assert.deepEqual(members[3], await strip(t.fx.member));
    // Deactivated users are reached through no channel.
    assert.deepEqual(members[7], placeholder(t.fx.deactivated.id));
  });
});

describe('GET /users/me', () => {
  test("returns the caller's own user object with max_message_id", async () => {
    for (const key of ['owner', 'member', 'guest', 'bot'] as const) {
      const res = await as(key).get('/users/me');
      assert.equal(res.status, 200, key);
      assert.deepEqual(res.body, {
        ...OK,
        ...(await userObject(t.fx[key])),
        max_message_id: -1,
      });
    }
  });

  test('401 for callers who cannot authenticate', async () => {
    for (const who of ['deactivated', 'badKey', 'noAuth'] as const) {
      const res = await as(who).get('/users/me');
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, UNAUTHORIZED[who]);
    }
  });
});

describe('GET /users/{user_id} and /users/{email}', () => {
  test('reads any user by id, bots and deactivated users included', async () => {
    for (const key of ['owner', 'bot', 'deactivated', 'guest'] as const) {
      const res = await as('member').get(`/users/${t.fx[key].id}`, { client_gravatar: false });
      assert.equal(res.status, 200, key);
      const { profile_data: _p, ...user } = await userObject(t.fx[key]);
      assert.deepEqual(res.body, { ...OK, user });
    }
    const withProfile = await as('member').get(`/users/${t.fx.admin.id}`, {
      include_custom_profile_fields: true,
    });
    assert.deepEqual(withProfile.body, {
      ...OK,
      user: await userObject(t.fx.admin, { avatar_url: null }),
    });
  });

  test('unknown ids, ids of another organization and absurd ids are "No such user"', async () => {
    for (const id of [999, t.fx.otherOwner.id, 0, '99999999999999999999']) {
      const res = await as('member').get(`/users/${id}`);
      assert.equal(res.status, 400, String(id));
      assert.deepEqual(res.body, err('No such user'));
    }
  });

  test('reads by API email, case-insensitively, and by the user<id>@host form', async () => {
    for (const email of [
      t.fx.admin.email,
      'ADMIN@parley.test',
      `user${t.fx.admin.id}@parley.test`,
    ]) {
      const res = await as('member').get(`/users/${encodeURIComponent(email)}`);
      assert.equal(res.status, 200, email);
      assert.equal((res.body.user as Record<string, unknown>).user_id, t.fx.admin.id);
    }
    for (const email of ['nobody@parley.test', t.fx.otherOwner.email, 'user999@parley.test', 'x']) {
      const res = await as('member').get(`/users/${encodeURIComponent(email)}`);
      assert.deepEqual(res.body, err('No such user'), email);
    }
  });

  test('a hidden real address finds the user only for viewers allowed to see it', async () => {
    await setVisibility(t.fx.member2, 3);
    const fake = `user${t.fx.member2.id}@parley.test`;
    const byAdmin = await as('admin').get(`/users/${t.fx.member2.delivery_email}`);
    const { profile_data: _p, ...expected } = await userObject(t.fx.member2, {
      email: fake,
      avatar_url: null,
    });
    assert.deepEqual(byAdmin.body.user, expected);
    const byMember = await as('member').get(`/users/${t.fx.member2.delivery_email}`);
    assert.deepEqual(byMember.body, err('No such user'));
    const byFake = await as('member').get(`/users/${fake}`);
    // Without the real address the client cannot compute the avatar, so the server does.
    assert.deepEqual(byFake.body.user, {
      ...expected,
      delivery_email: null,
      avatar_url: gravatar(t.fx.member2.delivery_email),
    });
  });

  test('a limited guest cannot read users outside their conversations', async () => {
    await limitGuests();
    await isolateGuest();
    const res = await as('guest').get(`/users/${t.fx.member.id}`);
    assert.deepEqual(res.body, insufficient);
    const byEmail = await as('guest').get(`/users/${t.fx.member.email}`);
    assert.deepEqual(byEmail.body, insufficient);
    for (const u of [t.fx.guest, t.fx.bot]) {
      const ok = await as('guest').get(`/users/${u.id}`);
      assert.equal(ok.status, 200);
    }
  });

  test('401 for callers who cannot authenticate', async () => {
    for (const who of ['deactivated', 'badKey', 'noAuth'] as const) {
      const res = await as(who).get(`/users/${t.fx.member.id}`);
      assert.deepEqual([res.status, res.body], [401, UNAUTHORIZED[who]]);
    }
  });
});

describe('email address visibility', () => {
  test('each visibility shows the real address to exactly the roles it names', async () => {
    const fake = `user${t.fx.member2.id}@parley.test`;
    // viewer -> sees the real address, per visibility 1..5
    const table: Array<[number, Who[]]> = [
      [1, ['owner', 'admin', 'moderator', 'member', 'guest', 'bot', 'member2']],
      [2, ['owner', 'admin', 'moderator', 'member', 'bot']],
      [3, ['owner', 'admin']],
      [4, []],
      [5, ['owner', 'admin', 'moderator']],
    ];
    for (const [visibility, seeing] of table) {
      if (visibility !== 1) await setVisibility(t.fx.member2, visibility);
      for (const who of ['owner', 'admin', 'moderator', 'member', 'guest', 'bot'] as Who[]) {
        const res = await as(who).get(`/users/${t.fx.member2.id}`);
        const user = res.body.user as Record<string, unknown>;
        assert.equal(user.email, visibility === 1 ? t.fx.member2.email : fake, `${visibility}`);
        assert.equal(
          user.delivery_email,
          seeing.includes(who) ? t.fx.member2.delivery_email : null,
          `${visibility} ${who}`,
        );
      }
      // The user always sees their own address.
      const own = await as('member2').get('/users/me');
      assert.equal(own.body.delivery_email, t.fx.member2.delivery_email);
    }
  });

  test('a hidden address is still the login, and avatars are computed by the server', async () => {
    await setVisibility(t.fx.member2, 4);
    const res = await t
      .as({ email: t.fx.member2.delivery_email, api_key: t.fx.member2.api_key })
      .get('/users/me');
    assert.equal(res.status, 200);
    const fake = await t
      .as({ email: `user${t.fx.member2.id}@parley.test`, api_key: t.fx.member2.api_key })
      .get('/users/me');
    assert.equal(fake.status, 200);
    const list = await as('member').get('/users');
    const row = (list.body.members as Array<Record<string, unknown>>)[4];
    assert.equal(row.avatar_url, gravatar(t.fx.member2.delivery_email));
  });
});

describe('POST /users', () => {
  const params = {
    email: 'New.Person@Parley.test',
    password: 'a-good-password',
    full_name: 'New Person',
  };

  test('an administrator creates a member, announced to everyone', async () => {
    const res = await as('admin').post('/users', params);
    assert.equal(res.status, 200, res.text);
    const id = res.body.user_id as number;
    assert.deepEqual(res.body, { ...OK, user_id: id });
    const person = {
      user_id: id,
      delivery_email: 'new.person@parley.test',
      email: 'new.person@parley.test',
      full_name: 'New Person',
      date_joined: await joined(id),
      is_active: true,
      is_owner: false,
      is_admin: false,
      is_guest: false,
      is_bot: false,
      bot_type: null,
      bot_owner_id: null,
      role: 400,
      timezone: '',
      avatar_url: gravatar('new.person@parley.test'),
      avatar_version: 1,
      profile_data: {},
    };
    const all = [...everyone(), id];
    assert.deepEqual(await bus.take(), [
      { event: { type: 'realm_user', op: 'add', person }, users: all },
      {
        event: {
          type: 'user_group',
          op: 'add_members',
          group_id: await groupId('role:fullmembers'),
          user_ids: [id],
        },
        users: all,
      },
    ]);
    const read = await as('member').get(`/users/${id}`, { client_gravatar: false });
    const { profile_data: _p, ...shown } = person;
    assert.deepEqual(read.body, { ...OK, user: shown });
    const login = await t.as(null).post('/fetch_api_key', {
      username: 'new.person@parley.test',
      password: 'a-good-password',
    });
    assert.equal(login.status, 200);
  });

  test('only administrators may create users', async () => {
    for (const who of EVERY_CALLER) {
      const res = await as(who).post('/users', { ...params, email: `${who}-new@parley.test` });
      if (UNAUTHORIZED[who]) assert.deepEqual([res.status, res.body], [401, UNAUTHORIZED[who]]);
      else if (who === 'owner' || who === 'admin') assert.equal(res.status, 200, who);
      else assert.deepEqual([res.status, res.body], [400, mustBeAdmin], who);
    }
  });

  test('refuses missing, malformed and taken values, in the reference order', async () => {
    const cases: Array<[Record<string, unknown>, Record<string, unknown>]> = [
      [
        { password: 'x', full_name: 'x' },
        err("Missing 'email' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'email' }),
      ],
      [
        { email: 'a@b.c', full_name: 'x' },
        err("Missing 'password' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'password' }),
      ],
      [
        { email: 'a@b.c', password: 'x' },
        err("Missing 'full_name' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'full_name' }),
      ],
      [{ ...params, full_name: 'x' }, err('Name too short!')],
      [{ ...params, full_name: 'Bad @name' }, err('Invalid characters in name!')],
      [{ ...params, full_name: 'Ann|12' }, err('Invalid format!')],
      [{ ...params, full_name: 'n'.repeat(101) }, err('Name too long!')],
      [{ ...params, email: 'not-an-email' }, err('Bad name or username')],
      [
        { ...params, email: 'MEMBER@parley.test' },
        err("Email 'MEMBER@parley.test' already in use"),
      ],
      [
        { ...params, email: t.fx.deactivated.email },
        err(`Email '${t.fx.deactivated.email}' already in use`),
      ],
      [{ ...params, password: 'short' }, err('The password is too weak.')],
      [{ ...params, full_name: 'x', email: 'bad' }, err('Name too short!')],
    ];
    for (const [body, expected] of cases) {
      const res = await as('admin').post('/users', body);
      assert.deepEqual([res.status, res.body], [400, expected], JSON.stringify(body));
    }
    assert.deepEqual(await bus.take(), []);
  });

  test('under require_unique_names, a taken name is refused', async () => {
    const on = await as('admin').patch('/realm', { require_unique_names: true });
    assert.equal(on.status, 200);
    const res = await as('admin').post('/users', { ...params, full_name: 'mark member' });
    assert.deepEqual(res.body, err('Unique names required in this organization.'));
  });
});

describe('PATCH /users/{user_id}', () => {
  test('an administrator renames a user, announced to everyone', async () => {
    const res = await as('admin').patch(`/users/${t.fx.member2.id}`, {
      full_name: '  Nina Renamed ',
    });
    assert.deepEqual([res.status, res.body], [200, OK]);
    assert.deepEqual(await bus.take(), [
      {
        event: {
          type: 'realm_user',
          op: 'update',
          person: { user_id: t.fx.member2.id, full_name: 'Nina Renamed' },
        },
        users: everyone(),
      },
    ]);
    const read = await as('member').get(`/users/${t.fx.member2.id}`);
    assert.equal((read.body.user as Record<string, unknown>).full_name, 'Nina Renamed');
    // The same name again, and a blank name, change nothing.
    for (const full_name of ['Nina Renamed', '   ', '']) {
      const again = await as('admin').patch(`/users/${t.fx.member2.id}`, { full_name });
      assert.deepEqual(again.body, OK);
    }
    assert.deepEqual(await bus.take(), []);
  });

  test('renaming a bot also tells its managers, and its owner may rename it', async () => {
    const res = await as('member').patch(`/users/${t.fx.bot.id}`, { full_name: 'Better Bot' });
    assert.deepEqual(res.body, OK);
    assert.deepEqual(await bus.take(), [
      {
        event: {
          type: 'realm_user',
          op: 'update',
          person: { user_id: t.fx.bot.id, full_name: 'Better Bot' },
        },
        users: everyone(),
      },
      {
        event: {
          type: 'realm_bot',
          op: 'update',
          bot: { user_id: t.fx.bot.id, full_name: 'Better Bot' },
        },
        users: ids(t.fx.owner, t.fx.admin, t.fx.member),
      },
    ]);
    // Its owner may not change its role, though.
    const role = await as('member').patch(`/users/${t.fx.bot.id}`, { role: 300 });
    assert.deepEqual(role.body, mustBeAdmin);
  });

  test('a role change moves the user between system groups', async () => {
    const res = await as('admin').patch(`/users/${t.fx.member.id}`, { role: 300 });
    assert.deepEqual(res.body, OK);
    assert.deepEqual(await bus.take(), [
      {
        event: { type: 'realm_user', op: 'update', person: { user_id: t.fx.member.id, role: 300 } },
        users: everyone(),
      },
      {
        event: {
          type: 'user_group',
          op: 'remove_members',
          group_id: await groupId('role:fullmembers'),
          user_ids: [t.fx.member.id],
        },
        users: everyone(),
      },
      {
        event: {
          type: 'user_group',
          op: 'add_members',
          group_id: await groupId('role:moderators'),
          user_ids: [t.fx.member.id],
        },
        users: everyone(),
      },
    ]);
    const read = await as('member').get('/users/me');
    assert.deepEqual(
      [read.body.role, read.body.is_admin, read.body.is_owner, read.body.is_guest],
      [300, false, false, false],
    );
    // The same role again changes nothing.
    await as('admin').patch(`/users/${t.fx.member.id}`, { role: 300 });
    assert.deepEqual(await bus.take(), []);
  });

  test('every role value maps to its flags; owners are administrators too', async () => {
    for (const [role, flags] of [
      [100, [true, true, false]],
      [200, [true, false, false]],
      [300, [false, false, false]],
      [400, [false, false, false]],
      [600, [false, false, true]],
    ] as const) {
      const res = await as('owner').patch(`/users/${t.fx.member2.id}`, { role });
      assert.deepEqual(res.body, OK, String(role));
      const read = await as('member').get(`/users/${t.fx.member2.id}`);
      const u = read.body.user as Record<string, unknown>;
      assert.deepEqual([u.role, u.is_admin, u.is_owner, u.is_guest], [role, ...flags]);
    }
  });

  test('gaining a role that may see hidden addresses sends them to the user', async () => {
    await setVisibility(t.fx.member2, 3);
    const res = await as('admin').patch(`/users/${t.fx.member.id}`, { role: 200 });
    assert.deepEqual(res.body, OK);
    const sent = await bus.take();
    assert.deepEqual(sent.at(-1), {
      event: {
        type: 'realm_user',
        op: 'update',
        person: { user_id: t.fx.member2.id, delivery_email: t.fx.member2.delivery_email },
      },
      users: [t.fx.member.id],
    });
    await as('admin').patch(`/users/${t.fx.member.id}`, { role: 400 });
    assert.deepEqual((await bus.take()).at(-1), {
      event: {
        type: 'realm_user',
        op: 'update',
        person: { user_id: t.fx.member2.id, delivery_email: null },
      },
      users: [t.fx.member.id],
    });
  });

  test('becoming a limited guest forgets inaccessible users; leaving it learns them again', async () => {
    await limitGuests();
    const demote = await as('admin').patch(`/users/${t.fx.member2.id}`, { role: 600 });
    assert.deepEqual(demote.body, OK);
    // Everyone active shares #general with member2; only the deactivated user is out of reach.
    assert.deepEqual((await bus.take()).slice(3), [
      {
        event: {
          type: 'realm_user',
          op: 'remove',
          person: { user_id: t.fx.deactivated.id, full_name: 'Unknown user' },
        },
        users: [t.fx.member2.id],
      },
    ]);
    const promote = await as('admin').patch(`/users/${t.fx.member2.id}`, { role: 400 });
    assert.deepEqual(promote.body, OK);
    assert.deepEqual((await bus.take()).slice(3), [
      {
        event: { type: 'realm_user', op: 'add', person: await userObject(t.fx.deactivated) },
        users: [t.fx.member2.id],
      },
    ]);
  });

  test('only owners grant or remove the owner role, and never from the last owner', async () => {
    const grant = await as('admin').patch(`/users/${t.fx.member.id}`, { role: 100 });
    assert.deepEqual(grant.body, mustBeOwner);
    const demote = await as('admin').patch(`/users/${t.fx.owner.id}`, { role: 200 });
    assert.deepEqual(demote.body, mustBeOwner);
    const rename = await as('admin').patch(`/users/${t.fx.owner.id}`, { full_name: 'Olive' });
    assert.deepEqual(rename.body, OK);
    await bus.take();
    const last = await as('owner').patch(`/users/${t.fx.owner.id}`, { role: 200 });
    assert.deepEqual(
      last.body,
      err('The owner permission cannot be removed from the only organization owner.'),
    );
    assert.deepEqual(await bus.take(), []);
    assert.deepEqual((await as('owner').patch(`/users/${t.fx.admin.id}`, { role: 100 })).body, OK);
    assert.deepEqual((await as('owner').patch(`/users/${t.fx.owner.id}`, { role: 200 })).body, OK);
  });

  test('who may change users', async () => {
    for (const who of EVERY_CALLER) {
      const res = await as(who).patch(`/users/${t.fx.member2.id}`, { full_name: `By ${who}` });
      if (UNAUTHORIZED[who]) assert.deepEqual([res.status, res.body], [401, UNAUTHORIZED[who]]);
      else if (who === 'owner' || who === 'admin') assert.deepEqual(res.body, OK, who);
      else assert.deepEqual([res.status, res.body], [400, insufficient], who);
    }
  });

  test('refuses unknown users, bad roles and bad names; deactivated users may be changed', async () => {
    const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
      ['/users/999', { role: 300 }, err('No such user')],
      [`/users/${t.fx.otherOwner.id}`, { role: 300 }, err('No such user')],
      [`/users/${t.fx.member.id}`, { role: 250 }, err('Invalid role')],
      [`/users/${t.fx.member.id}`, { role: 'admin' }, err('role is not valid JSON')],
      [`/users/${t.fx.member.id}`, { full_name: 'x' }, err('Name too short!')],
      [`/users/${t.fx.member.id}`, { full_name: 'Mr `code`' }, err('Invalid characters in name!')],
      ['/users/abc', { role: 300 }, err('user_id is not an integer')],
      ['/users/0', { role: 300 }, err('user_id is too small')],
    ];
    for (const [path, body, expected] of cases) {
      const res = await as('admin').patch(path, body);
      assert.deepEqual([res.status, res.body], [400, expected], `${path} ${JSON.stringify(body)}`);
    }
    const res = await as('admin').patch(`/users/${t.fx.deactivated.id}`, { role: 600 });
    assert.deepEqual(res.body, OK);
    // No group events: clients dropped the deactivated user from every group, and their
    // reactivation shows them in the groups they are in by then.
    assert.deepEqual(await bus.take(), [
      {
        event: {
          type: 'realm_user',
          op: 'update',
          person: { user_id: t.fx.deactivated.id, role: 600 },
        },
        users: everyone(),
      },
    ]);
  });
});

describe('DELETE /users/{user_id}', () => {
  test('deactivates a user: everyone else is told, and the account stops working', async () => {
    const res = await as('admin').delete(`/users/${t.fx.member2.id}`, {
      deactivation_notification_comment: 'Farewell',
    });
    assert.deepEqual([res.status, res.body], [200, OK]);
    assert.deepEqual(await bus.take(), [
      {
        event: {
          type: 'realm_user',
          op: 'update',
          person: { user_id: t.fx.member2.id, is_active: false },
        },
        users: without(everyone(), t.fx.member2),
      },
    ]);
    const me = await as('member2').get('/users/me');
    assert.deepEqual([me.status, me.body], [401, err('Account is deactivated', 'UNAUTHORIZED')]);
    const read = await as('member').get(`/users/${t.fx.member2.id}`);
    assert.equal((read.body.user as Record<string, unknown>).is_active, false);
  });

  test('deactivating a user first deactivates the bots they own', async () => {
    const res = await as('admin').delete(`/users/${t.fx.member.id}`);
    assert.deepEqual(res.body, OK);
    assert.deepEqual(await bus.take(), [
      {
        event: {
          type: 'realm_user',
          op: 'update',
          person: { user_id: t.fx.bot.id, is_active: false },
        },
        users: without(everyone(), t.fx.bot),
      },
      {
        event: { type: 'realm_bot', op: 'update', bot: { user_id: t.fx.bot.id, is_active: false } },
        users: ids(t.fx.owner, t.fx.admin, t.fx.member),
      },
      {
        event: {
          type: 'realm_user',
          op: 'update',
          person: { user_id: t.fx.member.id, is_active: false },
        },
        users: without(everyone(), t.fx.bot, t.fx.member),
      },
    ]);
    const botCall = await as('bot').get('/users/me');
    assert.equal(botCall.status, 401);
  });

  test('guests who see the user only through a channel lose them', async () => {
    await limitGuests();
    const res = await as('admin').delete(`/users/${t.fx.member2.id}`);
    assert.deepEqual(res.body, OK);
    assert.deepEqual(await bus.take(), [
      {
        event: {
          type: 'realm_user',
          op: 'update',
          person: { user_id: t.fx.member2.id, is_active: false },
        },
        users: without(everyone(), t.fx.member2, t.fx.guest),
      },
      // Users who are not told of the deactivation still see the user leave its groups.
      {
        event: {
          type: 'user_group',
          op: 'remove_members',
          group_id: await groupId('role:fullmembers'),
          user_ids: [t.fx.member2.id],
        },
        users: [t.fx.guest.id],
      },
      {
        event: {
          type: 'realm_user',
          op: 'remove',
          person: { user_id: t.fx.member2.id, full_name: 'Unknown user' },
        },
        users: [t.fx.guest.id],
      },
    ]);
  });

  test('owners only by owners, never the last owner, never twice', async () => {
    const byAdmin = await as('admin').delete(`/users/${t.fx.owner.id}`);
    assert.deepEqual(byAdmin.body, mustBeOwner);
    const last = await as('owner').delete(`/users/${t.fx.owner.id}`);
    assert.deepEqual(
      last.body,
      err('Cannot deactivate the only organization owner', 'CANNOT_DEACTIVATE_LAST_USER', {
        is_last_owner: true,
        entity: 'organization owner',
      }),
    );
    const twice = await as('admin').delete(`/users/${t.fx.deactivated.id}`);
    assert.deepEqual(twice.body, err('User is deactivated'));
    const bot = await as('admin').delete(`/users/${t.fx.bot.id}`);
    assert.deepEqual(bot.body, err('No such user'));
    for (const id of [999, t.fx.otherOwner.id]) {
      assert.deepEqual((await as('admin').delete(`/users/${id}`)).body, err('No such user'));
    }
    const long = await as('admin').delete(`/users/${t.fx.member.id}`, {
      deactivation_notification_comment: 'x'.repeat(2001),
    });
    assert.deepEqual(
      long.body,
      err('deactivation_notification_comment is too long (limit: 2000 characters)'),
    );
    assert.deepEqual(await bus.take(), []);
    // With a second owner, an owner may go.
    await as('owner').patch(`/users/${t.fx.admin.id}`, { role: 100 });
    assert.deepEqual((await as('admin').delete(`/users/${t.fx.owner.id}`)).body, OK);
  });

  test('who may deactivate users', async () => {
    // Administrators last: after the first success the target is already deactivated.
    const callers: Who[] = [
      'moderator',
      'member',
      'guest',
      'bot',
      'deactivated',
      'badKey',
      'noAuth',
      'admin',
      'owner',
    ];
    for (const who of callers) {
      const res = await as(who).delete(`/users/${t.fx.member2.id}`);
      if (UNAUTHORIZED[who]) assert.deepEqual([res.status, res.body], [401, UNAUTHORIZED[who]]);
      else if (who === 'admin') assert.deepEqual(res.body, OK);
      else if (who === 'owner') assert.deepEqual(res.body, err('User is deactivated'));
      else assert.deepEqual([res.status, res.body], [400, insufficient], who);
    }
  });
});

describe('POST /users/{user_id}/reactivate', () => {
  test('an administrator reactivates a user, announced to everyone', async () => {
    const res = await as('admin').post(`/users/${t.fx.deactivated.id}/reactivate`);
    assert.deepEqual([res.status, res.body], [200, OK]);
    assert.deepEqual(await bus.take(), [
      {
        event: {
          type: 'realm_user',
          op: 'update',
          person: { user_id: t.fx.deactivated.id, is_active: true },
        },
        users: [...everyone(), t.fx.deactivated.id].sort((a, b) => a - b),
      },
      // Deactivated users are hidden from group member lists; reactivation shows them again.
      {
        event: {
          type: 'user_group',
          op: 'add_members',
          group_id: await groupId('role:fullmembers'),
          user_ids: [t.fx.deactivated.id],
        },
        users: [...everyone(), t.fx.deactivated.id].sort((a, b) => a - b),
      },
    ]);
    const me = await as('deactivated').get('/users/me');
    assert.equal(me.status, 200);
    const again = await as('admin').post(`/users/${t.fx.deactivated.id}/reactivate`);
    assert.deepEqual(again.body, err('User is already active'));
  });

  test('a bot comes back only with its owner; its owner may reactivate it', async () => {
    await as('admin').delete(`/users/${t.fx.member.id}`);
    await bus.take();
    const bot = await as('admin').post(`/users/${t.fx.bot.id}/reactivate`);
    assert.deepEqual(bot.body, err('Cannot reactivate a bot whose owner is deactivated'));
    assert.deepEqual((await as('admin').post(`/users/${t.fx.member.id}/reactivate`)).body, OK);
    await bus.take();
    assert.deepEqual((await as('member').post(`/users/${t.fx.bot.id}/reactivate`)).body, OK);
    assert.deepEqual(await bus.take(), [
      {
        event: {
          type: 'realm_user',
          op: 'update',
          person: { user_id: t.fx.bot.id, is_active: true },
        },
        users: everyone(),
      },
      {
        event: {
          type: 'user_group',
          op: 'add_members',
          group_id: await groupId('role:fullmembers'),
          user_ids: [t.fx.bot.id],
        },
        users: everyone(),
      },
      {
        event: { type: 'realm_bot', op: 'update', bot: { user_id: t.fx.bot.id, is_active: true } },
        users: ids(t.fx.owner, t.fx.admin, t.fx.member),
      },
    ]);
  });

  test('who may reactivate users', async () => {
    const callers: Who[] = [
      'moderator',
      'member',
      'guest',
      'bot',
      'deactivated',
      'badKey',
      'noAuth',
      'admin',
      'owner',
    ];
    for (const who of callers) {
      const res = await as(who).post(`/users/${t.fx.deactivated.id}/reactivate`);
      if (UNAUTHORIZED[who]) assert.deepEqual([res.status, res.body], [401, UNAUTHORIZED[who]]);
      else if (who === 'admin') assert.deepEqual(res.body, OK);
      else if (who === 'owner') assert.deepEqual(res.body, err('User is already active'));
      else assert.deepEqual([res.status, res.body], [400, insufficient], who);
    }
    assert.deepEqual((await as('admin').post('/users/999/reactivate')).body, err('No such user'));
  });
});

describe('DELETE /users/me', () => {
  test('a user deactivates themselves', async () => {
    const res = await as('member2').delete('/users/me');
    assert.deepEqual(res.body, OK);
    assert.deepEqual(await bus.take(), [
      {
        event: {
          type: 'realm_user',
          op: 'update',
          person: { user_id: t.fx.member2.id, is_active: false },
        },
        users: without(everyone(), t.fx.member2),
      },
    ]);
    assert.equal((await as('member2').get('/users/me')).status, 401);
  });

  test('never the last owner, nor the last user', async () => {
    const owner = await as('owner').delete('/users/me');
    assert.deepEqual(
      owner.body,
      err('Cannot deactivate the only organization owner', 'CANNOT_DEACTIVATE_LAST_USER', {
        is_last_owner: true,
        entity: 'organization owner',
      }),
    );
    const other = await t.as({ ...t.fx.otherOwner, host: 'other.parley.test' }).delete('/users/me');
    assert.deepEqual(
      other.body,
      err('Cannot deactivate the only user', 'CANNOT_DEACTIVATE_LAST_USER', {
        is_last_owner: false,
        entity: 'user',
      }),
    );
    assert.deepEqual(await bus.take(), []);
  });

  test('every role may leave; 401 for callers who cannot authenticate', async () => {
    // The bot before its owner, whose leaving would take it along.
    const callers: Who[] = [
      'admin',
      'moderator',
      'bot',
      'member',
      'guest',
      'deactivated',
      'badKey',
      'noAuth',
    ];
    for (const who of callers) {
      const res = await as(who).delete('/users/me');
      if (UNAUTHORIZED[who]) assert.deepEqual([res.status, res.body], [401, UNAUTHORIZED[who]]);
      else assert.deepEqual(res.body, OK, who);
    }
  });
});

test('system groups exist in every organization, and users are in their role group', async () => {
  for (const realmId of [t.fx.realm.id, t.fx.other.id]) {
    const rows = await t.ctx.db
      .selectFrom('user_groups')
      .select(['name', 'is_system_group'])
      .where('realm_id', '=', realmId)
      .where('is_system_group', '=', 1)
      .orderBy('id')
      .execute();
    assert.deepEqual(
      rows.map((r) => r.name),
      [
        'role:owners',
        'role:administrators',
        'role:moderators',
        'role:fullmembers',
        'role:members',
        'role:everyone',
        'role:internet',
        'role:nobody',
      ],
    );
  }
  const members = await t.ctx.db
    .selectFrom('user_group_members')
    .select('user_id')
    .where('group_id', '=', await groupId('role:owners'))
    .execute();
  assert.deepEqual(
    members.map((m) => m.user_id),
    [t.fx.owner.id],
  );
});
