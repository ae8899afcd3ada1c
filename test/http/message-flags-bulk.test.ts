// POST /messages/flags/narrow, /mark_all_as_read, /mark_stream_as_read and
// /mark_topic_as_read: the range of a narrow (the GET /messages machinery), bulk reads,
// their responses, errors and events.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FLAG_BITS } from '../../src/lib/message-flags.ts';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { as, assertUnauthorized, EVERY_CALLER } from '../support/bots.ts';
import { SUCCESS, type Credentials } from '../support/client.ts';
import { registerQueue } from '../support/events.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { flagBits, flagEvent } from '../support/flags.ts';
import { captureNotices, type NoticeLog } from '../support/notices.ts';
import { assertError, sendDirect, sendToChannel, useClock } from '../support/messages.ts';

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

const READ = FLAG_BITS.read;
const HISTORICAL = FLAG_BITS.historical;

const setFlags = (who: Credentials | null, messages: number[], op: string, flag: string) =>
  t.as(who).post('/messages/flags', { messages, op, flag });
const bitsOf = (who: FixtureUser, id: number) => flagBits(t, who, id);

const narrowFlags = (who: Credentials, params: Record<string, unknown>) =>
  t.as(who).post('/messages/flags/narrow', { op: 'add', flag: 'read', ...params });

describe('POST /messages/flags/narrow', () => {
  test('marks a range of a narrow; counts, ends and found flags', async () => {
    const ids: number[] = [];
    for (const c of ['a', 'b', 'c']) {
      ids.push(await sendToChannel(t, t.fx.member2, t.fx.channels.general, 'topic', c));
    }
    await sendToChannel(t, t.fx.member2, t.fx.channels.general, 'elsewhere', 'x');
    await setFlags(t.fx.member, [ids[1]], 'add', 'read');
    await log.take();
    const narrow = [
      { operator: 'channel', operand: t.fx.channels.general.id },
      { operator: 'topic', operand: 'topic' },
    ];
    const res = await narrowFlags(t.fx.member, {
      anchor: 'oldest',
      num_before: 0,
      num_after: 2,
      narrow,
    });
    assert.deepEqual(res.body, {
      ...SUCCESS,
      processed_count: 2,
      updated_count: 1,
      first_processed_id: ids[0],
      last_processed_id: ids[1],
      found_oldest: true,
      found_newest: false,
    });
    assert.deepEqual(await log.take(), [
      { event: flagEvent('add', 'read', [ids[0]]), users: [t.fx.member.id] },
    ]);
    const rest = await narrowFlags(t.fx.member, {
      anchor: ids[1],
      include_anchor: false,
      num_before: 0,
      num_after: 100,
      narrow,
    });
    assert.deepEqual(rest.body, {
      ...SUCCESS,
      processed_count: 1,
      updated_count: 1,
      first_processed_id: ids[2],
      last_processed_id: ids[2],
      found_oldest: false,
      found_newest: true,
    });
    const none = await narrowFlags(t.fx.member, {
      anchor: 'newest',
      num_before: 5,
      num_after: 0,
      narrow: [{ operator: 'is', operand: 'starred' }],
    });
    assert.deepEqual(none.body, {
      ...SUCCESS,
      processed_count: 0,
      updated_count: 0,
      first_processed_id: null,
      last_processed_id: null,
      found_oldest: true,
      found_newest: true,
    });
  });

  test('mark unread over a narrow into an unsubscribed channel: skipped and named', async () => {
    const d = await sendToChannel(t, t.fx.admin, t.fx.channels.design, 't', 'd');
    await log.take();
    const res = await narrowFlags(t.fx.member2, {
      op: 'remove',
      anchor: 'newest',
      num_before: 10,
      num_after: 0,
      narrow: [{ operator: 'channel', operand: t.fx.channels.design.id }],
    });
    assert.deepEqual(res.body, {
      ...SUCCESS,
      processed_count: 1,
      updated_count: 0,
      first_processed_id: d,
      last_processed_id: d,
      found_oldest: true,
      found_newest: true,
      ignored_because_not_subscribed_channels: [t.fx.channels.design.id],
    });
    // Starring through shared history creates the historical row.
    const star = await narrowFlags(t.fx.member2, {
      flag: 'starred',
      anchor: d,
      num_before: 0,
      num_after: 0,
      narrow: [{ operator: 'channel', operand: t.fx.channels.design.id }],
    });
    assert.equal(star.body.updated_count, 1);
    assert.equal(await bitsOf(t.fx.member2, d), READ | HISTORICAL | FLAG_BITS.starred);
    assert.deepEqual(await log.take(), [
      { event: flagEvent('add', 'starred', [d]), users: [t.fx.member2.id] },
    ]);
  });

  test('errors', async () => {
    const base = { anchor: 'newest', num_before: 1, num_after: 0, narrow: [] };
    assertError(
      await narrowFlags(t.fx.member, { ...base, num_after: 1, anchor: 5, include_anchor: false }),
      400,
      'BAD_REQUEST',
      'The anchor can only be excluded at an end of the range',
    );
    assertError(
      await narrowFlags(t.fx.member, { ...base, flag: 'mentioned' }),
      400,
      'BAD_REQUEST',
      "Flag not editable: 'mentioned'",
    );
    assertError(
      await narrowFlags(t.fx.member, { ...base, anchor: 'sideways' }),
      400,
      'BAD_REQUEST',
      'Invalid anchor',
    );
    const bad = await narrowFlags(t.fx.member, {
      ...base,
      narrow: [{ operator: 'channel', operand: 'no such channel' }],
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'BAD_NARROW');
    for (const who of EVERY_CALLER) {
      const res = await as(t, who).post('/messages/flags/narrow', {
        ...base,
        op: 'add',
        flag: 'read',
      });
      if (assertUnauthorized(who, res)) continue;
      assert.equal(res.status, 200, who);
    }
  });
});

describe('bulk mark as read', () => {
  test('POST /mark_all_as_read: every unread message, one all:true event', async () => {
    const a = await sendToChannel(t, t.fx.member2, t.fx.channels.general, 't', 'a');
    const dm = await sendDirect(t, t.fx.member2, [t.fx.member], 'b');
    await log.take();
    assert.deepEqual((await t.as(t.fx.member).post('/mark_all_as_read')).body, {
      ...SUCCESS,
      complete: true,
    });
    assert.deepEqual(await log.take(), [
      {
        event: { ...flagEvent('add', 'read', []), all: true },
        users: [t.fx.member.id],
      },
    ]);
    assert.equal(await bitsOf(t.fx.member, a), READ);
    assert.equal(await bitsOf(t.fx.member, dm), READ);
    // Nothing left to mark: no event.
    assert.deepEqual((await t.as(t.fx.member).post('/mark_all_as_read')).body, {
      ...SUCCESS,
      complete: true,
    });
    assert.deepEqual(await log.take(), []);
    for (const who of EVERY_CALLER) {
      const res = await as(t, who).post('/mark_all_as_read');
      if (assertUnauthorized(who, res)) continue;
      assert.deepEqual(res.body, { ...SUCCESS, complete: true }, who);
    }
  });

  test('POST /mark_stream_as_read: that channel only', async () => {
    const a = await sendToChannel(t, t.fx.member2, t.fx.channels.general, 't1', 'a');
    const b = await sendToChannel(t, t.fx.member2, t.fx.channels.general, 't2', 'b');
    const other = await sendToChannel(t, t.fx.admin, t.fx.channels.design, 't', 'c');
    await log.take();
    const res = await t
      .as(t.fx.member)
      .post('/mark_stream_as_read', { stream_id: t.fx.channels.general.id });
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(await log.take(), [
      { event: flagEvent('add', 'read', [a, b]), users: [t.fx.member.id] },
    ]);
    assert.equal(await bitsOf(t.fx.member, other), 0);
    assertError(
      await t.as(t.fx.guest).post('/mark_stream_as_read', { stream_id: t.fx.channels.design.id }),
      400,
      'BAD_REQUEST',
      'Invalid channel ID',
    );
    assertError(
      await t.as(t.fx.member).post('/mark_stream_as_read', { stream_id: 99999 }),
      400,
      'BAD_REQUEST',
      'Invalid channel ID',
    );
    for (const who of EVERY_CALLER) {
      const r = await as(t, who).post('/mark_stream_as_read', {
        stream_id: t.fx.channels.general.id,
      });
      if (assertUnauthorized(who, r)) continue;
      assert.deepEqual(r.body, SUCCESS, who);
    }
  });

  test('POST /mark_topic_as_read: that topic only (case-insensitively)', async () => {
    const a = await sendToChannel(t, t.fx.member2, t.fx.channels.general, 'Lunch', 'a');
    const b = await sendToChannel(t, t.fx.member2, t.fx.channels.general, 'other', 'b');
    const empty = await sendToChannel(t, t.fx.member2, t.fx.channels.general, '', 'e');
    await log.take();
    const res = await t.as(t.fx.member).post('/mark_topic_as_read', {
      stream_id: t.fx.channels.general.id,
      topic_name: 'lunch',
    });
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(await log.take(), [
      { event: flagEvent('add', 'read', [a]), users: [t.fx.member.id] },
    ]);
    assert.equal(await bitsOf(t.fx.member, b), 0);
    // The empty topic's display name names the empty topic.
    const reg = await registerQueue(t.as(t.fx.member), {});
    await t.as(t.fx.member).post('/mark_topic_as_read', {
      stream_id: t.fx.channels.general.id,
      topic_name: reg.realm_empty_topic_display_name,
    });
    assert.equal(await bitsOf(t.fx.member, empty), READ);
    assertError(
      await t.as(t.fx.member).post('/mark_topic_as_read', {
        stream_id: t.fx.channels.general.id,
        topic_name: 'nothing here',
      }),
      400,
      'BAD_REQUEST',
      "No such topic 'nothing here'",
    );
    assertError(
      await t.as(t.fx.member).post('/mark_topic_as_read', { stream_id: 99999, topic_name: 'x' }),
      400,
      'BAD_REQUEST',
      'Invalid channel ID',
    );
    for (const who of EVERY_CALLER) {
      const r = await as(t, who).post('/mark_topic_as_read', {
        stream_id: t.fx.channels.general.id,
        topic_name: 'Lunch',
      });
      if (assertUnauthorized(who, r)) continue;
      assert.deepEqual(r.body, SUCCESS, who);
    }
  });
});
