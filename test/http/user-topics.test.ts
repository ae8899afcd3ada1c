// POST /user_topics and the legacy PATCH /users/me/subscriptions/muted_topics: visibility
// policies per topic (case-insensitive), who may set them where, the user_topic and legacy
// muted_topics events and which queues get which, and the register sections.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { as, assertUnauthorized, EVERY_CALLER } from '../support/bots.ts';
import { SUCCESS } from '../support/client.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { drainEvents, registerQueue, withoutIds } from '../support/events.ts';
import { captureNotices, type NoticeLog } from '../support/notices.ts';
import { assertError, setChannel, T0, useClock } from '../support/messages.ts';

let t: TestApp;
let log: NoticeLog;
let setNow: (s: number) => void;
beforeEach(async () => {
  t = await buildTestApp();
  setNow = useClock(t);
  log = captureNotices(t);
});
afterEach(async () => {
  await t.close();
});

const setPolicy = (who: FixtureUser, streamId: number, topic: string, policy: unknown) =>
  t.as(who).post('/user_topics', { stream_id: streamId, topic, visibility_policy: policy });
const legacy = (who: FixtureUser, params: Record<string, unknown>) =>
  t.as(who).patch('/users/me/subscriptions/muted_topics', params);

const userTopic = (streamId: number, topic: string, policy: number, at = T0) => ({
  type: 'user_topic',
  stream_id: streamId,
  topic_name: topic,
  last_updated: at,
  visibility_policy: policy,
});

/** The two events of one change: the legacy full muted list, then user_topic. */
function changeEvents(
  who: FixtureUser,
  muted: Array<[string, string, number]>,
  event: Record<string, unknown>,
): Array<{ event: Record<string, unknown>; users: number[] }> {
  return [
    { event: { type: 'muted_topics', muted_topics: muted }, users: [who.id] },
    { event, users: [who.id] },
  ];
}

/** The caller's preferences as the register snapshot has them (both forms). */
async function preferences(who: FixtureUser): Promise<Record<string, unknown>> {
  const r = await registerQueue(t.as(who), {
    fetch_event_types: ['user_topic'],
    client_capabilities: { notification_settings_null: true, empty_topic_name: true },
  });
  const legacyForm = await registerQueue(t.as(who), { fetch_event_types: ['muted_topics'] });
  return { user_topics: r.user_topics, muted_topics: legacyForm.muted_topics };
}

describe('POST /user_topics', () => {
  test('mute, follow, clear: the row, both events, the register sections', async () => {
    const general = t.fx.channels.general.id;
    const res = await setPolicy(t.fx.member, general, 'Lunch', 1);
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(
      await log.take(),
      changeEvents(t.fx.member, [['general', 'Lunch', T0]], userTopic(general, 'Lunch', 1)),
    );
    assert.deepEqual(await preferences(t.fx.member), {
      user_topics: [
        { stream_id: general, topic_name: 'Lunch', last_updated: T0, visibility_policy: 1 },
      ],
      muted_topics: [['general', 'Lunch', T0]],
    });

    // The same topic in any case is the same preference; it takes the latest spelling.
    setNow(T0 + 60);
    assert.deepEqual((await setPolicy(t.fx.member, general, 'LUNCH', 3)).body, SUCCESS);
    assert.deepEqual(
      await log.take(),
      changeEvents(t.fx.member, [], userTopic(general, 'LUNCH', 3, T0 + 60)),
    );
    assert.deepEqual(await preferences(t.fx.member), {
      user_topics: [
        { stream_id: general, topic_name: 'LUNCH', last_updated: T0 + 60, visibility_policy: 3 },
      ],
      muted_topics: [],
    });

    // Setting what is already set changes nothing and tells nobody.
    assert.deepEqual((await setPolicy(t.fx.member, general, 'lunch', 3)).body, SUCCESS);
    assert.deepEqual(await log.take(), []);

    setNow(T0 + 120);
    assert.deepEqual((await setPolicy(t.fx.member, general, 'lunch', 0)).body, SUCCESS);
    assert.deepEqual(
      await log.take(),
      changeEvents(t.fx.member, [], userTopic(general, 'lunch', 0, T0 + 120)),
    );
    assert.deepEqual(await preferences(t.fx.member), { user_topics: [], muted_topics: [] });
    assert.deepEqual((await setPolicy(t.fx.member, general, 'lunch', 0)).body, SUCCESS);
    assert.deepEqual(await log.take(), []);
  });

  test("unmuted and followed are not muted; each user's preferences are their own", async () => {
    const { general, design } = t.fx.channels;
    await setPolicy(t.fx.member, design.id, 'b', 1);
    await setPolicy(t.fx.member, general.id, 'z', 1);
    await setPolicy(t.fx.member, general.id, 'a', 2);
    await setPolicy(t.fx.member2, general.id, 'a', 1);
    assert.deepEqual(await preferences(t.fx.member), {
      user_topics: [
        { stream_id: general.id, topic_name: 'a', last_updated: T0, visibility_policy: 2 },
        { stream_id: general.id, topic_name: 'z', last_updated: T0, visibility_policy: 1 },
        { stream_id: design.id, topic_name: 'b', last_updated: T0, visibility_policy: 1 },
      ],
      muted_topics: [
        ['general', 'z', T0],
        ['design', 'b', T0],
      ],
    });
    assert.deepEqual(await preferences(t.fx.member2), {
      user_topics: [
        { stream_id: general.id, topic_name: 'a', last_updated: T0, visibility_policy: 1 },
      ],
      muted_topics: [['general', 'a', T0]],
    });
  });

  test('topics are trimmed; the empty topic and its display names', async () => {
    const general = t.fx.channels.general.id;
    await setPolicy(t.fx.member, general, '  padded  ', 1);
    assert.deepEqual((await log.take())[1].event, userTopic(general, 'padded', 1));
    for (const name of ['general chat', '(no topic)', '']) {
      await setPolicy(t.fx.member, general, name, 3);
    }
    const taken = await log.take();
    assert.deepEqual(
      taken.map((s) => s.event),
      [
        { type: 'muted_topics', muted_topics: [['general', 'padded', T0]] },
        userTopic(general, '', 3),
      ],
    );
    // Clients without empty_topic_name see the display name, in events and the snapshot.
    const old = await registerQueue(t.as(t.fx.member), { fetch_event_types: ['user_topic'] });
    assert.deepEqual(old.user_topics, [
      { stream_id: general, topic_name: 'general chat', last_updated: T0, visibility_policy: 3 },
      { stream_id: general, topic_name: 'padded', last_updated: T0, visibility_policy: 1 },
    ]);
    await setPolicy(t.fx.member, general, '', 2);
    const events = await drainEvents(t.ctx, t.as(t.fx.member), old.queue_id, -1);
    assert.deepEqual(withoutIds(events), [
      { type: 'muted_topics', muted_topics: [['general', 'padded', T0]] },
      userTopic(general, 'general chat', 2),
    ]);
  });

  test('errors: parameters', async () => {
    const general = t.fx.channels.general.id;
    const cases: Array<[Record<string, unknown>, Record<string, unknown>]> = [
      [
        { topic: 't', visibility_policy: 1 },
        {
          msg: "Missing 'stream_id' argument",
          code: 'REQUEST_VARIABLE_MISSING',
          var_name: 'stream_id',
        },
      ],
      [
        { stream_id: general, visibility_policy: 1 },
        { msg: "Missing 'topic' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'topic' },
      ],
      [
        { stream_id: general, topic: 't' },
        {
          msg: "Missing 'visibility_policy' argument",
          code: 'REQUEST_VARIABLE_MISSING',
          var_name: 'visibility_policy',
        },
      ],
      [
        { stream_id: general, topic: 't', visibility_policy: 4 },
        { msg: 'Invalid visibility_policy', code: 'BAD_REQUEST' },
      ],
      [
        { stream_id: general, topic: 't', visibility_policy: 'muted' },
        { msg: 'visibility_policy is not valid JSON', code: 'BAD_REQUEST' },
      ],
      [
        { stream_id: 'general', topic: 't', visibility_policy: 1 },
        { msg: 'stream_id is not an integer', code: 'BAD_REQUEST' },
      ],
      [
        { stream_id: general, topic: 'x'.repeat(61), visibility_policy: 1 },
        { msg: 'topic is too long (limit: 60 characters)', code: 'BAD_REQUEST' },
      ],
    ];
    for (const [params, error] of cases) {
      const res = await t.as(t.fx.member).post('/user_topics', params);
      assert.deepEqual(
        { status: res.status, body: res.body },
        {
          status: 400,
          body: { result: 'error', ...error },
        },
      );
    }
    assert.deepEqual((await setPolicy(t.fx.member, general, 'x'.repeat(60), 1)).body, SUCCESS);
  });

  test('errors: channels the caller may not read', async () => {
    const { private: priv, design, general } = t.fx.channels;
    const refused: Array<[FixtureUser, number]> = [
      [t.fx.member, 999999],
      [t.fx.member2, priv.id],
      // Administrators see a private channel exist, not its messages.
      [t.fx.admin, priv.id],
      [t.fx.guest, design.id],
    ];
    for (const [who, id] of refused) {
      for (const policy of [1, 2, 3]) {
        assertError(
          await setPolicy(who, id, 't', policy),
          400,
          'BAD_REQUEST',
          'Invalid channel ID',
        );
      }
    }
    assertError(
      await setPolicy(t.fx.member, 999999, 't', 0),
      400,
      'BAD_REQUEST',
      'Invalid channel ID',
    );
    // Clearing needs only that the channel exists: a user who lost access can clean up.
    await setPolicy(t.fx.member, general.id, 't', 1);
    await setChannel(t, general.id, { is_archived: 1 });
    await log.take();
    assertError(
      await setPolicy(t.fx.member, general.id, 'u', 1),
      400,
      'BAD_REQUEST',
      'Invalid channel ID',
    );
    assert.deepEqual((await setPolicy(t.fx.member, general.id, 't', 0)).body, SUCCESS);
    assert.deepEqual(
      await log.take(),
      changeEvents(t.fx.member, [], userTopic(general.id, 't', 0)),
    );
    assert.deepEqual((await setPolicy(t.fx.member2, priv.id, 't', 0)).body, SUCCESS);
    assert.deepEqual(await log.take(), []);
  });

  for (const who of EVERY_CALLER) {
    test(`${who}: may set preferences in a channel they read`, async () => {
      const general = t.fx.channels.general.id;
      const res = await as(t, who).post('/user_topics', {
        stream_id: general,
        topic: 't',
        visibility_policy: 3,
      });
      if (assertUnauthorized(who, res)) {
        assert.deepEqual(await log.take(), []);
        return;
      }
      assert.deepEqual(res.body, SUCCESS);
      const user = t.fx[who as Exclude<typeof who, 'badKey' | 'noAuth'>];
      assert.deepEqual(await log.take(), changeEvents(user, [], userTopic(general, 't', 3)));
    });
  }
});

describe('PATCH /users/me/subscriptions/muted_topics (legacy)', () => {
  test('mute and unmute by channel id or name', async () => {
    const general = t.fx.channels.general.id;
    const res = await legacy(t.fx.member, { stream_id: general, topic: 'Lunch', op: 'add' });
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(
      await log.take(),
      changeEvents(t.fx.member, [['general', 'Lunch', T0]], userTopic(general, 'Lunch', 1)),
    );
    const design = t.fx.channels.design.id;
    assert.deepEqual(
      (await legacy(t.fx.member, { stream: 'Design', topic: 'x', op: 'add' })).body,
      SUCCESS,
    );
    assert.deepEqual(
      await log.take(),
      changeEvents(
        t.fx.member,
        [
          ['general', 'Lunch', T0],
          ['design', 'x', T0],
        ],
        userTopic(design, 'x', 1),
      ),
    );
    assert.deepEqual(
      (await legacy(t.fx.member, { stream: 'general', topic: 'lunch', op: 'remove' })).body,
      SUCCESS,
    );
    assert.deepEqual(
      await log.take(),
      changeEvents(t.fx.member, [['design', 'x', T0]], userTopic(general, 'lunch', 0)),
    );
    // Unmuting what is not muted is no error (since feature level 170), and tells nobody.
    assert.deepEqual(
      (await legacy(t.fx.member, { stream_id: general, topic: 'lunch', op: 'remove' })).body,
      SUCCESS,
    );
    // Muting a followed topic makes it muted.
    await setPolicy(t.fx.member, general, 'f', 3);
    await log.take();
    await legacy(t.fx.member, { stream_id: general, topic: 'f', op: 'add' });
    assert.deepEqual((await log.take())[1].event, userTopic(general, 'f', 1));
  });

  test('errors', async () => {
    const { general, private: priv } = t.fx.channels;
    const cases: Array<[Record<string, unknown>, Record<string, unknown>]> = [
      [{ topic: 't', op: 'add' }, { msg: "Missing 'stream_id' argument" }],
      [
        { stream_id: general.id, stream: 'general', topic: 't', op: 'add' },
        {
          msg: 'Unsupported parameter combination: stream_id, stream',
          parameters: 'stream_id, stream',
        },
      ],
      [{ stream_id: general.id, topic: 't', op: 'mute' }, { msg: 'Invalid op' }],
      [
        { stream_id: general.id, op: 'add' },
        { msg: "Missing 'topic' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'topic' },
      ],
      [
        { stream_id: general.id, topic: 'x'.repeat(61), op: 'add' },
        { msg: 'topic is too long (limit: 60 characters)' },
      ],
      [{ stream: 'nope', topic: 't', op: 'add' }, { msg: "Invalid channel name 'nope'" }],
      [{ stream: 'private', topic: 't', op: 'add' }, { msg: "Invalid channel name 'private'" }],
      [{ stream_id: priv.id, topic: 't', op: 'add' }, { msg: 'Invalid channel ID' }],
      [{ stream: 'nope', topic: 't', op: 'remove' }, { msg: 'Topic is not muted' }],
      [{ stream_id: 999999, topic: 't', op: 'remove' }, { msg: 'Topic is not muted' }],
    ];
    for (const [params, error] of cases) {
      const res = await legacy(t.fx.member2, params);
      assert.deepEqual(
        { status: res.status, body: res.body },
        {
          status: 400,
          body: { result: 'error', code: 'BAD_REQUEST', ...error },
        },
      );
    }
    assert.deepEqual(await log.take(), []);
  });

  test('no auth, bad key, deactivated: 401', async () => {
    for (const who of ['noAuth', 'badKey', 'deactivated'] as const) {
      const res = await as(t, who).patch('/users/me/subscriptions/muted_topics', {
        stream_id: t.fx.channels.general.id,
        topic: 't',
        op: 'add',
      });
      assert.ok(assertUnauthorized(who, res));
    }
  });
});

describe('which queues get which form', () => {
  test('user_topic replaces muted_topics for clients that ask for it', async () => {
    const client = t.as(t.fx.member);
    const both = await registerQueue(client, { event_types: ['user_topic', 'muted_topics'] });
    const oldOnly = await registerQueue(client, { event_types: ['muted_topics'] });
    const everything = await registerQueue(client, {});
    // Others' queues hear nothing.
    const other = await registerQueue(t.as(t.fx.member2), {});
    await setPolicy(t.fx.member, t.fx.channels.general.id, 't', 1);
    const general = t.fx.channels.general.id;
    const muted = { type: 'muted_topics', muted_topics: [['general', 't', T0]] };
    const read = async (q: { queue_id: string }, who = client) =>
      withoutIds(await drainEvents(t.ctx, who, q.queue_id, -1));
    assert.deepEqual(await read(both), [userTopic(general, 't', 1)]);
    assert.deepEqual(await read(oldOnly), [muted]);
    assert.deepEqual(await read(everything), [muted, userTopic(general, 't', 1)]);
    assert.deepEqual(await read(other, t.as(t.fx.member2)), []);
  });

  test('register: muted_topics only when user_topic is not fetched', async () => {
    await setPolicy(t.fx.member, t.fx.channels.general.id, 't', 1);
    const client = t.as(t.fx.member);
    const both = await registerQueue(client, { fetch_event_types: ['user_topic', 'muted_topics'] });
    assert.ok('user_topics' in both);
    assert.ok(!('muted_topics' in both));
    const all = await registerQueue(client, {});
    assert.deepEqual(all.muted_topics, [['general', 't', T0]]);
    assert.equal((all.user_topics as unknown[]).length, 1);
    const neither = await registerQueue(client, { fetch_event_types: ['alert_words'] });
    assert.ok(!('muted_topics' in neither) && !('user_topics' in neither));
  });
});
