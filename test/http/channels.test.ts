// Reading channels: GET /streams with its filters, GET /streams/{id}, GET /get_stream_id and
// GET /streams/{id}/members, per role, for public, private, web-public and archived channels.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { basicAuth, SUCCESS } from '../support/client.ts';
import {
  assertError,
  expectedChannel,
  namesOf,
  subscribersOf,
  type ChannelKey,
} from '../support/channels.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { sendToChannel } from '../support/messages.ts';

let t: TestApp;
beforeEach(async () => {
  t = await buildTestApp();
});
afterEach(async () => {
  await t.close();
});

type Viewer = 'owner' | 'admin' | 'moderator' | 'member' | 'member2' | 'guest' | 'bot';
const user = (v: Viewer): FixtureUser => t.fx[v];

/** Channels each fixture user may know exist. */
const VISIBLE: Record<Viewer, ChannelKey[]> = {
  owner: ['announce', 'design', 'general', 'private', 'secret', 'web'],
  admin: ['announce', 'design', 'general', 'private', 'secret', 'web'],
  moderator: ['announce', 'design', 'general', 'secret', 'web'],
  member: ['announce', 'design', 'general', 'private', 'web'],
  member2: ['announce', 'design', 'general', 'secret', 'web'],
  guest: ['general', 'web'],
  bot: ['announce', 'design', 'general', 'web'],
};

describe('GET /streams', () => {
  const DEFAULT: Record<Viewer, string[]> = {
    // Public channels and the caller's subscriptions.
    owner: ['announce', 'design', 'general', 'private', 'web'],
    admin: ['announce', 'design', 'general', 'web'],
    moderator: ['announce', 'design', 'general', 'secret', 'web'],
    member: ['announce', 'design', 'general', 'private', 'web'],
    member2: ['announce', 'design', 'general', 'secret', 'web'],
    // Guests see public channels only through subscriptions.
    guest: ['general'],
    bot: ['announce', 'design', 'general', 'web'],
  };
  for (const v of Object.keys(DEFAULT) as Viewer[]) {
    test(`${v}: public channels and subscriptions, by name`, async () => {
      const res = await t.as(user(v)).get('/streams');
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(namesOf(res.body.streams), DEFAULT[v]);
    });
    test(`${v}: include_all lists every channel the caller may see`, async () => {
      const res = await t.as(user(v)).get('/streams', { include_all: true });
      assert.deepEqual(namesOf(res.body.streams), VISIBLE[v]);
      const legacy = await t.as(user(v)).get('/streams', { include_all_active: true });
      assert.deepEqual(namesOf(legacy.body.streams), VISIBLE[v]);
    });
  }

  test('the whole body: every channel field', async () => {
    const res = await t.as(t.fx.guest).get('/streams', { include_web_public: true });
    assert.deepEqual(res.body, {
      ...SUCCESS,
      streams: [await expectedChannel(t, 'general'), await expectedChannel(t, 'web')],
    });
  });

  test('include_web_public adds web-public channels, for guests too', async () => {
    const res = await t.as(t.fx.guest).get('/streams', { include_web_public: true });
    assert.deepEqual(namesOf(res.body.streams), ['general', 'web']);
  });

  test('include_public=false and include_subscribed=false leave nothing', async () => {
    const res = await t.as(t.fx.owner).get('/streams', {
      include_public: false,
      include_subscribed: false,
    });
    assert.deepEqual(res.body, { ...SUCCESS, streams: [] });
  });

  test('include_public=false: subscriptions only', async () => {
    const res = await t.as(t.fx.member).get('/streams', { include_public: false });
    assert.deepEqual(namesOf(res.body.streams), ['announce', 'design', 'general', 'private']);
  });

  test('include_can_access_content: channels whose messages the caller may read', async () => {
    const admin = await t.as(t.fx.admin).get('/streams', { include_can_access_content: true });
    // An administrator sees private channels exist but reads only those they are in.
    assert.deepEqual(namesOf(admin.body.streams), ['announce', 'design', 'general', 'web']);
    const guest = await t.as(t.fx.guest).get('/streams', { include_can_access_content: true });
    assert.deepEqual(namesOf(guest.body.streams), ['general', 'web']);
  });

  test('include_owner_subscribed: a bot also gets its owner’s subscriptions', async () => {
    const res = await t.as(t.fx.bot).get('/streams', { include_owner_subscribed: true });
    assert.deepEqual(namesOf(res.body.streams), [
      'announce',
      'design',
      'general',
      'private',
      'web',
    ]);
    // Only bots have owners.
    const human = await t.as(t.fx.member2).get('/streams', { include_owner_subscribed: true });
    assert.deepEqual(namesOf(human.body.streams), DEFAULT.member2);
  });

  test('include_default marks the default channels', async () => {
    assert.equal(
      (await t.as(t.fx.admin).post('/default_streams', { stream_id: t.fx.channels.design.id }))
        .status,
      200,
    );
    const res = await t.as(t.fx.member).get('/streams', { include_default: true });
    const flags = Object.fromEntries(
      (res.body.streams as Array<{ name: string; is_default: boolean }>).map((s) => [
        s.name,
        s.is_default,
      ]),
    );
    assert.deepEqual(flags, {
      announce: false,
      design: true,
      general: false,
      private: false,
      web: false,
    });
    const plain = await t.as(t.fx.member).get('/streams');
    assert.ok(!('is_default' in (plain.body.streams as object[])[0]));
  });

  test('archived channels appear only with exclude_archived=false', async () => {
    assert.equal(
      (await t.as(t.fx.admin).delete(`/streams/${t.fx.channels.design.id}`)).status,
      200,
    );
    const res = await t.as(t.fx.member).get('/streams');
    assert.deepEqual(namesOf(res.body.streams), ['announce', 'general', 'private', 'web']);
    const all = await t.as(t.fx.member).get('/streams', { exclude_archived: false });
    const design = (all.body.streams as Array<Record<string, unknown>>).find(
      (s) => s.name === 'design',
    );
    assert.deepEqual(design, await expectedChannel(t, 'design', { is_archived: true }));
  });

  test('many channels: each with its own first message and subscriber count, after each change', async () => {
    // Past 20 channels the first message ids are read for the whole organization, and the
    // counts are kept between reads: both must follow sends and subscriptions.
    const admin = t.as(t.fx.admin);
    const names = Array.from({ length: 22 }, (_, i) => `many-${i}`);
    const created = await admin.post('/users/me/subscriptions', {
      subscriptions: names.map((name) => ({ name })),
    });
    assert.equal(created.status, 200, created.text);
    const read = async () => {
      const res = await admin.get('/streams', { include_all: true });
      const byName = new Map(
        (res.body.streams as Array<Record<string, unknown>>).map((c) => [c.name, c]),
      );
      return names.map((n) => [byName.get(n)!.first_message_id, byName.get(n)!.subscriber_count]);
    };
    assert.deepEqual(
      await read(),
      names.map(() => [null, 1]),
    );
    const first = await sendToChannel(t, t.fx.admin, 'many-3', 'a', 'first');
    await sendToChannel(t, t.fx.admin, 'many-3', 'a', 'second');
    const other = await sendToChannel(t, t.fx.admin, 'many-20', 'b', 'another');
    const joined = await t.as(t.fx.member).post('/users/me/subscriptions', {
      subscriptions: [{ name: 'many-20' }],
    });
    assert.equal(joined.status, 200, joined.text);
    assert.deepEqual(
      await read(),
      names.map((n) => (n === 'many-3' ? [first, 1] : n === 'many-20' ? [other, 2] : [null, 1])),
    );
  });

  test('a bad filter value is refused', async () => {
    const res = await t.as(t.fx.member).get('/streams', { include_public: 'maybe' });
    assertError(res, 'include_public is not a boolean');
  });
});

describe('GET /streams/{id}', () => {
  test('returns the channel object', async () => {
    const res = await t.as(t.fx.member).get(`/streams/${t.fx.channels.announce.id}`);
    assert.deepEqual(res.body, { ...SUCCESS, stream: await expectedChannel(t, 'announce') });
  });

  for (const v of Object.keys(VISIBLE) as Viewer[]) {
    test(`${v}: visible channels found, the others are unknown`, async () => {
      for (const key of Object.keys(t.fx.channels) as ChannelKey[]) {
        const res = await t.as(user(v)).get(`/streams/${t.fx.channels[key].id}`);
        if (VISIBLE[v].includes(key)) {
          assert.equal(res.status, 200, `${v} ${key}: ${res.text}`);
          assert.equal((res.body.stream as { name: string }).name, t.fx.channels[key].name);
        } else {
          assertError(res, 'Invalid channel ID');
        }
      }
    });
  }

  test('an administrator sees a private channel they are not in', async () => {
    const res = await t.as(t.fx.admin).get(`/streams/${t.fx.channels.secret.id}`);
    assert.deepEqual(res.body, { ...SUCCESS, stream: await expectedChannel(t, 'secret') });
  });

  test('unknown ids, archived channels and bad ids', async () => {
    assertError(await t.as(t.fx.member).get('/streams/99999'), 'Invalid channel ID');
    await t.as(t.fx.admin).delete(`/streams/${t.fx.channels.design.id}`);
    assertError(
      await t.as(t.fx.member).get(`/streams/${t.fx.channels.design.id}`),
      'Invalid channel ID',
    );
    assertError(await t.as(t.fx.member).get('/streams/abc'), 'stream_id is not an integer');
  });
});

describe('GET /get_stream_id', () => {
  test('finds a channel by name, case-insensitively', async () => {
    const res = await t.as(t.fx.member).get('/get_stream_id', { stream: 'DESIGN' });
    assert.deepEqual(res.body, { ...SUCCESS, stream_id: t.fx.channels.design.id });
  });

  test('private channels only for those who may read them', async () => {
    const mine = await t.as(t.fx.member).get('/get_stream_id', { stream: 'private' });
    assert.deepEqual(mine.body, { ...SUCCESS, stream_id: t.fx.channels.private.id });
    // Seeing that a channel exists is not enough.
    assertError(
      await t.as(t.fx.admin).get('/get_stream_id', { stream: 'secret' }),
      "Invalid channel name 'secret'",
    );
    assertError(
      await t.as(t.fx.guest).get('/get_stream_id', { stream: 'design' }),
      "Invalid channel name 'design'",
    );
  });

  test('unknown names and the missing parameter', async () => {
    assertError(
      await t.as(t.fx.member).get('/get_stream_id', { stream: 'nonexistent' }),
      "Invalid channel name 'nonexistent'",
    );
    assertError(
      await t.as(t.fx.member).get('/get_stream_id'),
      "Missing 'stream' argument",
      'REQUEST_VARIABLE_MISSING',
      { var_name: 'stream' },
    );
  });
});

describe('GET /streams/{id}/members', () => {
  test('subscribers of a public channel, for any member', async () => {
    const res = await t.as(t.fx.member2).get(`/streams/${t.fx.channels.announce.id}/members`);
    assert.deepEqual(res.body, { ...SUCCESS, subscribers: subscribersOf(t, 'announce') });
  });

  test('private channels: subscribers and administrators', async () => {
    const id = t.fx.channels.secret.id;
    for (const who of [t.fx.member2, t.fx.admin, t.fx.owner]) {
      const res = await t.as(who).get(`/streams/${id}/members`);
      assert.deepEqual(res.body, { ...SUCCESS, subscribers: subscribersOf(t, 'secret') });
    }
    assertError(await t.as(t.fx.member).get(`/streams/${id}/members`), 'Invalid channel ID');
  });

  test('guests: their channels and web-public ones only', async () => {
    const web = await t.as(t.fx.guest).get(`/streams/${t.fx.channels.web.id}/members`);
    assert.deepEqual(web.body, { ...SUCCESS, subscribers: subscribersOf(t, 'web') });
    assertError(
      await t.as(t.fx.guest).get(`/streams/${t.fx.channels.design.id}/members`),
      'Invalid channel ID',
    );
  });

  /** Deactivated behind the API's back: only the rows say so. */
  const deactivateMember = () =>
    t.ctx.db.updateTable('users').set({ is_active: 0 }).where('id', '=', t.fx.member.id).execute();

  test('deactivated users are not listed', async () => {
    await deactivateMember();
    const res = await t.as(t.fx.admin).get(`/streams/${t.fx.channels.design.id}/members`);
    assert.deepEqual(res.body, { ...SUCCESS, subscribers: [t.fx.admin.id] });
  });

  test('deactivated users are not counted, with or without the subscriber lists', async () => {
    await deactivateMember();
    const admin = t.as(t.fx.admin);
    const channel = await admin.get(`/streams/${t.fx.channels.design.id}`);
    assert.equal((channel.body.stream as Record<string, unknown>).subscriber_count, 1);
    for (const include_subscribers of [false, true]) {
      const res = await admin.post('/register', {
        include_subscribers,
        event_types: ['subscription'],
      });
      const design = (res.body.subscriptions as Array<Record<string, unknown>>).find(
        (s) => s.name === 'design',
      )!;
      assert.equal(design.subscriber_count, 1);
      assert.deepEqual(design.subscribers, include_subscribers ? [t.fx.admin.id] : undefined);
    }
  });
});

describe('authentication', () => {
  const ROUTES: Array<[string, string]> = [
    ['GET', '/streams'],
    ['GET', '/streams/1'],
    ['GET', '/streams/1/members'],
    ['GET', '/get_stream_id?stream=general'],
    ['PATCH', '/streams/1'],
    ['DELETE', '/streams/1'],
  ];
  for (const [method, url] of ROUTES) {
    test(`${method} ${url}: deactivated users, bad keys and no credentials get 401`, async () => {
      const dead = await t.as(t.fx.deactivated).request(method, url.split('?')[0]);
      assert.equal(dead.status, 401);
      assert.deepEqual(dead.body, {
        result: 'error',
        msg: 'Account is deactivated',
        code: 'UNAUTHORIZED',
      });
      const bad = await t.as(null).inject({
        method: method as 'GET',
        url: `/api/v1${url}`,
        headers: { authorization: basicAuth(t.fx.member.email, 'A'.repeat(32)) },
      });
      assert.equal(bad.statusCode, 401);
      assert.equal(JSON.parse(bad.body).msg, 'Invalid API key');
      const none = await t.as(null).inject({ method: method as 'GET', url: `/api/v1${url}` });
      assert.equal(none.statusCode, 401);
      assert.equal(JSON.parse(none.body).code, 'UNAUTHORIZED');
    });
  }
});
