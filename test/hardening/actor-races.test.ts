// Changes that race a change of their own actor: a role taken away or an account deactivated
// after the request was authenticated, and committed before the change's transaction. The
// change is checked against the actor as its transaction reads them (accessCurrentActor), so
// it is answered as the same requests one after another would be: it succeeds only if it came
// first, and is otherwise refused as the member (or deactivated user) the actor was by then.
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { ROLE } from '../../src/lib/roles.ts';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { err } from '../support/callers.ts';
import { SUCCESS, type ApiResponse } from '../support/client.ts';
import { drainEvents, registerQueue, type Event } from '../support/events.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { sendToChannel, T0, useClock } from '../support/messages.ts';

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
