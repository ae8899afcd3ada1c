// Changes that race: many requests at once that each check what the others change. On
// SQLite one writer runs them one after another; on PostgreSQL (CI's second run) a
// realm's changes take turns on an advisory lock (actions/transaction.ts). Either way
// the answers and the state are those of the same requests sent one after another.
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { ROLE, systemGroupForRole } from '../../src/lib/roles.ts';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { err } from '../support/callers.ts';
import { SUCCESS } from '../support/client.ts';
import { drainEvents, registerQueue, withoutIds, type Event } from '../support/events.ts';
import type { FixtureUser } from '../support/fixture.ts';

let t: TestApp;
beforeEach(async () => {
  t = await buildTestApp();
});
afterEach(async () => {
  await t.close();
});

/** Each distinct answer body (as JSON) with how many requests got it. */
function tally(answers: Array<{ status: number; body: unknown }>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of answers) {
    const key = `${a.status} ${JSON.stringify(a.body)}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

/** The request succeeded or, having come after the change it raced, got exactly this error. */
function assertSuccessOr(
  res: { status: number; body: unknown; text: string },
  error: unknown,
): void {
  if (res.status !== 200) assert.deepEqual(res.body, error, res.text);
}

/** Rows of the organization's table with exactly this name. */
async function countNamed(table: 'channel_folders' | 'channels', name: string): Promise<number> {
  const rows = await t.ctx.db
    .selectFrom(table)
    .select('id')
    .where('realm_id', '=', t.fx.realm.id)
    .where('name', '=', name)
    .execute();
  return rows.length;
}

test('ten creations of one channel folder name: one folder, nine told the name is in use', async () => {
  const admin = t.as(t.fx.admin);
  const answers = await Promise.all(
    Array.from({ length: 10 }, () =>
      admin.post('/channel_folders/create', { name: 'Teams', description: '' }),
    ),
  );
  const [created] = answers.filter((a) => a.status === 200);
  assert.ok(created, JSON.stringify(tally(answers)));
  assert.deepEqual(tally(answers), {
    [`200 ${JSON.stringify(created.body)}`]: 1,
    [`400 ${JSON.stringify(err('Channel folder name already in use'))}`]: 9,
  });
  assert.equal(await countNamed('channel_folders', 'Teams'), 1);
});

test('two owners demote each other at once: one does, and the other is by then a member', async () => {
  const [owner, admin] = [t.fx.owner, t.fx.admin];
  assert.deepEqual(
    (await t.as(owner).patch(`/users/${admin.id}`, { role: ROLE.owner })).body,
    SUCCESS,
  );
  const answers = await Promise.all([
    t.as(owner).patch(`/users/${admin.id}`, { role: ROLE.member }),
    t.as(admin).patch(`/users/${owner.id}`, { role: ROLE.member }),
  ]);
  // As in turn: the second is checked as the member the first made them.
  assert.deepEqual(tally(answers), {
    [`200 ${JSON.stringify(SUCCESS)}`]: 1,
    [`400 ${JSON.stringify(err('Insufficient permission'))}`]: 1,
  });
  const owners = await t.ctx.db
    .selectFrom('users')
    .select('id')
    .where('realm_id', '=', t.fx.realm.id)
    .where('role', '=', ROLE.owner)
    .where('is_active', '=', 1)
    .execute();
  assert.equal(owners.length, 1);
});

test('five archives of one channel at once: one archives it, four are told it already is', async () => {
  const id = t.fx.channels.design.id;
  const answers = await Promise.all(
    Array.from({ length: 5 }, () => t.as(t.fx.admin).delete(`/streams/${id}`)),
  );
  assert.deepEqual(tally(answers), {
    [`200 ${JSON.stringify(SUCCESS)}`]: 1,
    [`400 ${JSON.stringify(err('Channel is already deactivated'))}`]: 4,
  });
});

/** The channel's privacy as stored, and whether it is a default channel. */
async function privacyOf(id: number) {
  const row = await t.ctx.db
    .selectFrom('channels')
    .select(['invite_only', 'is_web_public', 'history_public_to_subscribers', 'is_archived'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  const defaults = await t.ctx.db
    .selectFrom('default_channels')
    .select('channel_id')
    .where('channel_id', '=', id)
    .execute();
  return { ...row, is_default: defaults.length > 0 };
}

test('a channel made private while its history is made public: private, as either order leaves it', async () => {
  const id = t.fx.channels.design.id;
  const answers = await Promise.all([
    t.as(t.fx.admin).patch(`/streams/${id}`, { is_private: true }),
    t.as(t.fx.owner).patch(`/streams/${id}`, { history_public_to_subscribers: true }),
  ]);
  assert.deepEqual(tally(answers), { [`200 ${JSON.stringify(SUCCESS)}`]: 2 });
  assert.equal((await privacyOf(id)).invite_only, 1);
});

// A change that PATCH /streams/{id} refuses after the other one: whichever commits first
// wins, and the channel ends as that one left it.
for (const c of [
  {
    other: 'made web-public',
    params: { is_web_public: true },
    error: 'Invalid parameters',
    prepare: () => t.as(t.fx.owner).patch('/realm', { enable_spectator_access: true }),
    state: async (id: number) => {
      const p = await privacyOf(id);
      return { private: p.invite_only === 1, other: p.is_web_public === 1 };
    },
  },
  {
    other: 'made default',
    params: { is_default_stream: true },
    error: 'A default channel cannot be private.',
    prepare: async () => undefined,
    state: async (id: number) => {
      const p = await privacyOf(id);
      return { private: p.invite_only === 1, other: p.is_default };
    },
  },
]) {
  test(`a channel made private while ${c.other}: one is refused, never both`, async () => {
    const id = t.fx.channels.design.id;
    await c.prepare();
    const [privacy, other] = await Promise.all([
      t.as(t.fx.admin).patch(`/streams/${id}`, { is_private: true }),
      t.as(t.fx.owner).patch(`/streams/${id}`, c.params),
    ]);
    assert.deepEqual(tally([privacy, other]), {
      [`200 ${JSON.stringify(SUCCESS)}`]: 1,
      [`400 ${JSON.stringify(err(c.error))}`]: 1,
    });
    assert.deepEqual(await c.state(id), {
      private: privacy.status === 200,
      other: other.status === 200,
    });
  });
}

test('two unarchives of one channel at once: one unarchives it and is announced, one is told', async () => {
  const id = t.fx.channels.design.id;
  assert.deepEqual((await t.as(t.fx.admin).delete(`/streams/${id}`)).body, SUCCESS);
  const queue = await registerQueue(t.as(t.fx.member), { event_types: ['stream'] });
  const answers = await Promise.all(
    Array.from({ length: 2 }, () =>
      t.as(t.fx.admin).patch(`/streams/${id}`, { is_archived: false }),
    ),
  );
  assert.deepEqual(tally(answers), {
    [`200 ${JSON.stringify(SUCCESS)}`]: 1,
    [`400 ${JSON.stringify(err('Channel is not currently deactivated'))}`]: 1,
  });
  const events = await drainEvents(t.ctx, t.as(t.fx.member), queue.queue_id, queue.last_event_id);
  // Without archived_channels, archiving was a deletion: the channel appears again, once.
  assert.deepEqual(
    events.map((e) => [e.type, e.op]),
    [['stream', 'create']],
  );
});

test('five reactivations of one user at once: one reactivates, four are told they already are', async () => {
  const id = t.fx.deactivated.id;
  const answers = await Promise.all(
    Array.from({ length: 5 }, () => t.as(t.fx.admin).post(`/users/${id}/reactivate`)),
  );
  assert.deepEqual(tally(answers), {
    [`200 ${JSON.stringify(SUCCESS)}`]: 1,
    [`400 ${JSON.stringify(err('User is already active'))}`]: 4,
  });
});

test('five deactivations of one user at once: one deactivates and is announced, four are told', async () => {
  const target = t.fx.member2;
  const owner = t.as(t.fx.owner);
  const queue = await registerQueue(owner, { event_types: ['realm_user'] });
  const answers = await Promise.all(
    Array.from({ length: 5 }, () => t.as(t.fx.admin).delete(`/users/${target.id}`)),
  );
  assert.deepEqual(tally(answers), {
    [`200 ${JSON.stringify(SUCCESS)}`]: 1,
    [`400 ${JSON.stringify(err('User is deactivated'))}`]: 4,
  });
  const events = await drainEvents(t.ctx, owner, queue.queue_id, queue.last_event_id);
  assert.deepEqual(
    withoutIds(events).filter((e) => (e.person as { is_active?: boolean }).is_active === false),
    [{ type: 'realm_user', op: 'update', person: { user_id: target.id, is_active: false } }],
  );
});

/** The events after the first that matches: what a client is told once it knows of `first`. */
function eventsAfter(events: Event[], first: (e: Event) => boolean): Event[] {
  const at = events.findIndex(first);
  assert.notEqual(at, -1, JSON.stringify(events));
  return events.slice(at + 1);
}
const mentionsChannel = (e: Event, id: number): boolean =>
  e.stream_id === id ||
  [e.stream_ids, e.streams, e.subscriptions].some(
    (list) =>
      Array.isArray(list) &&
      list.some((x: unknown) => x === id || (x as { stream_id?: number }).stream_id === id),
  );

/** Subscribe themselves to design, each as its own request. */
const selfSubscribe = (who: FixtureUser[]) =>
  who.map((u) => t.as(u).post('/users/me/subscriptions', { subscriptions: [{ name: 'design' }] }));

test('users subscribe to a channel while it is made private: those after are refused, no one who lost sight of it is told of them', async () => {
  const id = t.fx.channels.design.id;
  const watcher = t.as(t.fx.moderator);
  const queue = await registerQueue(watcher, { event_types: ['stream', 'subscription'] });
  const [privacy, ...subscribes] = await Promise.all([
    t.as(t.fx.admin).patch(`/streams/${id}`, { is_private: true }),
    ...selfSubscribe([t.fx.member2, t.fx.owner]),
  ]);
  assert.deepEqual(privacy.body, SUCCESS);
  for (const res of subscribes) assertSuccessOr(res, err('Unable to access channel (design).'));
  const events = await drainEvents(t.ctx, watcher, queue.queue_id, queue.last_event_id);
  const afterLoss = eventsAfter(events, (e) => e.type === 'stream' && e.op === 'delete');
  assert.deepEqual(
    afterLoss.filter((e) => mentionsChannel(e, id)),
    [],
  );
});

test('users subscribe to a channel while it is archived: no subscription after the archive', async () => {
  const id = t.fx.channels.design.id;
  const watcher = t.as(t.fx.member);
  const queue = await registerQueue(watcher, { event_types: ['stream', 'subscription'] });
  const [archive, ...subscribes] = await Promise.all([
    t.as(t.fx.admin).delete(`/streams/${id}`),
    ...selfSubscribe([t.fx.member2, t.fx.owner, t.fx.moderator]),
  ]);
  assert.deepEqual(archive.body, SUCCESS);
  for (const res of subscribes) assertSuccessOr(res, err('Unable to access channel (design).'));
  const events = await drainEvents(t.ctx, watcher, queue.queue_id, queue.last_event_id);
  const afterArchive = eventsAfter(
    events,
    (e) => e.type === 'stream' && e.op === 'delete' && mentionsChannel(e, id),
  );
  assert.deepEqual(
    afterArchive.filter((e) => mentionsChannel(e, id)),
    [],
  );
});

test('a user subscribed by another while deactivated: never a subscriber after the deactivation', async () => {
  const target = t.fx.member2;
  const watcher = t.as(t.fx.member);
  const queue = await registerQueue(watcher, { event_types: ['realm_user', 'subscription'] });
  const [deactivation, subscribe] = await Promise.all([
    t.as(t.fx.admin).delete(`/users/${target.id}`),
    t.as(t.fx.owner).post('/users/me/subscriptions', {
      subscriptions: [{ name: 'private' }],
      principals: [target.id],
    }),
  ]);
  assert.deepEqual(deactivation.body, SUCCESS);
  assertSuccessOr(subscribe, err('User is deactivated'));
  const events = await drainEvents(t.ctx, watcher, queue.queue_id, queue.last_event_id);
  const afterDeactivation = eventsAfter(
    events,
    (e) => e.type === 'realm_user' && (e.person as { is_active?: boolean }).is_active === false,
  );
  assert.deepEqual(
    afterDeactivation.filter((e) => e.op === 'peer_add'),
    [],
  );
});

test('a member made a guest while subscribing themselves: never subscribed as a guest', async () => {
  const target = t.fx.member2;
  const watcher = t.as(t.fx.member);
  const queue = await registerQueue(watcher, { event_types: ['realm_user', 'subscription'] });
  const [demotion, ...subscribes] = await Promise.all([
    t.as(t.fx.owner).patch(`/users/${target.id}`, { role: ROLE.guest }),
    ...selfSubscribe([target, target]),
  ]);
  assert.deepEqual(demotion.body, SUCCESS);
  for (const res of subscribes) assertSuccessOr(res, err('Not allowed for guest users'));
  const events = await drainEvents(t.ctx, watcher, queue.queue_id, queue.last_event_id);
  const afterDemotion = eventsAfter(
    events,
    (e) => e.type === 'realm_user' && (e.person as { role?: number }).role === ROLE.guest,
  );
  assert.deepEqual(
    afterDemotion.filter((e) => e.op === 'peer_add'),
    [],
  );
});

test('five users subscribe at once to a channel none has created: one channel, all subscribed', async () => {
  const who = [t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member, t.fx.member2];
  const answers = await Promise.all(
    who.map((u) =>
      t.as(u).post('/users/me/subscriptions', { subscriptions: [{ name: 'standup' }] }),
    ),
  );
  assert.deepEqual(
    answers.map((a) => [a.status, a.body.subscribed]),
    who.map((u) => [200, { [String(u.id)]: ['standup'] }]),
  );
  assert.equal(await countNamed('channels', 'standup'), 1);
});

test('a channel archived while made default at once: never an archived default channel', async () => {
  const id = t.fx.channels.design.id;
  const answers = await Promise.all([
    t.as(t.fx.admin).delete(`/streams/${id}`),
    ...Array.from({ length: 4 }, () =>
      t.as(t.fx.admin).post('/default_streams', { stream_id: id }),
    ),
  ]);
  assert.deepEqual(
    answers.filter((a) => a.status >= 500),
    [],
  );
  assert.equal(answers[0].status, 200, answers[0].text);
  const defaults = await t.ctx.db
    .selectFrom('default_channels')
    .select('channel_id')
    .where('realm_id', '=', t.fx.realm.id)
    .execute();
  assert.ok(!defaults.some((d) => Number(d.channel_id) === id), JSON.stringify(defaults));
});

test('a default channel group deleted while channels are added to it: no server error, gone', async () => {
  const admin = t.as(t.fx.admin);
  const created = await admin.post('/default_stream_groups/create', {
    group_name: 'Starters',
    description: '',
    stream_names: ['general'],
  });
  assert.deepEqual(created.body, SUCCESS);
  const groups = () =>
    t.ctx.db
      .selectFrom('default_channel_groups')
      .select('id')
      .where('realm_id', '=', t.fx.realm.id)
      .execute();
  const id = Number((await groups())[0].id);
  const answers = await Promise.all([
    admin.delete(`/default_stream_groups/${id}`),
    ...Array.from({ length: 4 }, (_, i) =>
      admin.patch(`/default_stream_groups/${id}/streams`, {
        op: 'add',
        stream_names: [i % 2 === 0 ? 'design' : 'announce'],
      }),
    ),
  ]);
  assert.deepEqual(
    answers.filter((a) => a.status >= 500).map((a) => a.text),
    [],
  );
  assert.deepEqual(answers[0].body, SUCCESS);
  assert.deepEqual(await groups(), []);
});

test('an administrator deactivates a user an owner is making an owner: never an owner deactivated by an administrator', async () => {
  const target = t.fx.member2;
  const watcher = t.as(t.fx.member);
  const queue = await registerQueue(watcher, { event_types: ['realm_user'] });
  const [promotion, deactivation] = await Promise.all([
    t.as(t.fx.owner).patch(`/users/${target.id}`, { role: ROLE.owner }),
    t.as(t.fx.admin).delete(`/users/${target.id}`),
  ]);
  assert.deepEqual(promotion.body, SUCCESS);
  const events = withoutIds(
    await drainEvents(t.ctx, watcher, queue.queue_id, queue.last_event_id),
  ).filter((e) => e.op === 'update');
  const promoted = {
    type: 'realm_user',
    op: 'update',
    person: { user_id: target.id, role: ROLE.owner },
  };
  const deactivated = {
    type: 'realm_user',
    op: 'update',
    person: { user_id: target.id, is_active: false },
  };
  // Either the deactivation came first, or it was refused because the user was an owner by then.
  if (deactivation.status === 200) assert.deepEqual(events, [deactivated, promoted]);
  else {
    assert.deepEqual(
      deactivation.body,
      err('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL'),
    );
    assert.deepEqual(events, [promoted]);
  }
});

test('a channel archived while a default channel group is made with it: never an archived channel in a group', async () => {
  const id = t.fx.channels.design.id;
  const [archive, created] = await Promise.all([
    t.as(t.fx.admin).delete(`/streams/${id}`),
    t.as(t.fx.admin).post('/default_stream_groups/create', {
      group_name: 'Starters',
      description: '',
      stream_names: ['design', 'general'],
    }),
  ]);
  assert.deepEqual(archive.body, SUCCESS);
  assertSuccessOr(created, err("Invalid channel name 'design'"));
  const inGroups = await t.ctx.db
    .selectFrom('default_channel_group_channels')
    .select('channel_id')
    .where('channel_id', '=', id)
    .execute();
  assert.deepEqual(inGroups, []);
});

test('a channel archived while made the announcement channel: the setting never names an archived channel', async () => {
  const id = t.fx.channels.design.id;
  const [archive, setting] = await Promise.all([
    t.as(t.fx.admin).delete(`/streams/${id}`),
    t.as(t.fx.admin).patch('/realm', { new_stream_announcements_stream_id: id }),
  ]);
  assert.deepEqual(archive.body, SUCCESS);
  assertSuccessOr(setting, err('Invalid channel ID'));
  const realm = await t.ctx.db
    .selectFrom('realms')
    .select('settings')
    .where('id', '=', t.fx.realm.id)
    .executeTakeFirstOrThrow();
  assert.notEqual(JSON.parse(realm.settings).new_stream_announcements_stream_id, id);
});

test('eight role changes of one user at once: each answered, one system group left, the last role', async () => {
  const roles = [ROLE.administrator, ROLE.moderator, ROLE.guest, ROLE.member];
  const target = t.fx.member2;
  const answers = await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      t.as(t.fx.owner).patch(`/users/${target.id}`, { role: roles[i % roles.length] }),
    ),
  );
  assert.deepEqual(tally(answers), { [`200 ${JSON.stringify(SUCCESS)}`]: 8 });
  const user = await t.ctx.db
    .selectFrom('users')
    .select('role')
    .where('id', '=', target.id)
    .executeTakeFirstOrThrow();
  const memberOf = await t.ctx.db
    .selectFrom('user_group_members as m')
    .innerJoin('user_groups as g', 'g.id', 'm.group_id')
    .select('g.name')
    .where('m.user_id', '=', target.id)
    .where('g.is_system_group', '=', 1)
    .execute();
  assert.deepEqual(
    memberOf.map((g) => g.name),
    [systemGroupForRole(Number(user.role))],
  );
});

test('two password changes with the same old password at once: one changes it, the other is told it is wrong', async () => {
  const me = t.as(t.fx.member);
  const answers = await Promise.all(
    ['first-new-password-1', 'second-new-password-2'].map((newPassword) =>
      me.patch('/settings', { old_password: t.fx.member.password, new_password: newPassword }),
    ),
  );
  assert.deepEqual(tally(answers), {
    [`200 ${JSON.stringify(SUCCESS)}`]: 1,
    [`400 ${JSON.stringify(err('Wrong password!'))}`]: 1,
  });
});

test('a draft saved while synchronizing drafts is turned off: no draft kept after it', async () => {
  const me = t.as(t.fx.member);
  const draft = { type: 'stream', to: [t.fx.channels.general.id], topic: 't', content: 'c' };
  const [off, ...saves] = await Promise.all([
    me.patch('/settings', { enable_drafts_synchronization: false }),
    me.post('/drafts', { drafts: [draft] }),
    me.post('/drafts', { drafts: [draft] }),
  ]);
  assert.equal(off.status, 200, off.text);
  for (const res of saves) assertSuccessOr(res, err('User has disabled synchronizing drafts.'));
  const kept = await t.ctx.db
    .selectFrom('drafts')
    .select('id')
    .where('user_id', '=', t.fx.member.id)
    .execute();
  assert.deepEqual(kept, []);
});

test('a subscription changed while its user leaves the channel: nothing changed after the leaving', async () => {
  const me = t.as(t.fx.member);
  const id = t.fx.channels.design.id;
  const queue = await registerQueue(me, { event_types: ['subscription'] });
  const [left, ...changes] = await Promise.all([
    me.delete('/users/me/subscriptions', { subscriptions: ['design'] }),
    ...['#112233', '#445566'].map((color) =>
      me.post('/users/me/subscriptions/properties', {
        subscription_data: [{ stream_id: id, property: 'color', value: color }],
      }),
    ),
  ]);
  assert.equal(left.status, 200, left.text);
  for (const res of changes) assertSuccessOr(res, err(`Not subscribed to channel ID ${id}`));
  const events = await drainEvents(t.ctx, me, queue.queue_id, queue.last_event_id);
  assert.deepEqual(
    eventsAfter(events, (e) => e.op === 'remove'),
    [],
  );
});

test('a bot created while its owner deactivates themselves: never an active bot of a deactivated owner', async () => {
  const me = t.as(t.fx.member);
  const [left, created] = await Promise.all([
    me.delete('/users/me'),
    me.post('/bots', { full_name: 'Helper', short_name: 'helper' }),
  ]);
  assert.deepEqual(left.body, SUCCESS);
  assertSuccessOr(created, err('Account is deactivated', 'UNAUTHORIZED'));
  const activeBots = await t.ctx.db
    .selectFrom('users')
    .select('id')
    .where('bot_owner_id', '=', t.fx.member.id)
    .where('is_active', '=', 1)
    .execute();
  assert.deepEqual(activeBots, []);
});

test('coming online while turning presence sharing off: no presence event after the setting', async () => {
  const me = t.as(t.fx.member);
  const queue = await registerQueue(me, {
    event_types: ['presence', 'user_settings'],
    client_capabilities: { notification_settings_null: false, user_settings_object: true },
  });
  const [off, report] = await Promise.all([
    me.patch('/settings', { presence_enabled: false }),
    me.post('/users/me/presence', { status: 'active', ping_only: true }),
  ]);
  assert.equal(off.status, 200, off.text);
  assert.equal(report.status, 200, report.text);
  const events = await drainEvents(t.ctx, me, queue.queue_id, queue.last_event_id);
  assert.deepEqual(
    eventsAfter(events, (e) => e.type === 'user_settings' && e.property === 'presence_enabled'),
    [],
  );
});

test('a profile value changed while guests are limited: a guest who lost sight of its user is not told of it', async () => {
  const [guest, target] = [t.as(t.fx.guest), t.fx.member2];
  const field = await t
    .as(t.fx.admin)
    .post('/realm/profile_fields', { name: 'Phone', field_type: 1 });
  assert.equal(field.status, 200, field.text);
  const left = await guest.delete('/users/me/subscriptions', { subscriptions: ['general'] });
  assert.equal(left.status, 200, left.text);
  const groups = await t.as(t.fx.owner).get('/user_groups');
  const members = (groups.body.user_groups as Array<{ id: number; name: string }>).find(
    (g) => g.name === 'role:members',
  )!;
  const queue = await registerQueue(guest, { event_types: ['realm', 'realm_user'] });
  const [limit, change] = await Promise.all([
    t.as(t.fx.owner).patch('/realm', { can_access_all_users_group: { new: members.id } }),
    t.as(target).patch('/users/me/profile_data', { data: [{ id: field.body.id, value: '555' }] }),
  ]);
  assert.equal(limit.status, 200, limit.text);
  assert.equal(change.status, 200, change.text);
  // Once limited, the guest shares nothing with the target.
  assert.deepEqual((await guest.get(`/users/${target.id}`)).body, err('Insufficient permission'));
  const events = await drainEvents(t.ctx, guest, queue.queue_id, queue.last_event_id);
  assert.deepEqual(
    eventsAfter(events, (e) => e.type === 'realm' && e.op === 'update_dict').filter(
      (e) => e.type === 'realm_user' && (e.person as { user_id?: number }).user_id === target.id,
    ),
    [],
  );
});

test(
  "a new account's password is hashed outside its transaction: other changes go on meanwhile",
  { timeout: 60_000 },
  async () => {
    // The hasher lets a change of another user finish before it returns. Were the hash taken
    // inside the creating transaction, that change would wait for the transaction, which
    // waits for the hash: the two requests would never be answered.
    const inner = t.ctx.passwords;
    const during: Array<{ status: number; body: unknown }> = [];
    t.ctx.passwords = {
      verify: (hashed, password) => inner.verify(hashed, password),
      async hash(password) {
        const res = await t.as(t.fx.member).patch('/settings', { full_name: 'Renamed Meanwhile' });
        during.push({ status: res.status, body: res.body });
        return inner.hash(password);
      },
    };
    const created = await t
      .as(t.fx.admin)
      .post('/users', { email: 'new@parley.test', password: 'a-good-password', full_name: 'New' });
    assert.equal(created.status, 200, created.text);
    assert.deepEqual(during, [{ status: 200, body: SUCCESS }]);
    const login = await t.as(null).post('/fetch_api_key', {
      username: 'new@parley.test',
      password: 'a-good-password',
    });
    assert.equal(login.status, 200, login.text);
    assert.equal(login.body.user_id, created.body.user_id);
  },
);
