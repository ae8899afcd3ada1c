// POST /users/me/onboarding_steps: marking a one-time notice seen, the onboarding_steps
// event with the notices left, and the register section.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { as, assertUnauthorized, error, EVERY_CALLER } from '../support/bots.ts';
import { drainEvents, registerQueue, withoutIds } from '../support/events.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { captureNotices, type NoticeLog } from '../support/notices.ts';

let t: TestApp;
let log: NoticeLog;
beforeEach(async () => {
  t = await buildTestApp();
  log = captureNotices(t);
});
afterEach(async () => {
  await t.close();
});

const ok = { result: 'success', msg: '' };
const NOTICES = [
  'visibility_policy_banner',
  'intro_inbox_view_modal',
  'intro_recent_view_modal',
  'first_stream_created_banner',
  'jump_to_conversation_banner',
  'non_interleaved_view_messages_fading',
  'interleaved_view_messages_fading',
];
const steps = (names: string[]) => names.map((name) => ({ type: 'one_time_notice', name }));
const mark = (who: FixtureUser, name: string) =>
  t.as(who).post('/users/me/onboarding_steps', { onboarding_step: name });
const event = (who: FixtureUser, names: string[]) => ({
  event: { type: 'onboarding_steps', onboarding_steps: steps(names) },
  users: [who.id],
});

describe('onboarding steps', () => {
  test('register lists unseen notices; marking one seen sends the rest', async () => {
    const client = t.as(t.fx.member);
    const q = await registerQueue(client, { fetch_event_types: ['onboarding_steps'] });
    assert.deepEqual(q.onboarding_steps, steps(NOTICES));
    assert.equal(q.navigation_tour_video_url, null);
    assert.deepEqual((await mark(t.fx.member, 'intro_inbox_view_modal')).body, ok);
    const rest = NOTICES.filter((n) => n !== 'intro_inbox_view_modal');
    assert.deepEqual(await log.take(), [event(t.fx.member, rest)]);
    // Marking it again changes nothing but still tells the clients, as the reference does.
    assert.deepEqual((await mark(t.fx.member, 'intro_inbox_view_modal')).body, ok);
    assert.deepEqual(await log.take(), [event(t.fx.member, rest)]);
    assert.deepEqual(withoutIds(await drainEvents(t.ctx, client, q.queue_id, -1)), [
      { type: 'onboarding_steps', onboarding_steps: steps(rest) },
      { type: 'onboarding_steps', onboarding_steps: steps(rest) },
    ]);
    const again = await registerQueue(client, { fetch_event_types: ['onboarding_steps'] });
    assert.deepEqual(again.onboarding_steps, steps(rest));
    const other = await registerQueue(t.as(t.fx.member2), {});
    assert.deepEqual(other.onboarding_steps, steps(NOTICES));
  });

  test('errors', async () => {
    const res = await mark(t.fx.member, 'nonsense');
    assert.deepEqual(
      { status: res.status, body: res.body },
      { status: 400, body: error('Unknown onboarding_step: nonsense') },
    );
    const missing = await t.as(t.fx.member).post('/users/me/onboarding_steps', {});
    assert.deepEqual(missing.body, {
      ...error("Missing 'onboarding_step' argument", 'REQUEST_VARIABLE_MISSING'),
      var_name: 'onboarding_step',
    });
    assert.deepEqual(await log.take(), []);
  });

  for (const who of EVERY_CALLER) {
    test(`${who}: human users mark notices seen`, async () => {
      const res = await as(t, who).post('/users/me/onboarding_steps', {
        onboarding_step: 'visibility_policy_banner',
      });
      if (assertUnauthorized(who, res)) return;
      if (who === 'bot') {
        assert.deepEqual(res.body, error('This endpoint does not accept bot requests.'));
        assert.deepEqual(await log.take(), []);
        return;
      }
      const user = t.fx[who as Exclude<typeof who, 'badKey' | 'noAuth'>];
      assert.deepEqual(res.body, ok);
      assert.deepEqual(await log.take(), [event(user, NOTICES.slice(1))]);
    });
  }
});
