// Event contract of the bot actions: creation, changes, a new owner, a new API key and
// deactivation, as the bot's owner, administrators and everyone else see them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestApp } from '../support/app.ts';
import { ALL_VIEWERS, ok, runContract } from './harness.ts';

const createBot = (t: TestApp) =>
  t.as(t.fx.member2).post('/bots', { full_name: 'Second Bot', short_name: 'second' });

test('POST /bots: realm_bot add to the owner and administrators, realm_user add to all', async () => {
  const seen = await runContract({
    changes: ALL_VIEWERS,
    act: (t) => ok(createBot(t)),
  });
  assert.deepEqual(
    seen
      .get('member2')!
      .map((e) => `${e.type}/${String(e.op)}`)
      .filter((k) => k.startsWith('realm_'))
      .sort(),
    ['realm_bot/add', 'realm_user/add'],
  );
  assert.deepEqual(
    seen
      .get('member')!
      .map((e) => `${e.type}/${String(e.op)}`)
      .filter((k) => k.startsWith('realm_')),
    ['realm_user/add'],
  );
});

test('POST /bots: an outgoing-webhook bot with its service', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    act: (t) =>
      ok(
        t.as(t.fx.member2).post('/bots', {
          full_name: 'Hook Bot',
          short_name: 'hook',
          bot_type: 3,
          payload_url: 'https://hooks.example.test/parley',
        }),
      ),
  });
});

test("PATCH /bots/{id}: the bot's name", async () => {
  await runContract({
    changes: ALL_VIEWERS,
    act: (t) => ok(t.as(t.fx.member).patch(`/bots/${t.fx.bot.id}`, { full_name: 'Helper Bot II' })),
  });
});

test('PATCH /bots/{id}: default_all_public_streams concerns only who manages the bot', async () => {
  await runContract({
    changes: ['owner', 'admin', 'member'],
    act: (t) =>
      ok(t.as(t.fx.member).patch(`/bots/${t.fx.bot.id}`, { default_all_public_streams: true })),
  });
});

test('PATCH /bots/{id}: a new owner', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    act: (t) =>
      ok(t.as(t.fx.admin).patch(`/bots/${t.fx.bot.id}`, { bot_owner_id: t.fx.member2.id })),
  });
});

test('POST /bots/{id}/api_key/regenerate: only who manages the bot learns the key', async () => {
  await runContract({
    changes: ['owner', 'admin', 'member'],
    viewers: ['owner', 'admin', 'moderator', 'member', 'member2', 'guest'],
    act: (t) => ok(t.as(t.fx.member).post(`/bots/${t.fx.bot.id}/api_key/regenerate`)),
  });
});

test('DELETE /bots/{id}: deactivation', async () => {
  await runContract({
    changes: ['owner', 'admin', 'moderator', 'member', 'member2', 'guest'],
    viewers: ['owner', 'admin', 'moderator', 'member', 'member2', 'guest'],
    act: (t) => ok(t.as(t.fx.member).delete(`/bots/${t.fx.bot.id}`)),
  });
});

test("PATCH /bots/{id}: the bot's role", async () => {
  await runContract({
    changes: ALL_VIEWERS,
    act: (t) => ok(t.as(t.fx.admin).patch(`/bots/${t.fx.bot.id}`, { role: 300 })),
  });
});
