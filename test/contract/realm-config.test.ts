// Event contract of muted users, custom profile fields, code playgrounds and onboarding
// steps: each change's events, applied to every viewer's snapshot, give a fresh snapshot.
import { test } from 'node:test';
import { sendDirect, sendToChannel } from '../support/messages.ts';
import type { TestApp } from '../support/app.ts';
import { ALL_VIEWERS, ok, runContract } from './harness.ts';

test('POST /users/me/muted_users/{id}: the muter’s list and unread messages', async () => {
  await runContract({
    changes: ['member'],
    setup: async (t) => {
      await sendToChannel(t, t.fx.member2, t.fx.channels.general, 'noise', 'one');
      await sendDirect(t, t.fx.member2, [t.fx.member], 'two');
    },
    act: (t) => ok(t.as(t.fx.member).post(`/users/me/muted_users/${t.fx.member2.id}`)),
  });
});

test('DELETE /users/me/muted_users/{id}: the muter’s list', async () => {
  await runContract({
    changes: ['guest'],
    setup: async (t) => {
      await ok(t.as(t.fx.guest).post(`/users/me/muted_users/${t.fx.bot.id}`));
    },
    act: (t) => ok(t.as(t.fx.guest).delete(`/users/me/muted_users/${t.fx.bot.id}`)),
  });
});

/** A field, and member's value of it. */
async function profileField(t: TestApp): Promise<number> {
  const res = await t.as(t.fx.admin).post('/realm/profile_fields', { name: 'Bio', field_type: 2 });
  await ok(Promise.resolve(res));
  const id = res.body.id as number;
  await ok(t.as(t.fx.member).patch('/users/me/profile_data', { data: [{ id, value: '**hi**' }] }));
  return id;
}

test('POST /realm/profile_fields: everyone gets the new list', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    act: (t) =>
      ok(
        t.as(t.fx.owner).post('/realm/profile_fields', {
          name: 'Editor',
          field_type: 3,
          field_data: { a: { text: 'Vim', order: '1' } },
        }),
      ),
  });
});

test('PATCH /realm/profile_fields/{id} and reordering: everyone gets the new list', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    setup: async (t) => {
      await profileField(t);
    },
    act: async (t) => {
      const [bio] = (await t.as(t.fx.admin).get('/realm/profile_fields')).body
        .custom_fields as Array<{ id: number }>;
      const other = await t.as(t.fx.admin).post('/realm/profile_fields', { name: 'Other' });
      await ok(t.as(t.fx.admin).patch(`/realm/profile_fields/${bio.id}`, { hint: 'About you' }));
      await ok(t.as(t.fx.admin).patch('/realm/profile_fields', { order: [other.body.id, bio.id] }));
    },
  });
});

test('DELETE /realm/profile_fields/{id}: the list, and values of it are gone', async () => {
  let id = 0;
  await runContract({
    changes: ALL_VIEWERS,
    setup: async (t) => {
      id = await profileField(t);
    },
    act: (t) => ok(t.as(t.fx.admin).delete(`/realm/profile_fields/${id}`)),
  });
});

test('PATCH and DELETE /users/me/profile_data: everyone who can access the user', async () => {
  let id = 0;
  await runContract({
    changes: ALL_VIEWERS,
    setup: async (t) => {
      id = await profileField(t);
    },
    act: async (t) => {
      await ok(t.as(t.fx.member2).patch('/users/me/profile_data', { data: [{ id, value: 'x' }] }));
      await ok(t.as(t.fx.member).delete('/users/me/profile_data', { data: [id] }));
    },
  });
});

test('POST and DELETE /realm/playgrounds: everyone gets the new list', async () => {
  const rust = {
    name: 'Rust',
    pygments_language: 'Rust',
    url_template: 'https://play.example/{?code}',
  };
  await runContract({
    changes: ALL_VIEWERS,
    act: async (t) => {
      await ok(t.as(t.fx.admin).post('/realm/playgrounds', rust));
      const other = await t.as(t.fx.admin).post('/realm/playgrounds', { ...rust, name: 'Two' });
      await ok(t.as(t.fx.owner).delete(`/realm/playgrounds/${other.body.id as number}`));
    },
  });
});

test('POST /users/me/onboarding_steps: the user’s unseen notices', async () => {
  await runContract({
    changes: ['moderator'],
    act: (t) =>
      ok(
        t.as(t.fx.moderator).post('/users/me/onboarding_steps', {
          onboarding_step: 'visibility_policy_banner',
        }),
      ),
  });
});
