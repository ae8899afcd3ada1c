// Event contract of PATCH /settings: the user's own settings (modern and legacy forms),
// and the profile changes other users see.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withoutIds } from '../support/events.ts';
import { ALL_VIEWERS, ok, runContract } from './harness.ts';

test('PATCH /settings: display and notification settings reach only the user', async () => {
  const seen = await runContract({
    changes: ['member'],
    act: (t) =>
      ok(
        t.as(t.fx.member).patch('/settings', {
          twenty_four_hour_time: true,
          default_language: 'de',
          emojiset: 'text',
          enable_sounds: false,
          enter_sends: true,
          web_font_size_px: 18,
        }),
      ),
  });
  assert.deepEqual(
    withoutIds(seen.get('member')!).find((e) => e.property === 'default_language'),
    {
      type: 'user_settings',
      op: 'update',
      property: 'default_language',
      value: 'de',
      language_name: 'Deutsch',
    },
  );
});

test('PATCH /settings: a new name reaches everyone', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    act: (t) => ok(t.as(t.fx.member).patch('/settings', { full_name: 'Marcus Member' })),
  });
});

test('PATCH /settings: a new time zone reaches everyone', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    act: (t) => ok(t.as(t.fx.member).patch('/settings', { timezone: 'Europe/Berlin' })),
  });
});

test('PATCH /settings: hiding the email address from all but administrators', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    act: (t) => ok(t.as(t.fx.member).patch('/settings', { email_address_visibility: 3 })),
  });
});

// A viewer who gains the real address computes the Gravatar itself (client_gravatar), so
// its avatar_url turns null: the avatar form of realm_user update follows the
// delivery_email one.
test('PATCH /settings: showing a hidden email address to members again', async () => {
  await runContract({
    // The guest still may not see it.
    changes: ALL_VIEWERS.filter((v) => v !== 'guest'),
    setup: (t) => ok(t.as(t.fx.member).patch('/settings', { email_address_visibility: 4 })),
    act: (t) => ok(t.as(t.fx.member).patch('/settings', { email_address_visibility: 2 })),
  });
});

test('PATCH /settings: a new email address reaches those who may see it', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    act: (t) => ok(t.as(t.fx.member).patch('/settings', { email: 'mark@elsewhere.test' })),
  });
});

test('PATCH /settings: a new hidden email address', async () => {
  // Everyone's view changes: the Gravatar URL follows the real address.
  await runContract({
    changes: ALL_VIEWERS,
    setup: (t) => ok(t.as(t.fx.member).patch('/settings', { email_address_visibility: 3 })),
    act: (t) => ok(t.as(t.fx.member).patch('/settings', { email: 'mark@elsewhere.test' })),
  });
});
