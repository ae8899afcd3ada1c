// Event contract of custom emoji (realm_emoji in every snapshot) and invitations
// (invites_changed, which changes no snapshot key).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestApp } from '../support/app.ts';
import type { Event } from '../support/events.ts';
import { animated, COLORS, solidPng } from '../support/images.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { ALL_VIEWERS, ok, runContract, type ViewerKey } from './harness.ts';

function told(seen: Map<ViewerKey, Event[]>, type: string): ViewerKey[] {
  return [...seen].filter(([, events]) => events.some((e) => e.type === type)).map(([v]) => v);
}

async function uploadEmoji(t: TestApp, who: FixtureUser, name: string, data: Buffer) {
  await ok(
    t
      .as(who)
      .multipart('POST', `/realm/emoji/${name}`, {}, [
        { field: 'file', filename: 'e.png', contentType: 'image/png', data },
      ]),
  );
}

test('POST /realm/emoji/{name}: every snapshot gains the emoji', async () => {
  const seen = await runContract({
    changes: ALL_VIEWERS,
    act: async (t) => uploadEmoji(t, t.fx.member, 'partyparrot7', await solidPng(8, 8)),
  });
  assert.deepEqual(told(seen, 'realm_emoji'), ALL_VIEWERS);
});

test('POST /realm/emoji/{name} with an animated GIF: the still URL too', async () => {
  const seen = await runContract({
    changes: ALL_VIEWERS,
    setup: async (t) => uploadEmoji(t, t.fx.admin, 'first', await solidPng(8, 8)),
    act: async (t) =>
      uploadEmoji(t, t.fx.admin, 'spin', await animated(16, 16, [COLORS.RED, COLORS.BLUE])),
  });
  assert.deepEqual(told(seen, 'realm_emoji'), ALL_VIEWERS);
});

test('DELETE /realm/emoji/{name}: every snapshot shows it deactivated', async () => {
  const seen = await runContract({
    changes: ALL_VIEWERS,
    setup: async (t) => uploadEmoji(t, t.fx.member, 'partyparrot7', await solidPng(8, 8)),
    act: (t) => ok(t.as(t.fx.admin).delete('/realm/emoji/partyparrot7')),
  });
  assert.deepEqual(told(seen, 'realm_emoji'), ALL_VIEWERS);
});

test('POST /invites: administrators and the inviter are told; no snapshot changes', async () => {
  const seen = await runContract({
    changes: [],
    act: (t) =>
      ok(t.as(t.fx.member).post('/invites', { invitee_emails: 'new@example.com', stream_ids: [] })),
  });
  assert.deepEqual(told(seen, 'invites_changed'), ['owner', 'admin', 'member']);
});

test('DELETE /invites/multiuse/{id}: administrators are told', async () => {
  const seen = await runContract({
    changes: [],
    setup: async (t) => ok(t.as(t.fx.admin).post('/invites/multiuse', { stream_ids: [] })),
    act: (t) => ok(t.as(t.fx.owner).delete('/invites/multiuse/1')),
  });
  assert.deepEqual(told(seen, 'invites_changed'), ['owner', 'admin']);
});

test('POST /invites/accept: everyone sees the new user; the referrer gets a direct message', async () => {
  let link = '';
  const seen = await runContract({
    changes: ALL_VIEWERS,
    setup: async (t) => {
      const res = await t.as(t.fx.admin).post('/invites/multiuse', {
        stream_ids: [t.fx.channels.general.id],
      });
      link = res.body.invite_link as string;
    },
    act: (t) =>
      ok(
        t.as(null).post('/invites/accept', {
          key: /\/join\/([A-Za-z0-9]+)\/$/.exec(link)![1],
          email: 'joiner@example.com',
          full_name: 'Joiner',
          password: 'a strong enough password',
        }),
      ),
  });
  assert.deepEqual(told(seen, 'realm_user'), ALL_VIEWERS);
  assert.deepEqual(told(seen, 'message'), ['admin']);
  assert.deepEqual(told(seen, 'invites_changed'), ['owner', 'admin']);
});
