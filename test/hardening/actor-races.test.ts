// Changes that race a change of their own actor: a role taken away or an account deactivated
// after the request was authenticated, and committed before the change's transaction. The
// change is checked against the actor as its transaction reads them (accessCurrentActor), so
// it is answered as the same requests one after another would be: it succeeds only if it came
// first, and is otherwise refused as the member (or deactivated user) the actor was by then.
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { FLAG_BITS } from '../../src/lib/message-flags.ts';
import { ROLE } from '../../src/lib/roles.ts';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { err } from '../support/callers.ts';
import { SUCCESS, type ApiResponse, type Params } from '../support/client.ts';
import { drainEvents, registerQueue, type Event } from '../support/events.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { sendDirect, sendToChannel, T0, useClock } from '../support/messages.ts';

let t: TestApp;
beforeEach(async () => {
  t = await buildTestApp();
});
afterEach(async () => {
  await t.close();
});

const isRoleChange = (user: FixtureUser) => (e: Event) =>
  e.type === 'realm_user' &&
  e.op === 'update' &&
  (e.person as { user_id?: number; role?: number }).user_id === user.id &&
  (e.person as { role?: number }).role !== undefined;

const isDeactivation = (user: FixtureUser) => (e: Event) =>
  e.type === 'realm_user' &&
  e.op === 'update' &&
  (e.person as { user_id?: number; is_active?: boolean }).user_id === user.id &&
  (e.person as { is_active?: boolean }).is_active === false;

interface ActorRace {
  /** Who watches, with a queue of these event types. */
  watcher: FixtureUser;
  eventTypes: string[];
  /** The demotion or deactivation of the change's actor; it must succeed. */
  actorChange: () => Promise<ApiResponse>;
  change: () => Promise<ApiResponse>;
  /** The answer to the change once it comes after its actor's change. */
  refusal: unknown;
  isActorChange: (e: Event) => boolean;
  isChange: (e: Event) => boolean;
}

/**
 * Send the change while its actor is changed. It succeeded only if its event came before the
 * actor's change (it ran first), and was otherwise refused with exactly race.refusal, with no
 * event of its own. Returns its answer, for checks of what it left.
 */
async function raceActorChange(race: ActorRace): Promise<ApiResponse> {
  const watcher = t.as(race.watcher);
  const queue = await registerQueue(watcher, { event_types: race.eventTypes });
  const [actorChanged, res] = await Promise.all([race.actorChange(), race.change()]);
  assert.deepEqual(actorChanged.body, SUCCESS);
  const events = await drainEvents(t.ctx, watcher, queue.queue_id, queue.last_event_id);
  const actorAt = events.findIndex(race.isActorChange);
  assert.notEqual(actorAt, -1, JSON.stringify(events));
  const changeAt = events.findIndex(race.isChange);
  if (res.status === 200) {
    assert.notEqual(changeAt, -1, JSON.stringify(events));
    assert.ok(changeAt < actorAt, `the change came after its actor's: ${JSON.stringify(events)}`);
  } else {
    assert.deepEqual(res.body, race.refusal, res.text);
    assert.equal(changeAt, -1, JSON.stringify(events));
  }
  return res;
}

const demote =
  (who: FixtureUser, role: number = ROLE.member) =>
  () =>
    t.as(t.fx.owner).patch(`/users/${who.id}`, { role });

test('an administrator made a member while inviting an administrator: never an administrator invited by a member', async () => {
  const admin = t.fx.admin;
  const invite = await raceActorChange({
    watcher: t.fx.owner,
    eventTypes: ['realm_user', 'invites_changed'],
    actorChange: demote(admin),
    change: () =>
      t.as(admin).post('/invites', {
        invitee_emails: 'newcomer@example.com',
        invite_as: ROLE.administrator,
        stream_ids: [],
      }),
    refusal: err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'),
    isActorChange: isRoleChange(admin),
    isChange: (e) => e.type === 'invites_changed',
  });
  const invitations = await t.ctx.db
    .selectFrom('email_invites')
    .select('id')
    .where('realm_id', '=', t.fx.realm.id)
    .execute();
  assert.equal(invitations.length, invite.status === 200 ? 1 : 0);
});

test("an administrator made a member while regenerating another's bot's key: never a key handed to a member", async () => {
  const [admin, bot] = [t.fx.admin, t.fx.bot];
  const regenerated = await raceActorChange({
    watcher: t.fx.owner,
    eventTypes: ['realm_user', 'realm_bot'],
    // The demotion's parameters in the query: a request with a body is read before it
    // starts, and would come after a regeneration (which has none) every time.
    actorChange: () =>
      t
        .as(t.fx.owner)
        .request('PATCH', `/users/${admin.id}`, { role: ROLE.member }, { asQuery: true }),
    change: () => t.as(admin).post(`/bots/${bot.id}/api_key/regenerate`),
    refusal: err('Insufficient permission', 'UNAUTHORIZED_PRINCIPAL'),
    isActorChange: isRoleChange(admin),
    isChange: (e) => e.type === 'realm_bot' && e.op === 'update',
  });
  // The bot's key is the one the administrator was given, or still the old one.
  const row = await t.ctx.db
    .selectFrom('users')
    .select('api_key')
    .where('id', '=', bot.id)
    .executeTakeFirstOrThrow();
  assert.equal(row.api_key, regenerated.status === 200 ? regenerated.body.api_key : bot.api_key);
});

test("an administrator made a member while changing the organization's settings: never changed by a member", async () => {
  const admin = t.fx.admin;
  const change = await raceActorChange({
    watcher: t.fx.owner,
    eventTypes: ['realm_user', 'realm'],
    actorChange: demote(admin),
    change: () => t.as(admin).patch('/realm', { description: 'Taken over' }),
    refusal: err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'),
    isActorChange: isRoleChange(admin),
    isChange: (e) => e.type === 'realm' && e.property === 'description',
  });
  const realm = await t.ctx.db
    .selectFrom('realms')
    .select('description')
    .where('id', '=', t.fx.realm.id)
    .executeTakeFirstOrThrow();
  assert.equal(realm.description === 'Taken over', change.status === 200);
});

test("an administrator deactivated while deleting another's message: never deleted by a deactivated user", async () => {
  const admin = t.fx.admin;
  const id = await sendToChannel(t, t.fx.member, t.fx.channels.design, 'plans', 'keep this');
  const deletion = await raceActorChange({
    watcher: t.fx.member,
    eventTypes: ['realm_user', 'delete_message'],
    actorChange: () => t.as(t.fx.owner).delete(`/users/${admin.id}`),
    change: () => t.as(admin).delete(`/messages/${id}`),
    refusal: err('Account is deactivated', 'UNAUTHORIZED'),
    isActorChange: isDeactivation(admin),
    isChange: (e) => e.type === 'delete_message',
  });
  const kept = await t.ctx.db.selectFrom('messages').select('id').where('id', '=', id).execute();
  assert.equal(kept.length, deletion.status === 200 ? 0 : 1);
});

// Changes of the actor's own rows: only the actor gets their events, and a deactivation drops
// the actor's queues, so no event shows whether such a change came before the deactivation.
// The database does: triggers note each row a table is written and the deactivation, in the
// order they are written (the realm's changes take turns, on either database).

const WRITES_NOTED = ['INSERT', 'UPDATE', 'DELETE'];

/** Note the writes to these tables, and users' deactivations; stop() returns them in order. */
async function noteWrites(tables: string[]): Promise<{ stop: () => Promise<string[]> }> {
  const run = (text: string) => sql.raw(text).execute(t.ctx.db);
  const onSqlite = t.ctx.store.dialect === 'sqlite';
  if (onSqlite) {
    await run('CREATE TABLE write_log (id INTEGER PRIMARY KEY AUTOINCREMENT, what TEXT NOT NULL)');
    for (const table of tables) {
      for (const op of WRITES_NOTED) {
        await run(`CREATE TRIGGER note_${table}_${op} AFTER ${op} ON ${table}
          BEGIN INSERT INTO write_log (what) VALUES ('${table}'); END`);
      }
    }
    await run(`CREATE TRIGGER note_deactivation AFTER UPDATE OF is_active ON users
      WHEN NEW.is_active = 0 BEGIN INSERT INTO write_log (what) VALUES ('deactivation'); END`);
  } else {
    await run('CREATE TABLE write_log (id serial PRIMARY KEY, what text NOT NULL)');
    await run(`CREATE FUNCTION note_write() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO write_log (what) VALUES (TG_ARGV[0]); RETURN NULL; END $$`);
    for (const table of tables) {
      await run(`CREATE TRIGGER note_write AFTER ${WRITES_NOTED.join(' OR ')} ON ${table}
        FOR EACH ROW EXECUTE FUNCTION note_write('${table}')`);
    }
    await run(`CREATE TRIGGER note_deactivation AFTER UPDATE OF is_active ON users
      FOR EACH ROW WHEN (NEW.is_active = 0) EXECUTE FUNCTION note_write('deactivation')`);
  }
  return {
    async stop() {
      const log = await sql<{ what: string }>`SELECT what FROM write_log ORDER BY id`.execute(
        t.ctx.db,
      );
      // PostgreSQL's schema outlives the test (SQLite's database does not): leave nothing.
      if (onSqlite) {
        for (const table of tables) {
          for (const op of WRITES_NOTED) await run(`DROP TRIGGER note_${table}_${op}`);
        }
        await run('DROP TRIGGER note_deactivation');
      } else {
        for (const table of tables) await run(`DROP TRIGGER note_write ON ${table}`);
        await run('DROP TRIGGER note_deactivation ON users');
        await run('DROP FUNCTION note_write()');
      }
      await run('DROP TABLE write_log');
      return log.rows.map((r) => r.what);
    },
  };
}

interface OwnChange {
  /** What the user is doing, for the test's name. */
  doing: string;
  /** The table the change writes. */
  table: string;
  /** Make what the change needs; returns the change and whether its rows show it was made. */
  setUp: (user: FixtureUser) => Promise<{
    change: () => Promise<ApiResponse>;
    made: () => Promise<boolean>;
  }>;
}

/**
 * The change's parameters in the query, as the deactivation has none: a request with a body
 * starts only once it is read, and would come after the deactivation every time, refused by
 * authentication (what this file checks is the change authenticated before it).
 */
const send = (user: FixtureUser, method: string, path: string, params: Params = {}) =>
  t.as(user).request(method, path, params, { asQuery: true });

const has = async (rows: Promise<unknown[]>): Promise<boolean> => (await rows).length > 0;

const OWN_CHANGES: OwnChange[] = [
  {
    doing: 'adding an alert word',
    table: 'alert_words',
    async setUp(user) {
      return {
        change: () => send(user, 'POST', '/users/me/alert_words', { alert_words: ['urgent'] }),
        made: () =>
          has(
            t.ctx.db
              .selectFrom('alert_words')
              .select('word')
              .where('user_id', '=', user.id)
              .where('word', '=', 'urgent')
              .execute(),
          ),
      };
    },
  },
  {
    doing: 'removing an alert word',
    table: 'alert_words',
    async setUp(user) {
      const added = await t.as(user).post('/users/me/alert_words', { alert_words: ['urgent'] });
      assert.equal(added.status, 200, added.text);
      return {
        change: () => send(user, 'DELETE', '/users/me/alert_words', { alert_words: ['urgent'] }),
        made: async () =>
          !(await has(
            t.ctx.db
              .selectFrom('alert_words')
              .select('word')
              .where('user_id', '=', user.id)
              .execute(),
          )),
      };
    },
  },
  {
    doing: 'marking an onboarding step seen',
    table: 'onboarding_steps',
    async setUp(user) {
      return {
        change: () =>
          send(user, 'POST', '/users/me/onboarding_steps', {
            onboarding_step: 'intro_inbox_view_modal',
          }),
        made: () =>
          has(
            t.ctx.db
              .selectFrom('onboarding_steps')
              .select('name')
              .where('user_id', '=', user.id)
              .execute(),
          ),
      };
    },
  },
  {
    doing: 'registering a push device',
    table: 'push_device_tokens',
    async setUp(user) {
      return {
        change: () => send(user, 'POST', '/users/me/android_gcm_reg_id', { token: 'device' }),
        made: () => has(pushTokensOf(user)),
      };
    },
  },
  {
    doing: 'removing a push device',
    table: 'push_device_tokens',
    async setUp(user) {
      const added = await t.as(user).post('/users/me/android_gcm_reg_id', { token: 'device' });
      assert.equal(added.status, 200, added.text);
      return {
        change: () => send(user, 'DELETE', '/users/me/android_gcm_reg_id', { token: 'device' }),
        made: async () => !(await has(pushTokensOf(user))),
      };
    },
  },
  {
    doing: 'deleting a draft',
    table: 'drafts',
    async setUp(user) {
      const created = await t.as(user).post('/drafts', {
        drafts: [{ type: '', to: [], topic: '', content: 'later' }],
      });
      assert.equal(created.status, 200, created.text);
      const [id] = created.body.ids as number[];
      return {
        change: () => send(user, 'DELETE', `/drafts/${id}`),
        made: async () =>
          !(await has(t.ctx.db.selectFrom('drafts').select('id').where('id', '=', id).execute())),
      };
    },
  },
  {
    doing: 'marking all messages read',
    table: 'user_messages',
    async setUp(user) {
      await sendDirect(t, t.fx.member2, [user], 'unread');
      return {
        change: () => send(user, 'POST', '/mark_all_as_read'),
        made: async () => (await unreadCountOf(user)) === 0,
      };
    },
  },
  {
    doing: "changing a channel's color",
    table: 'subscriptions',
    async setUp(user) {
      const general = t.fx.channels.general.id;
      return {
        change: () =>
          send(user, 'POST', '/users/me/subscriptions/properties', {
            subscription_data: [{ stream_id: general, property: 'color', value: '#123456' }],
          }),
        made: () =>
          has(
            t.ctx.db
              .selectFrom('subscriptions')
              .select('color')
              .where('user_id', '=', user.id)
              .where('channel_id', '=', general)
              .where('color', '=', '#123456')
              .execute(),
          ),
      };
    },
  },
  {
    doing: 'reporting presence',
    table: 'user_presences',
    async setUp(user) {
      // Online already, so that the report moves the times without coming online.
      const setClock = useClock(t);
      const online = await t.as(user).post('/users/me/presence', { status: 'active' });
      assert.equal(online.status, 200, online.text);
      setClock(T0 + 60);
      return {
        change: () => send(user, 'POST', '/users/me/presence', { status: 'active' }),
        made: () =>
          has(
            t.ctx.db
              .selectFrom('user_presences')
              .select('user_id')
              .where('user_id', '=', user.id)
              .where('last_active_time', '=', T0 + 60)
              .execute(),
          ),
      };
    },
  },
];

const pushTokensOf = (user: FixtureUser) =>
  t.ctx.db
    .selectFrom('push_device_tokens')
    .select('token')
    .where('user_id', '=', user.id)
    .execute();

async function unreadCountOf(user: FixtureUser): Promise<number> {
  const rows = await t.ctx.db
    .selectFrom('user_messages')
    .select('flags')
    .where('user_id', '=', user.id)
    .execute();
  return rows.filter((r) => (r.flags & FLAG_BITS.read) === 0).length;
}

for (const own of OWN_CHANGES) {
  test(`a user deactivated while ${own.doing}: never changed after the deactivation`, async () => {
    const user = t.fx.member;
    const { change, made } = await own.setUp(user);
    const writes = await noteWrites([own.table]);
    let order: string[];
    let answers: ApiResponse[];
    try {
      answers = await Promise.all([t.as(t.fx.admin).delete(`/users/${user.id}`), change()]);
    } finally {
      order = await writes.stop();
    }
    const [deactivated, res] = answers;
    assert.deepEqual(deactivated.body, SUCCESS);
    const deactivatedAt = order.indexOf('deactivation');
    const changedAt = order.indexOf(own.table);
    assert.notEqual(deactivatedAt, -1, order.join());
    if (res.status === 200) {
      assert.notEqual(changedAt, -1, order.join());
      assert.ok(changedAt < deactivatedAt, `the change came after the deactivation: ${order}`);
      assert.equal(await made(), true);
    } else {
      assert.deepEqual(res.body, err('Account is deactivated', 'UNAUTHORIZED'), res.text);
      assert.equal(changedAt, -1, order.join());
      assert.equal(await made(), false);
    }
  });
}

test("a member made a guest while saving a draft to a public channel they are not in: never a guest's draft there", async () => {
  const user = t.fx.member2;
  const saved = await raceActorChange({
    watcher: user,
    eventTypes: ['realm_user', 'drafts'],
    // Both with a body, so that they are read together: with the demotion's parameters in
    // the query, the draft came first every time.
    actorChange: demote(user, ROLE.guest),
    change: () =>
      t.as(user).post('/drafts', {
        drafts: [
          { type: 'stream', to: [t.fx.channels.design.id], topic: 'plans', content: 'idea' },
        ],
      }),
    refusal: err('Invalid channel ID'),
    isActorChange: isRoleChange(user),
    isChange: (e) => e.type === 'drafts',
  });
  const drafts = await t.ctx.db
    .selectFrom('drafts')
    .select('id')
    .where('user_id', '=', user.id)
    .execute();
  assert.equal(drafts.length, saved.status === 200 ? 1 : 0);
});

test('a user renamed while reporting a message: the report names them as they were when it was posted', async () => {
  const reporter = t.fx.member2;
  const configured = await t
    .as(t.fx.owner)
    .patch('/realm', { moderation_request_channel_id: t.fx.channels.private.id });
  assert.equal(configured.status, 200, configured.text);
  const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 'lunch', 'buy now');
  // The owner reads the moderation channel, and sees the reporter renamed.
  const owner = t.as(t.fx.owner);
  const queue = await registerQueue(owner, {
    event_types: ['realm_user', 'message'],
    apply_markdown: false,
  });
  const renamed = 'Renamed Reporter';
  const [rename, report] = await Promise.all([
    send(reporter, 'PATCH', '/settings', { full_name: renamed }),
    send(reporter, 'POST', `/messages/${id}/report`, { report_type: 'spam', description: '' }),
  ]);
  assert.equal(rename.status, 200, rename.text);
  assert.deepEqual(report.body, SUCCESS);
  const events = await drainEvents(t.ctx, owner, queue.queue_id, queue.last_event_id);
  const renameAt = events.findIndex(
    (e) =>
      e.type === 'realm_user' &&
      (e.person as { user_id?: number; full_name?: string }).user_id === reporter.id &&
      (e.person as { full_name?: string }).full_name === renamed,
  );
  const reportAt = events.findIndex((e) => e.type === 'message');
  assert.notEqual(renameAt, -1, JSON.stringify(events));
  assert.notEqual(reportAt, -1, JSON.stringify(events));
  const name = reportAt < renameAt ? reporter.full_name : renamed;
  const content = (events[reportAt].message as { content: string }).content;
  assert.ok(content.startsWith(`@_**${name}|${reporter.id}** reported`), content);
});

test('a moderator made a member while moving a message past the time limit: never moved by a member', async () => {
  const moderator = t.fx.moderator;
  const limited = await t
    .as(t.fx.owner)
    .patch('/realm', { move_messages_within_stream_limit_seconds: 60 });
  assert.equal(limited.status, 200, limited.text);
  const setClock = useClock(t);
  const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 'old', 'an old message');
  // Past the limit: only moderators and above may move it now.
  setClock(T0 + 3600);
  await raceActorChange({
    watcher: t.fx.member,
    eventTypes: ['realm_user', 'update_message'],
    actorChange: demote(moderator),
    change: () =>
      t.as(moderator).patch(`/messages/${id}`, { topic: 'new', propagate_mode: 'change_one' }),
    refusal: err("The time limit for editing this message's topic has passed."),
    isActorChange: isRoleChange(moderator),
    isChange: (e) => e.type === 'update_message',
  });
});

const sendToDesign = (sender: FixtureUser) => () =>
  t.as(sender).post('/messages', { type: 'stream', to: 'design', topic: 'x', content: 'hi' });

test('a member made a guest while sending to a public channel they are not in: never a guest posting there', async () => {
  const sender = t.fx.member2;
  await raceActorChange({
    watcher: t.fx.admin,
    eventTypes: ['realm_user', 'message'],
    actorChange: demote(sender, ROLE.guest),
    change: sendToDesign(sender),
    refusal: {
      result: 'error',
      msg: "Channel 'design' does not exist",
      code: 'STREAM_DOES_NOT_EXIST',
      stream: 'design',
    },
    isActorChange: isRoleChange(sender),
    isChange: (e) => e.type === 'message',
  });
});

test('a user deactivated while sending: never a message from a deactivated user', async () => {
  const sender = t.fx.member;
  await raceActorChange({
    watcher: t.fx.admin,
    eventTypes: ['realm_user', 'message'],
    actorChange: () => t.as(t.fx.admin).delete(`/users/${sender.id}`),
    change: sendToDesign(sender),
    refusal: err('Account is deactivated', 'UNAUTHORIZED'),
    isActorChange: isDeactivation(sender),
    isChange: (e) => e.type === 'message',
  });
});
