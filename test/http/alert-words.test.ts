// GET, POST and DELETE /users/me/alert_words: the list (trimmed, unique regardless of
// case, alphabetical), the alert_words event, the register section, and has_alert_word on
// messages sent after a word is added.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FLAG_BITS } from '../../src/lib/message-flags.ts';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { as, assertUnauthorized, EVERY_CALLER } from '../support/bots.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { drainEvents, registerQueue, withoutIds } from '../support/events.ts';
import { captureNotices, type NoticeLog } from '../support/notices.ts';
import { rowsOf, sendDirect, sendToChannel, useClock } from '../support/messages.ts';

let t: TestApp;
let log: NoticeLog;
beforeEach(async () => {
  t = await buildTestApp();
  useClock(t);
  log = captureNotices(t);
});
afterEach(async () => {
  await t.close();
});

const words = (list: string[]) => ({ result: 'success', msg: '', alert_words: list });
const add = (who: FixtureUser, list: unknown) =>
  t.as(who).post('/users/me/alert_words', { alert_words: list });
const remove = (who: FixtureUser, list: unknown) =>
  t.as(who).delete('/users/me/alert_words', { alert_words: list });
const event = (who: FixtureUser, list: string[]) => ({
  event: { type: 'alert_words', alert_words: list },
  users: [who.id],
});

describe('alert words', () => {
  test('add, list, remove: the whole list each time, and an event per change', async () => {
    assert.deepEqual((await t.as(t.fx.member).get('/users/me/alert_words')).body, words([]));
    assert.deepEqual(
      (await add(t.fx.member, ['pizza', 'Coffee Break'])).body,
      words(['Coffee Break', 'pizza']),
    );
    assert.deepEqual(await log.take(), [event(t.fx.member, ['Coffee Break', 'pizza'])]);
    assert.deepEqual(
      (await t.as(t.fx.member).get('/users/me/alert_words')).body,
      words(['Coffee Break', 'pizza']),
    );
    // Words already there in any case, repeats and blanks are ignored; words are trimmed.
    assert.deepEqual(
      (await add(t.fx.member, ['PIZZA', '  tea  ', 'Tea', '', '   '])).body,
      words(['Coffee Break', 'pizza', 'tea']),
    );
    assert.deepEqual(await log.take(), [event(t.fx.member, ['Coffee Break', 'pizza', 'tea'])]);
    assert.deepEqual(
      (await add(t.fx.member, ['Pizza'])).body,
      words(['Coffee Break', 'pizza', 'tea']),
    );
    assert.deepEqual(await log.take(), []);

    // Removal ignores case; words not in the list are ignored.
    assert.deepEqual(
      (await remove(t.fx.member, ['coffee break', 'nothing'])).body,
      words(['pizza', 'tea']),
    );
    assert.deepEqual(await log.take(), [event(t.fx.member, ['pizza', 'tea'])]);
    assert.deepEqual((await remove(t.fx.member, ['nothing'])).body, words(['pizza', 'tea']));
    assert.deepEqual(await log.take(), []);
    // Another user's list is their own.
    assert.deepEqual((await t.as(t.fx.member2).get('/users/me/alert_words')).body, words([]));
  });

  test('the register section, and events on a queue', async () => {
    await add(t.fx.member, ['pizza']);
    const client = t.as(t.fx.member);
    const q = await registerQueue(client, { fetch_event_types: ['alert_words'] });
    assert.deepEqual(q.alert_words, ['pizza']);
    assert.ok(!('user_topics' in q));
    await add(t.fx.member, ['tea']);
    await remove(t.fx.member, ['pizza']);
    assert.deepEqual(withoutIds(await drainEvents(t.ctx, client, q.queue_id, -1)), [
      { type: 'alert_words', alert_words: ['pizza', 'tea'] },
      { type: 'alert_words', alert_words: ['tea'] },
    ]);
  });

  test('a word sets has_alert_word on later messages to the user, outside code', async () => {
    await add(t.fx.moderator, ['Pizza time']);
    const before = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'pizza time');
    await add(t.fx.member2, ['pizza time']);
    const hit = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'PIZZA TIME!');
    const code = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', '`pizza time`');
    const dm = await sendDirect(t, t.fx.member, [t.fx.member2], 'is it pizza time?');
    assert.equal((await rowsOf(t, before))[t.fx.moderator.id], FLAG_BITS.has_alert_word);
    assert.equal((await rowsOf(t, before))[t.fx.member2.id], 0);
    assert.equal((await rowsOf(t, hit))[t.fx.member2.id], FLAG_BITS.has_alert_word);
    assert.equal((await rowsOf(t, hit))[t.fx.owner.id], 0);
    assert.equal((await rowsOf(t, code))[t.fx.member2.id], 0);
    assert.equal((await rowsOf(t, dm))[t.fx.member2.id], FLAG_BITS.has_alert_word);
    const res = await t.as(t.fx.member2).get(`/messages/${hit}`);
    assert.deepEqual((res.body.message as { flags: string[] }).flags, ['has_alert_word']);
    // Flags are decided at send time: removing the word leaves them.
    await remove(t.fx.member2, ['pizza time']);
    assert.equal((await rowsOf(t, hit))[t.fx.member2.id], FLAG_BITS.has_alert_word);
    const after = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'pizza time');
    assert.equal((await rowsOf(t, after))[t.fx.member2.id], 0);
  });

  test('errors', async () => {
    const cases: Array<[string, unknown, Record<string, unknown>]> = [
      [
        'post',
        undefined,
        {
          msg: "Missing 'alert_words' argument",
          code: 'REQUEST_VARIABLE_MISSING',
          var_name: 'alert_words',
        },
      ],
      [
        'delete',
        undefined,
        {
          msg: "Missing 'alert_words' argument",
          code: 'REQUEST_VARIABLE_MISSING',
          var_name: 'alert_words',
        },
      ],
      ['post', 'pizza', { msg: 'alert_words is not valid JSON', code: 'BAD_REQUEST' }],
      ['post', { a: 1 }, { msg: 'alert_words is not a list', code: 'BAD_REQUEST' }],
      ['post', [1], { msg: 'alert_words[0] is not a string', code: 'BAD_REQUEST' }],
      [
        'post',
        ['ok', 'x'.repeat(101)],
        { msg: 'alert_words[1] is too long (limit: 100 characters)', code: 'BAD_REQUEST' },
      ],
      ['delete', [null], { msg: 'alert_words[0] is not a string', code: 'BAD_REQUEST' }],
    ];
    for (const [method, value, error] of cases) {
      const params = value === undefined ? {} : { alert_words: value };
      const res =
        method === 'post'
          ? await t.as(t.fx.member).post('/users/me/alert_words', params)
          : await t.as(t.fx.member).delete('/users/me/alert_words', params);
      assert.deepEqual(
        { status: res.status, body: res.body },
        {
          status: 400,
          body: { result: 'error', ...error },
        },
      );
    }
    assert.deepEqual((await add(t.fx.member, ['x'.repeat(100)])).body, words(['x'.repeat(100)]));
  });

  for (const who of EVERY_CALLER) {
    test(`${who}: manages their own alert words`, async () => {
      const client = as(t, who);
      const got = await client.get('/users/me/alert_words');
      const added = await client.post('/users/me/alert_words', { alert_words: ['ping'] });
      const removed = await client.delete('/users/me/alert_words', { alert_words: ['ping'] });
      if (assertUnauthorized(who, got)) {
        assert.ok(assertUnauthorized(who, added));
        assert.ok(assertUnauthorized(who, removed));
        assert.deepEqual(await log.take(), []);
        return;
      }
      const user = t.fx[who as Exclude<typeof who, 'badKey' | 'noAuth'>];
      assert.deepEqual(got.body, words([]));
      assert.deepEqual(added.body, words(['ping']));
      assert.deepEqual(removed.body, words([]));
      assert.deepEqual(await log.take(), [event(user, ['ping']), event(user, [])]);
    });
  }

  test('unknown parameters are reported', async () => {
    assert.deepEqual((await t.as(t.fx.member).get('/users/me/alert_words', { x: 1 })).body, {
      ...words([]),
      ignored_parameters_unsupported: ['x'],
    });
  });
});
