// Event contract of presence and typing: coming online reaches everyone's presence data
// in their client's form; typing and users who do not share presence change nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withoutIds } from '../support/events.ts';
import { ALL_VIEWERS, ok, runContract } from './harness.ts';

test('POST /users/me/presence: a user coming online reaches everyone', async () => {
  const seen = await runContract({
    changes: ALL_VIEWERS,
    act: (t) => ok(t.as(t.fx.member).post('/users/me/presence', { status: 'active' })),
  });
  const [event] = withoutIds(seen.get('owner')!);
  assert.deepEqual(Object.keys(event), ['type', 'presences']);
});

test('POST /users/me/presence: a first idle report still announces the user', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    act: (t) => ok(t.as(t.fx.member2).post('/users/me/presence', { status: 'idle' })),
  });
});

test('POST /users/me/presence: a user who does not share presence changes nothing', async () => {
  await runContract({
    changes: [],
    setup: (t) => ok(t.as(t.fx.member).patch('/settings', { presence_enabled: false })),
    act: (t) => ok(t.as(t.fx.member).post('/users/me/presence', { status: 'active' })),
  });
});

test('POST /typing and POST /messages/{id}/typing change no state', async () => {
  let messageId = 0;
  const seen = await runContract({
    changes: [],
    setup: async (t) => {
      const res = await t.as(t.fx.member).post('/messages', {
        type: 'stream',
        to: 'general',
        topic: 'plans',
        content: 'hi',
      });
      assert.equal(res.status, 200, res.text);
      messageId = res.body.id as number;
    },
    act: async (t) => {
      await ok(t.as(t.fx.member).post('/typing', { op: 'start', to: [t.fx.member2.id] }));
      await ok(
        t.as(t.fx.member).post('/typing', {
          type: 'channel',
          op: 'start',
          stream_id: t.fx.channels.general.id,
          topic: 'plans',
        }),
      );
      await ok(t.as(t.fx.member).post(`/messages/${messageId}/typing`, { op: 'stop' }));
    },
  });
  assert.deepEqual(
    withoutIds(seen.get('member2')!).map((e) => e.type),
    ['typing', 'typing', 'typing_edit_message'],
  );
  assert.deepEqual(
    withoutIds(seen.get('owner')!).map((e) => e.type),
    ['typing', 'typing_edit_message'],
  );
});
