// User groups: POST/GET /user_groups/{id}/members and /subgroups, membership checks,
// POST /user_groups/{id}/deactivate, group mentions through subgroups, and deactivated
// users hidden from groups.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { as, assertUnauthorized, error, EVERY_CALLER, everyone } from '../support/bots.ts';
import { SUCCESS } from '../support/client.ts';
import { systemGroups } from '../support/channels.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { captureNotices, type NoticeLog } from '../support/notices.ts';
import { addUser, rowsOf, setChannel, setRealmSetting, useClock } from '../support/messages.ts';
import { createGroup, groupsOf, type SystemIds } from '../support/user-groups.ts';

let t: TestApp;
let log: NoticeLog;
let g: SystemIds;
let team: number;
beforeEach(async () => {
  t = await buildTestApp();
  useClock(t);
  log = captureNotices(t);
  g = await systemGroups(t);
  // Managed by its creator, member; member2 belongs to it.
  team = await createGroup(t, t.fx.member, 'team', { members: [t.fx.member2.id] });
  await log.take();
});
afterEach(async () => {
  await t.close();
});

const members = (who: FixtureUser, params: Record<string, unknown>, id = team) =>
  t.as(who).post(`/user_groups/${id}/members`, params);
const subgroups = (who: FixtureUser, params: Record<string, unknown>, id = team) =>
  t.as(who).post(`/user_groups/${id}/subgroups`, params);
const toEveryone = (event: Record<string, unknown>) => ({
  event: { type: 'user_group', ...event },
  users: everyone(t),
});
const groupById = async (id: number) => (await groupsOf(t, t.fx.member)).find((x) => x.id === id)!;

describe('POST /user_groups/{id}/members', () => {
  test('adds and removes members: one event each, to everyone', async () => {
    const res = await members(t.fx.member, {
      add: [t.fx.guest.id, t.fx.bot.id],
      delete: [t.fx.member2.id],
    });
    assert.deepEqual([res.status, res.body], [200, SUCCESS]);
    assert.deepEqual(await log.take(), [
      toEveryone({
        op: 'add_members',
        group_id: team,
        user_ids: [t.fx.guest.id, t.fx.bot.id].sort((a, b) => a - b),
      }),
      toEveryone({ op: 'remove_members', group_id: team, user_ids: [t.fx.member2.id] }),
    ]);
    assert.deepEqual(
      (await groupById(team)).members,
      [t.fx.guest.id, t.fx.bot.id].sort((a, b) => a - b),
    );
  });

  const refusals: Array<[string, () => Record<string, unknown>, () => string]> = [
    [
      'adding a member',
      () => ({ add: [t.fx.member2.id] }),
      () => `User ${t.fx.member2.id} is already a member of this group`,
    ],
    [
      'removing a non-member',
      () => ({ delete: [t.fx.guest.id] }),
      () => `There is no member '${t.fx.guest.id}' in this user group`,
    ],
    ['adding an unknown user', () => ({ add: [9999] }), () => 'Invalid user ID: 9999'],
    [
      'adding a deactivated user',
      () => ({ add: [t.fx.deactivated.id] }),
      () => `Invalid user ID: ${t.fx.deactivated.id}`,
    ],
    ['removing an unknown user', () => ({ delete: [9999] }), () => 'Invalid user ID: 9999'],
    [
      'nothing to do',
      () => ({}),
      () =>
        "Nothing to do. Specify at least one of 'add', 'delete', 'add_subgroups' or 'delete_subgroups'.",
    ],
  ];
  for (const [label, params, msg] of refusals) {
    test(`refuses ${label}`, async () => {
      const res = await members(t.fx.member, params());
      assert.deepEqual([res.status, res.body], [400, error(msg())]);
      assert.deepEqual(await log.take(), []);
    });
  }

  test('refuses unknown and system groups', async () => {
    const unknown = await members(t.fx.owner, { add: [t.fx.guest.id] }, 9999);
    assert.deepEqual([unknown.status, unknown.body], [400, error('Invalid user group')]);
    const system = await members(t.fx.owner, { add: [t.fx.guest.id] }, g['role:members']);
    assert.deepEqual([system.status, system.body], [400, error('Insufficient permission')]);
  });

  // can_add_members_group and can_manage_group hold member; can_manage_all_groups, owners.
  const MAY_ADD = new Set(['owner', 'member']);
  for (const who of EVERY_CALLER) {
    test(`who may add others: ${who}`, async () => {
      const res = await as(t, who).post(`/user_groups/${team}/members`, {
        add: [t.fx.moderator.id],
      });
      if (assertUnauthorized(who, res)) return;
      if (!MAY_ADD.has(who)) {
        assert.deepEqual([res.status, res.body], [400, error('Insufficient permission')]);
        return;
      }
      assert.deepEqual([res.status, res.body], [200, SUCCESS]);
    });
  }

  test('can_join_group lets a user add only themselves', async () => {
    const open = await createGroup(t, t.fx.member, 'open', { can_join_group: g['role:everyone'] });
    const other = await members(t.fx.guest, { add: [t.fx.admin.id] }, open);
    assert.deepEqual([other.status, other.body], [400, error('Insufficient permission')]);
    const self = await members(t.fx.guest, { add: [t.fx.guest.id] }, open);
    assert.deepEqual([self.status, self.body], [200, SUCCESS]);
    // Nobody joins the default group on their own.
    const closed = await members(t.fx.guest, { add: [t.fx.guest.id] });
    assert.deepEqual([closed.status, closed.body], [400, error('Insufficient permission')]);
  });

  test('can_leave_group (everyone by default) lets a member remove only themselves', async () => {
    await members(t.fx.member, { add: [t.fx.guest.id] });
    await log.take();
    const other = await members(t.fx.member2, { delete: [t.fx.guest.id] });
    assert.deepEqual([other.status, other.body], [400, error('Insufficient permission')]);
    const self = await members(t.fx.member2, { delete: [t.fx.member2.id] });
    assert.deepEqual([self.status, self.body], [200, SUCCESS]);
    assert.deepEqual(await log.take(), [
      toEveryone({ op: 'remove_members', group_id: team, user_ids: [t.fx.member2.id] }),
    ]);
  });

  test('nobody adds to a deactivated group', async () => {
    const res0 = await t.as(t.fx.member).post(`/user_groups/${team}/deactivate`);
    assert.equal(res0.status, 200, res0.text);
    const res = await members(t.fx.member, { add: [t.fx.guest.id] });
    assert.deepEqual(
      [res.status, res.body],
      [400, error('You can not add members to a deactivated user group.')],
    );
  });
});

describe('subgroups', () => {
  let sub: number;
  let leaf: number;
  beforeEach(async () => {
    sub = await createGroup(t, t.fx.member, 'sub', { members: [t.fx.moderator.id] });
    leaf = await createGroup(t, t.fx.member, 'leaf', { members: [t.fx.admin.id] });
    await subgroups(t.fx.member, { add: [leaf] }, sub);
    await log.take();
  });

  test('POST /subgroups and the members route add and remove subgroups', async () => {
    const res = await subgroups(t.fx.member, { add: [sub, g['role:owners']] });
    assert.deepEqual([res.status, res.body], [200, SUCCESS]);
    const res2 = await members(t.fx.member, { delete_subgroups: [g['role:owners']] });
    assert.deepEqual([res2.status, res2.body], [200, SUCCESS]);
    assert.deepEqual(await log.take(), [
      toEveryone({
        op: 'add_subgroups',
        group_id: team,
        direct_subgroup_ids: [g['role:owners'], sub].sort((a, b) => a - b),
      }),
      toEveryone({
        op: 'remove_subgroups',
        group_id: team,
        direct_subgroup_ids: [g['role:owners']],
      }),
    ]);
    assert.deepEqual((await groupById(team)).direct_subgroup_ids, [sub]);
  });

  test('GET members, subgroups and membership, direct or through subgroups', async () => {
    await subgroups(t.fx.member, { add: [sub] });
    const get = async (path: string, params: Record<string, unknown> = {}) => {
      const res = await t.as(t.fx.guest).get(path, params);
      assert.equal(res.status, 200, res.text);
      const { result: _r, msg: _m, ...rest } = res.body;
      return rest;
    };
    const sorted = (...xs: number[]) => xs.sort((a, b) => a - b);
    assert.deepEqual(await get(`/user_groups/${team}/members`), {
      members: sorted(t.fx.member2.id, t.fx.moderator.id, t.fx.admin.id),
    });
    assert.deepEqual(await get(`/user_groups/${team}/members`, { direct_member_only: true }), {
      members: [t.fx.member2.id],
    });
    assert.deepEqual(await get(`/user_groups/${team}/subgroups`), {
      subgroups: sorted(sub, leaf),
    });
    assert.deepEqual(await get(`/user_groups/${team}/subgroups`, { direct_subgroup_only: true }), {
      subgroups: [sub],
    });
    assert.deepEqual(await get(`/user_groups/${team}/members/${t.fx.admin.id}`), {
      is_user_group_member: true,
    });
    assert.deepEqual(
      await get(`/user_groups/${team}/members/${t.fx.admin.id}`, { direct_member_only: true }),
      { is_user_group_member: false },
    );
    assert.deepEqual(await get(`/user_groups/${team}/members/${t.fx.guest.id}`), {
      is_user_group_member: false,
    });
    const unknownUser = await t.as(t.fx.guest).get(`/user_groups/${team}/members/9999`);
    assert.deepEqual([unknownUser.status, unknownUser.body], [400, error('No such user')]);
    for (const path of ['/user_groups/9999/members', '/user_groups/9999/subgroups']) {
      const res = await t.as(t.fx.guest).get(path);
      assert.deepEqual([res.status, res.body], [400, error('Invalid user group')]);
    }
  });

  test('refuses cycles, repeated and missing subgroups', async () => {
    const cases: Array<[number, Record<string, unknown>, string]> = [
      [
        leaf,
        { add: [sub] },
        `User group ${leaf} is already a subgroup of one of the passed subgroups.`,
      ],
      [
        team,
        { add: [team] },
        `User group ${team} is already a subgroup of one of the passed subgroups.`,
      ],
      [sub, { add: [leaf] }, `User group ${leaf} is already a subgroup of this group.`],
      [team, { delete: [leaf] }, `User group ${leaf} is not a subgroup of this group.`],
      [team, { add: [9999] }, 'Invalid user group ID: 9999'],
    ];
    for (const [target, params, msg] of cases) {
      const res = await subgroups(t.fx.member, params, target);
      assert.deepEqual([res.status, res.body], [400, error(msg)], msg);
    }
    assert.deepEqual(await log.take(), []);
  });

  test('only those who may add members add subgroups', async () => {
    const res = await subgroups(t.fx.admin, { add: [sub] });
    assert.deepEqual([res.status, res.body], [400, error('Insufficient permission')]);
    const res2 = await subgroups(t.fx.member, { delete: [leaf] }, sub);
    assert.deepEqual([res2.status, res2.body], [200, SUCCESS]);
  });

  test('mentioning a group flags its members and its subgroups’ members', async () => {
    await subgroups(t.fx.member, { add: [sub] });
    const res = await t.as(t.fx.owner).post('/messages', {
      type: 'stream',
      to: t.fx.channels.general.name,
      topic: 'hello',
      content: 'ping @*team*',
    });
    assert.equal(res.status, 200, res.text);
    const flags = await rowsOf(t, res.body.id as number);
    const mentioned = Object.entries(flags)
      .filter(([, f]) => (f & 8) !== 0)
      .map(([id]) => Number(id))
      .sort((a, b) => a - b);
    assert.deepEqual(
      mentioned,
      [t.fx.admin.id, t.fx.moderator.id, t.fx.member2.id].sort((a, b) => a - b),
    );
  });

  test('can_mention_group decides who may mention the group', async () => {
    const patched = await t.as(t.fx.member).patch(`/user_groups/${team}`, {
      can_mention_group: { new: g['role:administrators'] },
    });
    assert.equal(patched.status, 200, patched.text);
    const send = (who: FixtureUser) =>
      t.as(who).post('/messages', {
        type: 'stream',
        to: t.fx.channels.general.name,
        topic: 'hello',
        content: '@*team*',
      });
    const refused = await send(t.fx.member);
    assert.deepEqual(
      [refused.status, refused.body],
      [400, error("You are not allowed to mention user group 'team'.")],
    );
    assert.equal((await send(t.fx.admin)).status, 200);
  });
});

describe('POST /user_groups/{id}/deactivate', () => {
  test('deactivates: update {deactivated: true} to everyone; lists leave it out', async () => {
    const res = await t.as(t.fx.member).post(`/user_groups/${team}/deactivate`);
    assert.deepEqual([res.status, res.body], [200, SUCCESS]);
    assert.deepEqual(await log.take(), [
      toEveryone({ op: 'update', group_id: team, data: { deactivated: true } }),
    ]);
    const listed = await t.as(t.fx.member).get('/user_groups');
    assert.ok(!(listed.body.user_groups as Array<{ id: number }>).some((x) => x.id === team));
    assert.equal((await groupById(team)).deactivated, true);
    const again = await t.as(t.fx.member).post(`/user_groups/${team}/deactivate`);
    assert.deepEqual(
      [again.status, again.body],
      [400, error('User group is already deactivated.')],
    );
  });

  test('refuses a group that a setting uses, directly or through a containing group', async () => {
    // Only team's member, member2, may now create groups.
    await setRealmSetting(t, 'can_create_groups', team);
    const user = await createGroup(t, t.fx.member2, 'user', { can_mention_group: team });
    const outer = await createGroup(t, t.fx.member2, 'outer', {
      can_join_group: { direct_members: [t.fx.guest.id], direct_subgroups: [team] },
    });
    const res = await t.as(t.fx.member).post(`/user_groups/${team}/deactivate`);
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, {
      result: 'error',
      msg: 'Cannot deactivate user group in use.',
      code: 'CANNOT_DEACTIVATE_GROUP_IN_USE',
      objections: [
        { type: 'realm', settings: ['can_create_groups'] },
        { type: 'user_group', group_id: user, settings: ['can_mention_group'] },
        { type: 'user_group', group_id: outer, settings: ['can_join_group'] },
      ],
    });
  });

  test("refuses a group a channel's setting uses; archived channels do not count", async () => {
    await setChannel(t, t.fx.channels.design.id, { groups: { can_send_message_group: team } });
    await setChannel(t, t.fx.channels.web.id, {
      is_archived: 1,
      groups: { can_subscribe_group: team },
    });
    const res = await t.as(t.fx.member).post(`/user_groups/${team}/deactivate`);
    assert.deepEqual(res.body, {
      result: 'error',
      msg: 'Cannot deactivate user group in use.',
      code: 'CANNOT_DEACTIVATE_GROUP_IN_USE',
      objections: [
        {
          type: 'channel',
          channel_id: t.fx.channels.design.id,
          settings: ['can_send_message_group'],
        },
      ],
    });
  });

  const MAY_DEACTIVATE = new Set(['owner', 'member']);
  for (const who of EVERY_CALLER) {
    test(`who may deactivate: ${who}`, async () => {
      const res = await as(t, who).post(`/user_groups/${team}/deactivate`);
      if (assertUnauthorized(who, res)) return;
      if (!MAY_DEACTIVATE.has(who)) {
        assert.deepEqual([res.status, res.body], [400, error('Insufficient permission')]);
        return;
      }
      assert.deepEqual([res.status, res.body], [200, SUCCESS]);
    });
  }

  test('refuses unknown and system groups', async () => {
    const unknown = await t.as(t.fx.owner).post('/user_groups/9999/deactivate');
    assert.deepEqual([unknown.status, unknown.body], [400, error('Invalid user group')]);
    const system = await t.as(t.fx.owner).post(`/user_groups/${g['role:nobody']}/deactivate`);
    assert.deepEqual([system.status, system.body], [400, error('Insufficient permission')]);
  });
});

describe('deactivated users', () => {
  test('users who cannot access a deactivated user are told group by group', async () => {
    await setRealmSetting(t, 'can_access_all_users_group', g['role:members']);
    const stranger = await addUser(t, 'Stranger');
    await members(t.fx.member, { add: [stranger.id] });
    await log.take();
    const off = await t.as(t.fx.admin).delete(`/users/${stranger.id}`);
    assert.equal(off.status, 200, off.text);
    const sent = (await log.take()).filter((s) => s.event.type === 'user_group');
    const removal = (groupId: number) => ({
      event: {
        type: 'user_group',
        op: 'remove_members',
        group_id: groupId,
        user_ids: [stranger.id],
      },
      users: [t.fx.guest.id],
    });
    assert.deepEqual(sent, [removal(g['role:fullmembers']), removal(team)]);
  });

  test('are hidden from groups, and shown again with add_members on reactivation', async () => {
    const off = await t.as(t.fx.admin).delete(`/users/${t.fx.member2.id}`);
    assert.equal(off.status, 200, off.text);
    assert.deepEqual((await groupById(team)).members, []);
    const check = await t.as(t.fx.member).get(`/user_groups/${team}/members/${t.fx.member2.id}`);
    assert.equal(check.body.is_user_group_member, false);
    const listed = await t.as(t.fx.member).get(`/user_groups/${team}/members`);
    assert.deepEqual(listed.body.members, []);
    await log.take();
    const on = await t.as(t.fx.admin).post(`/users/${t.fx.member2.id}/reactivate`);
    assert.equal(on.status, 200, on.text);
    const sent = (await log.take()).filter((s) => s.event.type === 'user_group');
    assert.deepEqual(sent, [
      toEveryone({
        op: 'add_members',
        group_id: g['role:fullmembers'],
        user_ids: [t.fx.member2.id],
      }),
      toEveryone({ op: 'add_members', group_id: team, user_ids: [t.fx.member2.id] }),
    ]);
    assert.deepEqual((await groupById(team)).members, [t.fx.member2.id]);
  });
});
