// Event contract of the user actions: creation, name and role changes, deactivation and
// reactivation, as every fixture user sees them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ROLE } from '../../src/lib/roles.ts';
import { listSystemGroups } from '../../src/store/user-groups.ts';
import type { TestApp } from '../support/app.ts';
import { withoutIds } from '../support/events.ts';
import { ALL_VIEWERS, ok, runContract } from './harness.ts';

test('POST /users: every user gets realm_user add', async () => {
  const seen = await runContract({
    changes: ALL_VIEWERS,
    act: (t) =>
      ok(
        t.as(t.fx.admin).post('/users', {
          email: 'newbie@parley.test',
          password: 'newbie-password',
          full_name: 'New Bie',
        }),
      ),
  });
  const adds = seen.get('member')!.filter((e) => e.type === 'realm_user');
  assert.equal(adds.length, 1);
  assert.equal((adds[0].person as Record<string, unknown>).full_name, 'New Bie');
});

async function limitGuests(t: TestApp): Promise<void> {
  const groups = await listSystemGroups(t.ctx.db, t.fx.realm.id);
  const members = groups.find((g) => g.name === 'role:members')!.id;
  await ok(t.as(t.fx.owner).patch('/realm', { can_access_all_users_group: { new: members } }));
}

const createStranger = (t: TestApp) =>
  ok(
    t.as(t.fx.admin).post('/users', {
      email: 'stranger@parley.test',
      password: 'stranger-password',
      full_name: 'Stranger',
    }),
  );

test('POST /users: a limited guest with user_list_incomplete hears only of a stranger joining a group', async () => {
  await runContract({
    // Group membership events go to everyone, whoever can access the member.
    changes: ['guest'],
    viewers: ['guest'],
    forms: ['modern'],
    setup: limitGuests,
    act: createStranger,
  });
});

test('POST /users: a limited guest without user_list_incomplete gets an "Unknown user"', async () => {
  await runContract({
    changes: ['guest'],
    viewers: ['guest'],
    forms: ['legacy'],
    setup: limitGuests,
    act: createStranger,
  });
});

test("PATCH /users/{id}: a member's new name reaches everyone", async () => {
  await runContract({
    changes: ALL_VIEWERS,
    act: (t) =>
      ok(t.as(t.fx.admin).patch(`/users/${t.fx.member.id}`, { full_name: 'Mark Renamed' })),
  });
});

test('PATCH /users/{id}: a member becomes moderator', async () => {
  const seen = await runContract({
    changes: ALL_VIEWERS,
    act: (t) => ok(t.as(t.fx.admin).patch(`/users/${t.fx.member.id}`, { role: ROLE.moderator })),
  });
  assert.deepEqual(
    withoutIds(seen.get('member2')!).filter((e) => e.type === 'realm_user'),
    [{ type: 'realm_user', op: 'update', person: { user_id: 4, role: ROLE.moderator } }],
  );
});

test('PATCH /users/{id}: a member becomes a guest, losing permissions', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    act: (t) => ok(t.as(t.fx.admin).patch(`/users/${t.fx.member.id}`, { role: ROLE.guest })),
  });
});

// Clients without archived_channels were told of an archiving as a deletion: the archived
// channel a role change hides or shows is not in their stream events.
test('PATCH /users/{id}: a member becomes a guest, with an archived channel', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    setup: (t) => ok(t.as(t.fx.admin).delete(`/streams/${t.fx.channels.announce.id}`)),
    act: (t) => ok(t.as(t.fx.admin).patch(`/users/${t.fx.member2.id}`, { role: ROLE.guest })),
  });
});

test('PATCH /users/{id}: a guest becomes a member, with an archived channel', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    setup: (t) => ok(t.as(t.fx.admin).delete(`/streams/${t.fx.channels.design.id}`)),
    act: (t) => ok(t.as(t.fx.admin).patch(`/users/${t.fx.guest.id}`, { role: ROLE.member })),
  });
});

// Clients dropped a deactivated user from every group: a role change moves them between
// system groups without events, and their reactivation shows them in the new one.
test('PATCH /users/{id}: a deactivated member becomes an owner', async () => {
  await runContract({
    changes: ALL_VIEWERS.filter((v) => v !== 'member2'),
    viewers: ALL_VIEWERS.filter((v) => v !== 'member2'),
    setup: (t) => ok(t.as(t.fx.admin).delete(`/users/${t.fx.member2.id}`)),
    act: (t) => ok(t.as(t.fx.owner).patch(`/users/${t.fx.member2.id}`, { role: ROLE.owner })),
  });
});

test('PATCH /users/{id}: a guest becomes a member, seeing more channels', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    act: (t) => ok(t.as(t.fx.admin).patch(`/users/${t.fx.guest.id}`, { role: ROLE.member })),
  });
});

test('PATCH /users/{id}: an administrator becomes a member', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    viewers: ['owner', 'moderator', 'member', 'guest', 'bot'],
    act: (t) => ok(t.as(t.fx.owner).patch(`/users/${t.fx.admin.id}`, { role: ROLE.member })),
  });
});

// An administrator's realm_bots lists every bot, a member's only their own: a role change
// sends the realm_bot add/delete events that keep it current.
test('PATCH /users/{id}: the viewer itself is demoted from administrator', async () => {
  await runContract({
    changes: ['admin'],
    viewers: ['admin'],
    act: (t) => ok(t.as(t.fx.owner).patch(`/users/${t.fx.admin.id}`, { role: ROLE.member })),
  });
});

test('PATCH /users/{id}: the viewer itself is promoted to administrator', async () => {
  await runContract({
    changes: ['member2'],
    viewers: ['member2'],
    act: (t) =>
      ok(t.as(t.fx.owner).patch(`/users/${t.fx.member2.id}`, { role: ROLE.administrator })),
  });
});

test('DELETE /users/{id}: deactivating a member also stops the bot they own', async () => {
  const seen = await runContract({
    // The member and their bot are deactivated: they cannot register again.
    changes: ['owner', 'admin', 'moderator', 'member2', 'guest'],
    viewers: ['owner', 'admin', 'moderator', 'member2', 'guest'],
    act: (t) => ok(t.as(t.fx.admin).delete(`/users/${t.fx.member.id}`)),
  });
  const toMember2 = withoutIds(seen.get('member2')!)
    .filter((e) => e.type === 'realm_user')
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  assert.deepEqual(toMember2, [
    { type: 'realm_user', op: 'update', person: { user_id: 4, is_active: false } },
    { type: 'realm_user', op: 'update', person: { user_id: 7, is_active: false } },
  ]);
});

test('POST /users/{id}/reactivate: everyone sees the user again', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    act: (t) => ok(t.as(t.fx.admin).post(`/users/${t.fx.deactivated.id}/reactivate`)),
  });
});

test("PATCH /users/{id}: an administrator sets a member's custom profile data", async () => {
  await runContract({
    changes: ALL_VIEWERS,
    setup: (t) =>
      ok(t.as(t.fx.admin).post('/realm/profile_fields', { name: 'Phone', field_type: 1 })),
    act: async (t) => {
      const fields = await t.as(t.fx.member).get('/realm/profile_fields');
      const [phone] = fields.body.custom_fields as Array<{ id: number }>;
      await ok(
        t.as(t.fx.admin).patch(`/users/${t.fx.member.id}`, {
          profile_data: [{ id: phone.id, value: '+1 555' }],
        }),
      );
    },
  });
});
