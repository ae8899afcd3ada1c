// Presence: POST /users/me/presence (every parameter, both formats, the update ids and the
// history window), GET /users/{id_or_email}/presence, GET /realm/presence, the register
// snapshot, and the presence event (only on coming online) with its recipients and forms.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Config } from '../../src/config.ts';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { as, assertUnauthorized, EVERY_CALLER, groupId } from '../support/bots.ts';
import { SUCCESS, type Credentials, type Params } from '../support/client.ts';
import { drainEvents, registerQueue, withoutIds } from '../support/events.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { addUser, assertError, setRealmSetting, useClock } from '../support/messages.ts';
import { captureNotices, ids, type NoticeLog } from '../support/notices.ts';

/** A clock after the fixture users joined (2033), so that their joining time is past. */
const T0 = 2_000_000_000;

let t: TestApp;
let log: NoticeLog;
let setNow: (s: number) => void;

async function start(config: Partial<Config> = {}): Promise<void> {
  t = await buildTestApp({ config });
  setNow = useClock(t, T0);
  log = captureNotices(t);
}
beforeEach(() => start());
afterEach(async () => {
  await t.close();
});

const DAY = 86400;
const EVERYONE = () =>
  ids(t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member, t.fx.member2, t.fx.guest, t.fx.bot);

const ping = (who: Credentials, params: Params = {}) =>
  t.as(who).post('/users/me/presence', { status: 'active', ...params });

async function okPing(who: Credentials, params: Params = {}): Promise<Record<string, unknown>> {
  const res = await ping(who, params);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

const modern = (active: number, idle = active) => ({
  active_timestamp: active,
  idle_timestamp: idle,
});
const website = (status: string, timestamp: number) => ({
  client: 'website',
  status,
  timestamp,
  pushable: false,
});
const legacy = (status: string, timestamp: number) => ({
  aggregated: { client: 'website', status, timestamp },
  website: website(status, timestamp),
});

async function dateJoined(user: FixtureUser): Promise<number> {
  const row = await t.ctx.db
    .selectFrom('users')
    .select('date_joined')
    .where('id', '=', user.id)
    .executeTakeFirstOrThrow();
  return row.date_joined;
}

/** Turn off the user's presence sharing (setup; its events are dropped). */
async function hidePresence(user: FixtureUser): Promise<void> {
  const res = await t.as(user).patch('/settings', { presence_enabled: false });
  assert.equal(res.status, 200, res.text);
  await log.take();
}

/** The canonical presence event the server publishes when the user comes online. */
function presenceEvent(user: FixtureUser, now: number, active: number, idle = active) {
  const status = active + 70 >= idle ? 'active' : 'idle';
  return {
    type: 'presence',
    user_id: user.id,
    email: user.email,
    server_timestamp: now,
    presence: { website: website(status, status === 'active' ? active : idle) },
    presences: { [String(user.id)]: modern(active, idle) },
  };
}

describe('POST /users/me/presence', () => {
  test('legacy format: keyed by API email, with the aggregated and website entries', async () => {
    const body = await okPing(t.fx.member);
    assert.deepEqual(body, {
      ...SUCCESS,
      presences: { [t.fx.member.email]: legacy('active', T0) },
      server_timestamp: T0,
      presence_last_update_id: 1,
      zephyr_mirror_active: false,
    });
    setNow(T0 + 100);
    assert.deepEqual(await okPing(t.fx.member2, { status: 'idle', new_user_input: false }), {
      ...SUCCESS,
      presences: {
        [t.fx.member.email]: legacy('active', T0),
        // Never reported active: the joining time stands in for it, and it is idle.
        [t.fx.member2.email]: legacy('idle', T0 + 100),
      },
      server_timestamp: T0 + 100,
      presence_last_update_id: 2,
      zephyr_mirror_active: false,
    });
  });

  test('modern format with last_update_id: keyed by user id, only newer rows', async () => {
    const first = await okPing(t.fx.member, { last_update_id: -1 });
    assert.deepEqual(first, {
      ...SUCCESS,
      presences: { [String(t.fx.member.id)]: modern(T0) },
      server_timestamp: T0,
      presence_last_update_id: 1,
      zephyr_mirror_active: false,
    });
    setNow(T0 + 10);
    await okPing(t.fx.owner, { status: 'idle', ping_only: true });
    // The member's own refresh within a minute moves nothing: no new row for anyone.
    setNow(T0 + 20);
    const next = await okPing(t.fx.member, { last_update_id: 1 });
    const ownerJoined = await dateJoined(t.fx.owner);
    assert.deepEqual(next, {
      ...SUCCESS,
      presences: { [String(t.fx.owner.id)]: modern(ownerJoined, T0 + 10) },
      server_timestamp: T0 + 20,
      presence_last_update_id: 2,
      zephyr_mirror_active: false,
    });
    // Nothing new: the id passed comes back.
    assert.deepEqual(await okPing(t.fx.member, { last_update_id: 2 }), {
      ...SUCCESS,
      presences: {},
      server_timestamp: T0 + 20,
      presence_last_update_id: 2,
      zephyr_mirror_active: false,
    });
    // A client ahead of the server gets its own id back, never a smaller one.
    assert.equal((await okPing(t.fx.member, { last_update_id: 50 })).presence_last_update_id, 50);
  });

  test('slim_presence asks for the modern format without last_update_id', async () => {
    await okPing(t.fx.member2);
    setNow(T0 + 5);
    assert.deepEqual(await okPing(t.fx.member, { slim_presence: true }), {
      ...SUCCESS,
      presences: {
        [String(t.fx.member.id)]: modern(T0 + 5),
        [String(t.fx.member2.id)]: modern(T0),
      },
      server_timestamp: T0 + 5,
      presence_last_update_id: 2,
      zephyr_mirror_active: false,
    });
    // last_update_id wins over slim_presence=false.
    const body = await okPing(t.fx.member, { slim_presence: false, last_update_id: 0 });
    assert.deepEqual(Object.keys(body.presences as object).sort(), [
      String(t.fx.member.id),
      String(t.fx.member2.id),
    ]);
  });

  test('ping_only: the status is stored, no presence data and no timestamp come back', async () => {
    assert.deepEqual(await okPing(t.fx.member, { ping_only: true, last_update_id: -1 }), {
      ...SUCCESS,
      zephyr_mirror_active: false,
    });
    assert.deepEqual((await okPing(t.fx.owner, { last_update_id: -1 })).presences, {
      [String(t.fx.member.id)]: modern(T0),
      [String(t.fx.owner.id)]: modern(T0),
    });
  });

  test('presence_last_update_id is -1 when nothing was asked for and nothing returned', async () => {
    await hidePresence(t.fx.member);
    const body = await okPing(t.fx.member);
    assert.deepEqual(body, {
      ...SUCCESS,
      presences: {},
      server_timestamp: T0,
      presence_last_update_id: -1,
      zephyr_mirror_active: false,
    });
    assert.equal((await okPing(t.fx.member, { slim_presence: true })).presence_last_update_id, -1);
    assert.equal((await okPing(t.fx.member, { last_update_id: -1 })).presence_last_update_id, -1);
    assert.equal((await okPing(t.fx.member, { last_update_id: 0 })).presence_last_update_id, 0);
  });

  test('the organization presence switch: no data, no events, ids as passed', async () => {
    await okPing(t.fx.owner);
    await log.take();
    await setRealmSetting(t, 'presence_disabled', true);
    assert.deepEqual(await okPing(t.fx.member), {
      ...SUCCESS,
      presences: {},
      server_timestamp: T0,
      presence_last_update_id: -1,
      zephyr_mirror_active: false,
    });
    assert.equal((await okPing(t.fx.member, { last_update_id: 7 })).presence_last_update_id, 7);
    assert.deepEqual(await log.take(), []);
    const realm = await t.as(t.fx.member).get('/realm/presence');
    assert.deepEqual(realm.body, { ...SUCCESS, server_timestamp: T0, presences: {} });
    assertError(
      await t.as(t.fx.member).get(`/users/${t.fx.owner.id}/presence`),
      400,
      'BAD_REQUEST',
      `No presence data for ${t.fx.owner.id}`,
    );
    // Turned back on, what was reported meanwhile shows.
    await setRealmSetting(t, 'presence_disabled', false);
    assert.deepEqual(
      Object.keys((await okPing(t.fx.member2)).presences as object).sort(),
      [t.fx.member.email, t.fx.member2.email, t.fx.owner.email].sort(),
    );
  });

  test('a user who does not share presence is never stored, shown or announced', async () => {
    await hidePresence(t.fx.member2);
    assert.deepEqual((await okPing(t.fx.member2)).presences, {});
    assert.deepEqual(await log.take(), []);
    assert.deepEqual((await okPing(t.fx.member)).presences, {
      [t.fx.member.email]: legacy('active', T0),
    });
    // Sharing turned off later: the stored data is hidden too.
    await hidePresence(t.fx.member);
    assert.deepEqual((await okPing(t.fx.owner, { last_update_id: -1 })).presences, {
      [String(t.fx.owner.id)]: modern(T0),
    });
    assertError(
      await t.as(t.fx.owner).get(`/users/${t.fx.member.email}/presence`),
      400,
      'BAD_REQUEST',
      `No presence data for ${t.fx.member.email}`,
    );
  });

  test('the history window: 14 days by default, history_limit_days, ignored past id 0', async () => {
    await hidePresence(t.fx.member2);
    await okPing(t.fx.owner); // update id 1
    await okPing(t.fx.member); // update id 2
    setNow(T0 + 15 * DAY);
    const keys = async (params: Params) =>
      Object.keys(
        (await okPing(t.fx.member2, { slim_presence: true, ...params })).presences as object,
      ).sort();
    const owner = String(t.fx.owner.id);
    const member = String(t.fx.member.id);
    assert.deepEqual(await keys({}), []);
    assert.deepEqual(await keys({ last_update_id: -1 }), []);
    assert.deepEqual(await keys({ last_update_id: 0 }), []);
    assert.deepEqual(
      await keys({ last_update_id: -1, history_limit_days: 16 }),
      [owner, member].sort(),
    );
    assert.deepEqual(
      await keys({ last_update_id: -1, history_limit_days: 15 }),
      [owner, member].sort(),
    );
    assert.deepEqual(await keys({ history_limit_days: 14 }), []);
    // A client that already has data gets every newer row, however old.
    assert.deepEqual(await keys({ last_update_id: 1, history_limit_days: 1 }), [member]);
    setNow(T0 + 13 * DAY);
    assert.deepEqual(await keys({ last_update_id: -1 }), [owner, member].sort());
    assert.deepEqual(await keys({ last_update_id: -1, history_limit_days: 12 }), []);
  });

  test('the parameters are validated', async () => {
    const cases: Array<[Params, string]> = [
      [{ status: 'away' }, 'Invalid status: away'],
      [{ status: '' }, 'Invalid status: '],
      [{ last_update_id: 'x' }, 'last_update_id is not an integer'],
      [{ last_update_id: -2 }, 'last_update_id is too small'],
      [{ history_limit_days: 0 }, 'history_limit_days is too small'],
      [{ ping_only: 'maybe' }, 'ping_only is not a boolean'],
      [{ slim_presence: 'x' }, 'slim_presence is not a boolean'],
      [{ new_user_input: 'x' }, 'new_user_input is not a boolean'],
    ];
    for (const [params, msg] of cases) {
      assertError(await ping(t.fx.member, params), 400, 'BAD_REQUEST', msg);
    }
    const missing = await t.as(t.fx.member).post('/users/me/presence', {});
    assert.deepEqual(missing.body, {
      result: 'error',
      msg: "Missing 'status' argument",
      code: 'REQUEST_VARIABLE_MISSING',
      var_name: 'status',
    });
    // Nothing was stored by the refused requests.
    assert.deepEqual(await log.take(), []);
  });

  test('every role may report; deactivated users and bad credentials may not', async () => {
    for (const who of EVERY_CALLER) {
      const res = await as(t, who).post('/users/me/presence', {
        status: 'active',
        ping_only: true,
      });
      if (assertUnauthorized(who, res)) continue;
      assert.deepEqual(res.body, { ...SUCCESS, zephyr_mirror_active: false }, who);
    }
    // Bots report too, but only human users are listed.
    const listed = Object.keys(
      (await okPing(t.fx.member, { last_update_id: -1 })).presences as object,
    );
    assert.deepEqual(
      listed.map(Number).sort((a, b) => a - b),
      ids(t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member, t.fx.guest),
    );
  });
});

describe('the presence event', () => {
  test('sent on the first report and on coming back online, to every active user', async () => {
    await okPing(t.fx.member);
    assert.deepEqual(await log.take(), [
      { event: presenceEvent(t.fx.member, T0, T0), users: EVERYONE() },
    ]);
    // Refreshes while online are not pushed.
    for (const [at, status] of [
      [T0 + 30, 'active'],
      [T0 + 60, 'active'],
      [T0 + 120, 'idle'],
      [T0 + 259, 'active'],
    ] as const) {
      setNow(at);
      await okPing(t.fx.member, { status });
    }
    assert.deepEqual(await log.take(), []);
    // Idle reports while offline do not bring the user online.
    setNow(T0 + 1000);
    await okPing(t.fx.member, { status: 'idle' });
    assert.deepEqual(await log.take(), []);
    // Active after more than 200 s without an active report.
    setNow(T0 + 1060);
    await okPing(t.fx.member, { ping_only: true });
    assert.deepEqual(await log.take(), [
      { event: presenceEvent(t.fx.member, T0 + 1060, T0 + 1060), users: EVERYONE() },
    ]);
  });

  test('a first report while idle announces the user with their joining time', async () => {
    await okPing(t.fx.member2, { status: 'idle' });
    const joined = await dateJoined(t.fx.member2);
    assert.deepEqual(await log.take(), [
      { event: presenceEvent(t.fx.member2, T0, joined, T0), users: EVERYONE() },
    ]);
  });

  test('not sent at all in organizations above 100 active users', async () => {
    // The fixture has 7 active users (the bot included); 93 more make 100.
    for (let i = 0; i < 93; i++) await addUser(t, `Filler ${i}`);
    await log.take();
    await okPing(t.fx.member);
    const [sent] = await log.take();
    assert.equal(sent.users.length, 100);
    await addUser(t, 'One Too Many');
    await log.take();
    await okPing(t.fx.member2);
    assert.deepEqual(await log.take(), []);
    // The data is still there for polling.
    assert.ok(t.fx.member2.email in ((await okPing(t.fx.owner)).presences as object));
  });

  test('each client gets the simplified, slim or legacy form', async () => {
    const simplified = await registerQueue(t.as(t.fx.owner), {
      client_capabilities: { notification_settings_null: false, simplified_presence_events: true },
      event_types: ['presence'],
    });
    const slim = await registerQueue(t.as(t.fx.admin), {
      slim_presence: true,
      event_types: ['presence'],
    });
    const old = await registerQueue(t.as(t.fx.guest), { event_types: ['presence'] });
    await okPing(t.fx.member);
    const events = async (who: FixtureUser, queue: string) =>
      withoutIds(await drainEvents(t.ctx, t.as(who), queue, -1));
    assert.deepEqual(await events(t.fx.owner, simplified.queue_id), [
      { type: 'presence', presences: { [String(t.fx.member.id)]: modern(T0) } },
    ]);
    assert.deepEqual(await events(t.fx.admin, slim.queue_id), [
      {
        type: 'presence',
        user_id: t.fx.member.id,
        server_timestamp: T0,
        presence: { website: website('active', T0) },
      },
    ]);
    assert.deepEqual(await events(t.fx.guest, old.queue_id), [
      {
        type: 'presence',
        user_id: t.fx.member.id,
        email: t.fx.member.email,
        server_timestamp: T0,
        presence: { website: website('active', T0) },
      },
    ]);
  });
});

describe('CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE', () => {
  async function limitGuests(): Promise<FixtureUser> {
    await setRealmSetting(t, 'can_access_all_users_group', await groupId(t, 'role:members'));
    // Shares no channel and no conversation with the guest.
    const loner = await addUser(t, 'Loner');
    await log.take();
    return loner;
  }

  test('on: a limited guest neither sees nor hears of users it cannot access', async () => {
    await t.close();
    await start({ canAccessAllUsersGroupLimitsPresence: true });
    const loner = await limitGuests();
    await okPing(loner);
    const withoutGuest = [...EVERYONE().filter((id) => id !== t.fx.guest.id), loner.id].sort(
      (a, b) => a - b,
    );
    assert.deepEqual(await log.take(), [
      { event: presenceEvent(loner, T0, T0), users: withoutGuest },
    ]);
    assert.deepEqual((await okPing(t.fx.guest)).presences, {
      [t.fx.guest.email]: legacy('active', T0),
    });
    assert.ok(loner.email in ((await okPing(t.fx.member)).presences as object));
    const realm = await t.as(t.fx.guest).get('/realm/presence');
    assert.deepEqual(
      Object.keys(realm.body.presences as object).sort(),
      [t.fx.guest.email, t.fx.member.email].sort(),
    );
    assertError(
      await t.as(t.fx.guest).get(`/users/${loner.id}/presence`),
      400,
      'BAD_REQUEST',
      'Insufficient permission',
    );
    const snapshot = await registerQueue(t.as(t.fx.guest), { fetch_event_types: ['presence'] });
    assert.ok(!(loner.email in (snapshot.presences as object)));
  });

  test('off (the default): the same guest sees everyone', async () => {
    const loner = await limitGuests();
    await okPing(loner);
    const [sent] = await log.take();
    assert.deepEqual(
      sent.users,
      [...EVERYONE(), loner.id].sort((a, b) => a - b),
    );
    assert.ok(loner.email in ((await okPing(t.fx.guest)).presences as object));
    const res = await t.as(t.fx.guest).get(`/users/${loner.id}/presence`);
    assert.equal(res.status, 200, res.text);
  });
});

describe('GET /users/{user_id_or_email}/presence', () => {
  test('by id or API email: the status and its time, offline after 200 s', async () => {
    await okPing(t.fx.member);
    const expected = {
      ...SUCCESS,
      presence: {
        aggregated: { status: 'active', timestamp: T0 },
        website: { status: 'active', timestamp: T0 },
      },
    };
    for (const key of [String(t.fx.member.id), t.fx.member.email]) {
      const res = await t.as(t.fx.guest).get(`/users/${encodeURIComponent(key)}/presence`);
      assert.deepEqual(res.body, expected, key);
    }
    setNow(T0 + 200);
    assert.deepEqual(
      (await t.as(t.fx.owner).get(`/users/${t.fx.member.id}/presence`)).body,
      expected,
    );
    setNow(T0 + 201);
    assert.deepEqual((await t.as(t.fx.owner).get(`/users/${t.fx.member.id}/presence`)).body, {
      ...SUCCESS,
      presence: {
        aggregated: { status: 'offline', timestamp: T0 },
        website: { status: 'active', timestamp: T0 },
      },
    });
  });

  test('errors: unknown users, bots, users without data', async () => {
    const get = (key: string | number) => t.as(t.fx.member).get(`/users/${key}/presence`);
    assertError(await get(999999), 400, 'BAD_REQUEST', 'No such user');
    assertError(await get('nobody@parley.test'), 400, 'BAD_REQUEST', 'No such user');
    assertError(await get(t.fx.otherOwner.id), 400, 'BAD_REQUEST', 'No such user');
    assertError(
      await get(t.fx.bot.id),
      400,
      'BAD_REQUEST',
      'Presence is not supported for bot users.',
    );
    assertError(
      await get(t.fx.member2.id),
      400,
      'BAD_REQUEST',
      `No presence data for ${t.fx.member2.id}`,
    );
  });

  test('every role may read; deactivated users and bad credentials may not', async () => {
    await okPing(t.fx.member);
    for (const who of EVERY_CALLER) {
      const res = await as(t, who).get(`/users/${t.fx.member.id}/presence`);
      if (assertUnauthorized(who, res)) continue;
      assert.equal(res.status, 200, `${who}: ${res.text}`);
    }
  });
});

describe('GET /realm/presence', () => {
  test("everyone's presence in the legacy format, keyed by API email", async () => {
    await okPing(t.fx.member);
    setNow(T0 + 300);
    await okPing(t.fx.owner, { status: 'idle' });
    for (const who of EVERY_CALLER) {
      const res = await as(t, who).get('/realm/presence');
      if (assertUnauthorized(who, res)) continue;
      assert.deepEqual(
        res.body,
        {
          ...SUCCESS,
          server_timestamp: T0 + 300,
          presences: {
            [t.fx.member.email]: legacy('active', T0),
            [t.fx.owner.email]: legacy('idle', T0 + 300),
          },
        },
        who,
      );
    }
  });
});

describe('POST /register: the presence section', () => {
  test('legacy by default, modern with slim_presence or simplified_presence_events', async () => {
    await okPing(t.fx.member);
    setNow(T0 + 20 * DAY);
    await okPing(t.fx.owner);
    setNow(T0 + 20 * DAY + 5);
    const snap = async (params: Params) => {
      const body = await registerQueue(t.as(t.fx.member2), {
        fetch_event_types: ['presence'],
        ...params,
      });
      return {
        presences: body.presences,
        presence_last_update_id: body.presence_last_update_id,
        server_timestamp: body.server_timestamp,
      };
    };
    const now = T0 + 20 * DAY + 5;
    assert.deepEqual(await snap({}), {
      presences: { [t.fx.owner.email]: legacy('active', T0 + 20 * DAY) },
      presence_last_update_id: 2,
      server_timestamp: now,
    });
    const modernForm = {
      presences: { [String(t.fx.owner.id)]: modern(T0 + 20 * DAY) },
      presence_last_update_id: 2,
      server_timestamp: now,
    };
    assert.deepEqual(await snap({ slim_presence: true }), modernForm);
    assert.deepEqual(
      await snap({
        client_capabilities: {
          notification_settings_null: false,
          simplified_presence_events: true,
        },
      }),
      modernForm,
    );
    assert.deepEqual(await snap({ slim_presence: true, presence_history_limit_days: 30 }), {
      ...modernForm,
      presences: {
        [String(t.fx.member.id)]: modern(T0),
        [String(t.fx.owner.id)]: modern(T0 + 20 * DAY),
      },
    });
    await setRealmSetting(t, 'presence_disabled', true);
    assert.deepEqual(await snap({}), {
      presences: {},
      presence_last_update_id: -1,
      server_timestamp: now,
    });
  });
});
