// User groups: POST /user_groups/create, GET /user_groups and PATCH /user_groups/{id}, with
// the permission each needs, every validation error and the user_group events to everyone.
// Membership, subgroups, deactivation and mentions are in user-groups-members.test.ts.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { as, assertUnauthorized, error, EVERY_CALLER, everyone } from '../support/bots.ts';
import { SUCCESS } from '../support/client.ts';
import { systemGroups } from '../support/channels.ts';
import { registerQueue } from '../support/events.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { captureNotices, type NoticeLog } from '../support/notices.ts';
import { setRealmSetting, T0, useClock } from '../support/messages.ts';
import { createGroup, expectedGroup, groupsOf, type SystemIds } from '../support/user-groups.ts';

let t: TestApp;
let log: NoticeLog;
let g: SystemIds;
beforeEach(async () => {
  t = await buildTestApp();
  useClock(t);
  log = captureNotices(t);
  g = await systemGroups(t);
});
afterEach(async () => {
  await t.close();
});

const create = (who: FixtureUser, params: Record<string, unknown>) =>
  t.as(who).post('/user_groups/create', { description: '', members: [], ...params });

describe('POST /user_groups/create', () => {
  test('creates the group with the default settings and tells everyone', async () => {
    const res = await create(t.fx.member, {
      name: 'support',
      description: 'The support team',
      members: [t.fx.member2.id, t.fx.member.id, t.fx.member2.id],
    });
    assert.equal(res.status, 200, res.text);
    const id = res.body.group_id as number;
    assert.deepEqual(res.body, { ...SUCCESS, group_id: id });
    const group = expectedGroup(g, {
      id,
      name: 'support',
      description: 'The support team',
      members: [t.fx.member.id, t.fx.member2.id].sort((a, b) => a - b),
      creator_id: t.fx.member.id,
      date_created: T0,
    });
    assert.deepEqual(await log.take(), [
      { event: { type: 'user_group', op: 'add', group }, users: everyone(t) },
    ]);
    const listed = await groupsOf(t, t.fx.guest);
    assert.deepEqual(
      listed.find((x) => x.id === id),
      group,
    );
  });

  test('takes every setting as a group id or an anonymous group, and initial subgroups', async () => {
    const sub = await createGroup(t, t.fx.member, 'sub');
    await log.take();
    const res = await create(t.fx.member, {
      name: 'leads',
      subgroups: [sub],
      can_add_members_group: g['role:moderators'],
      can_join_group: { direct_members: [t.fx.member2.id], direct_subgroups: [] },
      can_leave_group: { direct_members: [], direct_subgroups: [] },
      can_manage_group: { direct_members: [t.fx.admin.id], direct_subgroups: [g['role:owners']] },
      can_mention_group: { direct_members: [], direct_subgroups: [sub] },
      can_remove_members_group: g['role:administrators'],
    });
    assert.equal(res.status, 200, res.text);
    const [sent] = await log.take();
    assert.deepEqual(sent.event, {
      type: 'user_group',
      op: 'add',
      group: expectedGroup(g, {
        id: res.body.group_id as number,
        name: 'leads',
        direct_subgroup_ids: [sub],
        creator_id: t.fx.member.id,
        date_created: T0,
        can_add_members_group: g['role:moderators'],
        can_join_group: { direct_members: [t.fx.member2.id], direct_subgroups: [] },
        // An empty anonymous group is nobody; one subgroup alone is that group.
        can_leave_group: g['role:nobody'],
        can_manage_group: { direct_members: [t.fx.admin.id], direct_subgroups: [g['role:owners']] },
        can_mention_group: sub,
        can_remove_members_group: g['role:administrators'],
      }),
    });
  });

  for (const who of EVERY_CALLER) {
    test(`who may create (default can_create_groups = members): ${who}`, async () => {
      const res = await as(t, who).post('/user_groups/create', {
        name: `by ${who}`,
        description: '',
        members: [],
      });
      if (assertUnauthorized(who, res)) return;
      if (who === 'guest') {
        assert.deepEqual(res.body, error('Insufficient permission'));
        assert.equal(res.status, 400);
        assert.deepEqual(await log.take(), []);
        return;
      }
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(
        (await log.take()).map((s) => s.event.op),
        ['add'],
      );
    });
  }

  test('the organization setting decides who may create groups', async () => {
    await setRealmSetting(t, 'can_create_groups', g['role:administrators']);
    const refused = await create(t.fx.moderator, { name: 'x' });
    assert.deepEqual([refused.status, refused.body], [400, error('Insufficient permission')]);
    const allowed = await create(t.fx.admin, { name: 'x' });
    assert.equal(allowed.status, 200, allowed.text);
  });

  const refusals: Array<[string, () => Record<string, unknown>, string | (() => string)]> = [
    ['a nonexistent member', () => ({ members: [9999] }), 'Invalid user ID: 9999'],
    [
      'a deactivated member',
      () => ({ members: [t.fx.deactivated.id] }),
      () => `Invalid user ID: ${t.fx.deactivated.id}`,
    ],
    [
      "another organization's user",
      () => ({ members: [t.fx.otherOwner.id] }),
      () => `Invalid user ID: ${t.fx.otherOwner.id}`,
    ],
    [
      'a name over 100 characters',
      () => ({ name: 'x'.repeat(101) }),
      'User group name cannot exceed 100 characters.',
    ],
    ['an empty name', () => ({ name: ' ' }), "User group name can't be empty!"],
    ['a name starting with @', () => ({ name: '@team' }), "User group name cannot start with '@'."],
    [
      'a name starting with role:',
      () => ({ name: 'role:x' }),
      "User group name cannot start with 'role:'.",
    ],
    [
      'a name starting with user:',
      () => ({ name: 'user:x' }),
      "User group name cannot start with 'user:'.",
    ],
    [
      'a name starting with stream:',
      () => ({ name: 'stream:x' }),
      "User group name cannot start with 'stream:'.",
    ],
    [
      'a name starting with channel:',
      () => ({ name: 'channel:x' }),
      "User group name cannot start with 'channel:'.",
    ],
    [
      'a system group name',
      () => ({ name: 'role:members' }),
      "User group name cannot start with 'role:'.",
    ],
    [
      'can_manage_group = role:everyone',
      () => ({ can_manage_group: g['role:everyone'] }),
      "'can_manage_group' setting cannot be set to 'role:everyone' group.",
    ],
    [
      'can_manage_group = role:internet',
      () => ({ can_manage_group: g['role:internet'] }),
      "'can_manage_group' setting cannot be set to 'role:internet' group.",
    ],
    [
      'can_mention_group = role:owners',
      () => ({ can_mention_group: g['role:owners'] }),
      "'can_mention_group' setting cannot be set to 'role:owners' group.",
    ],
    [
      'can_mention_group = role:internet',
      () => ({ can_mention_group: g['role:internet'] }),
      "'can_mention_group' setting cannot be set to 'role:internet' group.",
    ],
    [
      'can_join_group = role:internet',
      () => ({ can_join_group: g['role:internet'] }),
      "'can_join_group' setting cannot be set to 'role:internet' group.",
    ],
    [
      'role:everyone inside an anonymous can_manage_group',
      () => ({
        can_manage_group: {
          direct_members: [t.fx.member.id],
          direct_subgroups: [g['role:everyone']],
        },
      }),
      "'can_manage_group' setting cannot be set to 'role:everyone' group.",
    ],
    ['an unknown setting group', () => ({ can_join_group: 9999 }), 'Invalid user group'],
    [
      'an unknown user in an anonymous setting',
      () => ({ can_join_group: { direct_members: [9999], direct_subgroups: [] } }),
      'Invalid user ID: 9999',
    ],
    ['an unknown subgroup', () => ({ subgroups: [9999] }), 'Invalid user group ID: 9999'],
  ];
  for (const [label, params, msg] of refusals) {
    test(`refuses ${label}`, async () => {
      const res = await create(t.fx.member, { name: 'team', ...params() });
      assert.deepEqual([res.status, res.body], [400, error(typeof msg === 'string' ? msg : msg())]);
      assert.deepEqual(await log.take(), []);
      assert.equal((await groupsOf(t, t.fx.member)).filter((x) => !x.is_system_group).length, 0);
    });
  }

  test('refuses a name already in use', async () => {
    await createGroup(t, t.fx.member, 'team');
    await log.take();
    const res = await create(t.fx.admin, { name: 'team' });
    assert.deepEqual([res.status, res.body], [400, error("User group 'team' already exists.")]);
    assert.deepEqual(await log.take(), []);
  });

  test('requires name, description and members', async () => {
    const res = await t.as(t.fx.member).post('/user_groups/create', { name: 'x', description: '' });
    assert.equal(res.status, 400);
    assert.deepEqual(
      res.body,
      error("Missing 'members' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'members' }),
    );
  });
});

describe('GET /user_groups', () => {
  test('lists the system groups, then the named groups; deactivated ones only when asked', async () => {
    const a = await createGroup(t, t.fx.member, 'a');
    const b = await createGroup(t, t.fx.member, 'b');
    await t.ctx.db.updateTable('user_groups').set({ deactivated: 1 }).where('id', '=', b).execute();
    const res = await t.as(t.fx.guest).get('/user_groups');
    assert.equal(res.status, 200, res.text);
    const list = res.body.user_groups as Array<Record<string, unknown>>;
    assert.deepEqual(
      list.map((x) => x.name),
      [
        'role:owners',
        'role:administrators',
        'role:moderators',
        'role:fullmembers',
        'role:members',
        'role:everyone',
        'role:internet',
        'role:nobody',
        'a',
      ],
    );
    assert.deepEqual(list[0], {
      id: g['role:owners'],
      name: 'role:owners',
      description: 'Owners of this organization',
      members: [t.fx.owner.id],
      direct_subgroup_ids: [],
      is_system_group: true,
      date_created: list[0].date_created,
      creator_id: null,
      deactivated: false,
      can_add_members_group: g['role:nobody'],
      can_join_group: g['role:nobody'],
      can_leave_group: g['role:nobody'],
      can_manage_group: g['role:nobody'],
      can_mention_group: g['role:everyone'],
      can_remove_members_group: g['role:nobody'],
    });
    // Deactivated users are not shown as members of their role's group.
    assert.deepEqual(
      list[3].members,
      [t.fx.member.id, t.fx.member2.id, t.fx.bot.id].sort((x, y) => x - y),
    );
    assert.deepEqual(list[5].members, [t.fx.guest.id]);
    assert.deepEqual(list[8].id, a);
    const all = await t.as(t.fx.guest).get('/user_groups', { include_deactivated_groups: true });
    assert.deepEqual(
      (all.body.user_groups as Array<Record<string, unknown>>)
        .slice(8)
        .map((x) => [x.name, x.deactivated]),
      [
        ['a', false],
        ['b', true],
      ],
    );
  });

  for (const who of EVERY_CALLER) {
    test(`anyone may list: ${who}`, async () => {
      const res = await as(t, who).get('/user_groups');
      if (assertUnauthorized(who, res)) return;
      assert.equal(res.status, 200, res.text);
      assert.equal((res.body.user_groups as unknown[]).length, 8);
    });
  }

  test('register: realm_user_groups, deactivated groups only with include_deactivated_groups', async () => {
    const a = await createGroup(t, t.fx.member, 'a');
    await t.ctx.db.updateTable('user_groups').set({ deactivated: 1 }).where('id', '=', a).execute();
    const modern = await registerQueue(t.as(t.fx.member), {
      fetch_event_types: ['realm_user_groups'],
      client_capabilities: { notification_settings_null: false, include_deactivated_groups: true },
    });
    const listed = await t
      .as(t.fx.member)
      .get('/user_groups', { include_deactivated_groups: true });
    assert.deepEqual(modern.realm_user_groups, listed.body.user_groups);
    const legacy = await registerQueue(t.as(t.fx.member), {
      fetch_event_types: ['realm_user_groups'],
    });
    assert.deepEqual(legacy.realm_user_groups, (listed.body.user_groups as unknown[]).slice(0, 8));
  });
});

describe('PATCH /user_groups/{id}', () => {
  let id: number;
  beforeEach(async () => {
    id = await createGroup(t, t.fx.member, 'team', { description: 'old' });
    await log.take();
  });
  const patch = (who: FixtureUser, params: Record<string, unknown>) =>
    t.as(who).patch(`/user_groups/${id}`, params);

  test('renames, describes and changes settings: one update event per field', async () => {
    const res = await patch(t.fx.member, {
      name: 'crew',
      description: 'new',
      can_mention_group: { new: g['role:members'], old: g['role:everyone'] },
      can_join_group: { new: { direct_members: [t.fx.guest.id], direct_subgroups: [] } },
      can_leave_group: { new: g['role:everyone'] },
    });
    assert.deepEqual([res.status, res.body], [200, SUCCESS]);
    const update = (data: Record<string, unknown>) => ({
      event: { type: 'user_group', op: 'update', group_id: id, data },
      users: everyone(t),
    });
    assert.deepEqual(await log.take(), [
      update({ name: 'crew' }),
      update({ description: 'new' }),
      update({ can_join_group: { direct_members: [t.fx.guest.id], direct_subgroups: [] } }),
      update({ can_mention_group: g['role:members'] }),
    ]);
    const listed = (await groupsOf(t, t.fx.member)).find((x) => x.id === id);
    assert.deepEqual(
      listed,
      expectedGroup(g, {
        id,
        name: 'crew',
        description: 'new',
        creator_id: t.fx.member.id,
        date_created: T0,
        can_add_members_group: { direct_members: [t.fx.member.id], direct_subgroups: [] },
        can_manage_group: { direct_members: [t.fx.member.id], direct_subgroups: [] },
        can_join_group: { direct_members: [t.fx.guest.id], direct_subgroups: [] },
        can_mention_group: g['role:members'],
      }),
    );
  });

  test("refuses an 'old' value that is not the current one", async () => {
    const res = await patch(t.fx.member, {
      can_mention_group: { new: g['role:members'], old: g['role:nobody'] },
    });
    assert.deepEqual(
      [res.status, res.body],
      [400, error("'old' value does not match the expected value.", 'EXPECTATION_MISMATCH')],
    );
    assert.deepEqual(await log.take(), []);
  });

  const refusals: Array<[string, () => Record<string, unknown>, string | (() => string)]> = [
    [
      'a name in use',
      () => ({ name: 'role:owners' }),
      "User group name cannot start with 'role:'.",
    ],
    [
      'a long name',
      () => ({ name: 'y'.repeat(101) }),
      'User group name cannot exceed 100 characters.',
    ],
    [
      'can_manage_group = role:everyone',
      () => ({ can_manage_group: { new: g['role:everyone'] } }),
      "'can_manage_group' setting cannot be set to 'role:everyone' group.",
    ],
    [
      'can_mention_group = role:owners',
      () => ({ can_mention_group: { new: g['role:owners'] } }),
      "'can_mention_group' setting cannot be set to 'role:owners' group.",
    ],
  ];
  for (const [label, params, msg] of refusals) {
    test(`refuses ${label}`, async () => {
      const res = await patch(t.fx.member, { description: 'changed', ...params() });
      assert.deepEqual([res.status, res.body], [400, error(msg as string)]);
      assert.deepEqual(await log.take(), []);
    });
  }

  test('refuses a request that changes nothing', async () => {
    const res = await patch(t.fx.member, {});
    assert.deepEqual([res.status, res.body], [400, error('No new data supplied')]);
  });

  test('refuses a name another group has', async () => {
    await createGroup(t, t.fx.member, 'other');
    await log.take();
    const res = await patch(t.fx.member, { name: 'other' });
    assert.deepEqual([res.status, res.body], [400, error("User group 'other' already exists.")]);
  });

  test('refuses unknown groups, anonymous groups and system groups', async () => {
    const anonymous = await t.ctx.db
      .selectFrom('user_groups')
      .select('id')
      .where('name', 'is', null)
      .executeTakeFirstOrThrow();
    for (const target of [9999, anonymous.id]) {
      const res = await t.as(t.fx.owner).patch(`/user_groups/${target}`, { description: 'x' });
      assert.deepEqual([res.status, res.body], [400, error('Invalid user group')]);
    }
    const system = await t.as(t.fx.owner).patch(`/user_groups/${g['role:members']}`, {
      description: 'x',
    });
    assert.deepEqual([system.status, system.body], [400, error('Insufficient permission')]);
    const otherRealm = await t.ctx.db
      .selectFrom('user_groups')
      .select('id')
      .where('realm_id', '=', t.fx.other.id)
      .where('name', '=', 'role:members')
      .executeTakeFirstOrThrow();
    const other = await t
      .as(t.fx.owner)
      .patch(`/user_groups/${otherRealm.id}`, { description: 'x' });
    assert.deepEqual([other.status, other.body], [400, error('Invalid user group')]);
  });

  // The group's can_manage_group holds its creator; can_manage_all_groups holds owners.
  const MAY_MANAGE = new Set(['owner', 'member']);
  for (const who of EVERY_CALLER) {
    test(`who may edit: ${who}`, async () => {
      const res = await as(t, who).patch(`/user_groups/${id}`, { description: `by ${who}` });
      if (assertUnauthorized(who, res)) return;
      if (!MAY_MANAGE.has(who)) {
        assert.deepEqual([res.status, res.body], [400, error('Insufficient permission')]);
        assert.deepEqual(await log.take(), []);
        return;
      }
      assert.deepEqual([res.status, res.body], [200, SUCCESS]);
      assert.equal((await log.take()).length, 1);
    });
  }

  test('can_manage_all_groups lets its members edit any group', async () => {
    await setRealmSetting(t, 'can_manage_all_groups', g['role:moderators']);
    const res = await patch(t.fx.moderator, { description: 'x' });
    assert.deepEqual([res.status, res.body], [200, SUCCESS]);
  });
});
