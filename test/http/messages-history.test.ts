// GET /messages/{id}/history, and edit_history in message objects, per the organization's
// message_edit_history_visibility_policy.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { SUCCESS } from '../support/client.ts';
import {
  assertError,
  sendDirect,
  sendToChannel,
  setRealmSetting,
  T0,
  useClock,
} from '../support/messages.ts';

let t: TestApp;
let setNow: (s: number) => void;
beforeEach(async () => {
  t = await buildTestApp();
  setNow = useClock(t);
});
afterEach(async () => {
  await t.close();
});

async function seen(who: typeof t.fx.member, id: number): Promise<Record<string, unknown>> {
  const res = await t.as(who).get(`/messages/${id}`);
  assert.equal(res.status, 200, res.text);
  return res.body.message as Record<string, unknown>;
}

describe('GET /messages/{id}/history', () => {
  test('snapshots oldest first, with the empty topic named', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, '', 'one');
    setNow(T0 + 10);
    await t.as(t.fx.member).patch(`/messages/${id}`, { content: 'two' });
    setNow(T0 + 20);
    await t.as(t.fx.admin).patch(`/messages/${id}`, { topic: 'named' });
    const res = await t.as(t.fx.member2).get(`/messages/${id}/history`);
    assert.deepEqual(res.body, {
      ...SUCCESS,
      message_history: [
        {
          user_id: t.fx.member.id,
          timestamp: T0,
          topic: 'general chat',
          content: 'one',
          rendered_content: '<p>one</p>',
        },
        {
          user_id: t.fx.member.id,
          timestamp: T0 + 10,
          topic: 'general chat',
          content: 'two',
          rendered_content: '<p>two</p>',
          prev_content: 'one',
          prev_rendered_content: '<p>one</p>',
          content_html_diff:
            '<div><p><span class="highlight_text_inserted">two</span><span class="highlight_text_deleted">one</span></p></div>',
        },
        {
          user_id: t.fx.admin.id,
          timestamp: T0 + 20,
          topic: 'named',
          content: 'two',
          rendered_content: '<p>two</p>',
          prev_topic: 'general chat',
        },
      ],
    });
    const raw = await t
      .as(t.fx.member2)
      .get(`/messages/${id}/history`, { allow_empty_topic_name: true });
    assert.equal((raw.body.message_history as Array<{ topic: string }>)[0].topic, '');
  });

  test('the visibility policy: moves only, or none', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 'a', 'one');
    await t.as(t.fx.member).patch(`/messages/${id}`, { content: 'two' });
    await t.as(t.fx.member).patch(`/messages/${id}`, { topic: 'b' });
    await setRealmSetting(t, 'message_edit_history_visibility_policy', 'moves');
    const res = await t.as(t.fx.member).get(`/messages/${id}/history`);
    assert.deepEqual(
      (res.body.message_history as Array<Record<string, unknown>>).map((s) => [
        s.topic,
        s.prev_topic,
        s.content,
      ]),
      [
        ['a', undefined, 'two'],
        ['b', 'a', 'two'],
      ],
    );
    assert.deepEqual((await seen(t.fx.member, id)).edit_history, [
      { user_id: t.fx.member.id, timestamp: T0, prev_topic: 'a', topic: 'b' },
    ]);
    await setRealmSetting(t, 'message_edit_history_visibility_policy', 'none');
    assertError(
      await t.as(t.fx.member).get(`/messages/${id}/history`),
      400,
      'BAD_REQUEST',
      'Message edit history is disabled in this organization',
    );
    assert.equal('edit_history' in (await seen(t.fx.member, id)), false);
  });

  test('only for readers of the message', async () => {
    const id = await sendDirect(t, t.fx.member, [t.fx.member2], 'x');
    assertError(
      await t.as(t.fx.admin).get(`/messages/${id}/history`),
      400,
      'BAD_REQUEST',
      'Invalid message(s)',
    );
  });
});
