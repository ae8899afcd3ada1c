// Private content never reaches a non-subscriber: a message in the private channel (owner
// and member subscribed) is, for member2 and the guest, as good as a message that does not
// exist, on every route that reads or names a message, and nothing about it reaches their
// event queues or a bot that is not subscribed. Guests limited by can_access_all_users_group
// are, likewise, told of an inaccessible user what they are told of a missing one.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import type { ApiResponse, Client, Params } from '../support/client.ts';
import { err } from '../support/callers.ts';
import { drainEvents, registerQueue } from '../support/events.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { addUser, sendToChannel, setRealmSetting } from '../support/messages.ts';
import { systemGroups } from '../support/channels.ts';

const TOPIC = 'hushhush-topic';
const CONTENT = 'secretcontent-xyz';
const MISSING = 999999;

interface Outcome {
  status: number;
  body: Record<string, unknown>;
}

let t: TestApp;
let secretId: number;
beforeEach(async () => {
  t = await buildTestApp();
  secretId = await sendToChannel(t, t.fx.member, t.fx.channels.private, TOPIC, CONTENT);
});
afterEach(() => t.close());

const privateId = () => t.fx.channels.private.id;
const OUTSIDERS = ['member2', 'guest'] as const;

/** The answer with the named id written as <id>, so answers naming different ids compare. */
function normalized(res: ApiResponse, id: number) {
  const named = new RegExp(`(?<![\\w.])${id}(?![\\w])`, 'g');
  const body = Object.fromEntries(
    Object.entries(res.body).map(([k, v]) => [
      k,
      v === id ? '<id>' : typeof v === 'string' ? v.replace(named, '<id>') : v,
    ]),
  );
  return { status: res.status, body };
}

interface Probe {
  name: string;
  /** Names the private message (or channel) as `id`. */
  call: (c: Client, id: number) => Promise<ApiResponse>;
  /** Which id the probe names. */
  of: 'message' | 'channel';
}

const PROBES: Probe[] = [
  { name: 'GET /messages/{id}', of: 'message', call: (c, id) => c.get(`/messages/${id}`) },
  {
    name: 'GET /messages/{id}/history',
    of: 'message',
    call: (c, id) => c.get(`/messages/${id}/history`),
  },
  {
    name: 'PATCH /messages/{id}',
    of: 'message',
    call: (c, id) => c.patch(`/messages/${id}`, { topic: 'moved' }),
  },
  { name: 'DELETE /messages/{id}', of: 'message', call: (c, id) => c.delete(`/messages/${id}`) },
  {
    name: 'POST /messages/{id}/reactions',
    of: 'message',
    call: (c, id) => c.post(`/messages/${id}/reactions`, { emoji_name: 'smile' }),
  },
  {
    name: 'DELETE /messages/{id}/reactions',
    of: 'message',
    call: (c, id) => c.delete(`/messages/${id}/reactions`, { emoji_name: 'smile' }),
  },
  {
    name: 'POST /messages/{id}/report',
    of: 'message',
    call: (c, id) => c.post(`/messages/${id}/report`, { report_type: 'spam', description: 'x' }),
  },
  {
    name: 'POST /messages/{id}/typing',
    of: 'message',
    call: (c, id) => c.post(`/messages/${id}/typing`, { op: 'start' }),
  },
  ...(['starred', 'read'] as const).map((flag): Probe => ({
    name: `POST /messages/flags (${flag})`,
    of: 'message',
    call: (c, id) => c.post('/messages/flags', { messages: [id], op: 'add', flag }),
  })),
  {
    name: 'GET /messages?message_ids',
    of: 'message',
    call: (c, id) => c.get('/messages', { message_ids: [id] }),
  },
  {
    name: 'GET /messages anchored at it',
    of: 'message',
    call: (c, id) => c.get('/messages', { anchor: id, num_before: 0, num_after: 0, narrow: [] }),
  },
  ...['id', 'near'].map((operator): Probe => ({
    name: `GET /messages narrow ${operator}`,
    of: 'message',
    call: (c, id) =>
      c.get('/messages', {
        anchor: 'newest',
        num_before: 10,
        num_after: 0,
        narrow: [{ operator, operand: id }],
      }),
  })),
  {
    name: 'GET /users/me/{stream_id}/topics',
    of: 'channel',
    call: (c, id) => c.get(`/users/me/${id}/topics`),
  },
  {
    name: 'POST /mark_topic_as_read',
    of: 'channel',
    call: (c, id) => c.post('/mark_topic_as_read', { stream_id: id, topic_name: TOPIC }),
  },
];

describe('a non-subscriber is told of the private message what they are told of a missing one', () => {
  for (const who of OUTSIDERS) {
    for (const probe of PROBES) {
      test(`${probe.name} as ${who}`, async () => {
        const c = t.as(t.fx[who]);
        const missing = await probe.call(c, MISSING);
        const real = probe.of === 'message' ? secretId : privateId();
        const theirs = await probe.call(c, real);
        assert.deepEqual(normalized(theirs, real), normalized(missing, MISSING));
        assert.ok(!theirs.text.includes(CONTENT) && !theirs.text.includes(TOPIC), theirs.text);
      });
    }
  }
});

/** The narrows a client may search the private channel's content with. */
const NARROWS = (): unknown[][] => [
  [],
  [{ operator: 'channel', operand: privateId() }],
  [{ operator: 'channel', operand: 'private' }],
  [{ operator: 'stream', operand: 'private' }],
  [{ operator: 'topic', operand: TOPIC }],
  [{ operator: 'search', operand: CONTENT }],
  [{ operator: 'search', operand: TOPIC }],
  [{ operator: 'sender', operand: t.fx.member.id }],
  [{ operator: 'is', operand: 'unread' }],
  [{ operator: 'channels', operand: 'public' }],
  [{ operator: 'has', operand: 'reaction' }],
];

describe('GET /messages never returns it, whatever the narrow', () => {
  for (const who of OUTSIDERS) {
    test(`as ${who}`, async () => {
      await t.as(t.fx.member).post(`/messages/${secretId}/reactions`, { emoji_name: 'smile' });
      for (const narrow of NARROWS()) {
        for (const anchor of ['newest', 'oldest', 'first_unread']) {
          const res = await t
            .as(t.fx[who])
            .get('/messages', { anchor, num_before: 50, num_after: 50, narrow });
          const ids = ((res.body.messages ?? []) as Array<{ id: number }>).map((m) => m.id);
          assert.ok(!ids.includes(secretId), `${JSON.stringify(narrow)} ${anchor}`);
          assert.ok(!res.text.includes(CONTENT) && !res.text.includes(TOPIC), res.text);
        }
      }
    });
  }
  test('a subscriber does find it through each narrow that matches it (the probes can fail)', async () => {
    await t.as(t.fx.member).post(`/messages/${secretId}/reactions`, { emoji_name: 'smile' });
    for (const narrow of NARROWS().filter((n) => !JSON.stringify(n).includes('"public"'))) {
      const res = await t
        .as(t.fx.owner)
        .get('/messages', { anchor: 'newest', num_before: 50, num_after: 0, narrow });
      const ids = ((res.body.messages ?? []) as Array<{ id: number }>).map((m) => m.id);
      assert.ok(ids.includes(secretId), `${JSON.stringify(narrow)}: ${res.text}`);
    }
  });
});

test('POST /messages/render: links to the private channel and message render as for a missing one', async () => {
  for (const who of OUTSIDERS) {
    const render = async (content: string) =>
      (await t.as(t.fx[who]).post('/messages/render', { content })).body;
    assert.deepEqual(
      JSON.stringify(await render('#**private**')).replaceAll('private', 'X'),
      JSON.stringify(await render('#**nosuchchannel**')).replaceAll('nosuchchannel', 'X'),
    );
    const linked = await render(`#**private>${TOPIC}@${secretId}**`);
    const missing = await render(`#**nosuchchannel>${TOPIC}@${secretId}**`);
    assert.deepEqual(
      JSON.stringify(linked).replaceAll('private', 'X'),
      JSON.stringify(missing).replaceAll('nosuchchannel', 'X'),
    );
    assert.ok(!JSON.stringify(linked).includes(`channel/${privateId()}`), JSON.stringify(linked));
  }
});

/** Whether an event carries anything of the private message or its topic. */
function mentionsSecret(event: Record<string, unknown>): boolean {
  const text = JSON.stringify(event);
  return (
    text.includes(CONTENT) ||
    text.includes(TOPIC) ||
    new RegExp(`"(message_id|id)":${secretId}\\b`).test(text) ||
    new RegExp(`"messages":\\[[^\\]]*\\b${secretId}\\b`).test(text) ||
    new RegExp(`"message_ids":\\[[^\\]]*\\b${secretId}\\b`).test(text) ||
    new RegExp(`"stream_id":${privateId()}\\b`).test(text)
  );
}

test('event queues: a non-subscriber hears nothing of what happens to it', async () => {
  const queues: Array<{ who: FixtureUser; queue: string; last: number }> = [];
  for (const who of [t.fx.member2, t.fx.guest, t.fx.owner]) {
    const q = await registerQueue(t.as(who));
    queues.push({ who, queue: q.queue_id, last: q.last_event_id });
  }
  const m = t.as(t.fx.member);
  const steps: Array<[string, () => Promise<ApiResponse>]> = [];
  const run = (name: string, p: () => Promise<ApiResponse>) => steps.push([name, p]);
  run('send', () =>
    m.post('/messages', { type: 'stream', to: 'private', topic: TOPIC, content: CONTENT }),
  );
  run('edit', () => m.patch(`/messages/${secretId}`, { content: `${CONTENT} edited` }));
  run('move', () =>
    m.patch(`/messages/${secretId}`, { topic: `${TOPIC}-2`, propagate_mode: 'change_all' }),
  );
  run('react', () => m.post(`/messages/${secretId}/reactions`, { emoji_name: 'smile' }));
  run('unreact', () => m.delete(`/messages/${secretId}/reactions`, { emoji_name: 'smile' }));
  run('star', () =>
    m.post('/messages/flags', { messages: [secretId], op: 'add', flag: 'starred' }),
  );
  run('typing', () =>
    m.post('/typing', { op: 'start', type: 'stream', stream_id: privateId(), topic: TOPIC }),
  );
  run('edit typing', () => m.post(`/messages/${secretId}/typing`, { op: 'start' }));
  run('delete', () => t.as(t.fx.owner).delete(`/messages/${secretId}`));
  for (const [name, p] of steps) {
    const res = await p();
    assert.equal(res.status, 200, `${name}: ${res.text}`);
  }
  for (const q of queues) {
    const events = await drainEvents(t.ctx, t.as(q.who), q.queue, q.last);
    const leaked = events.filter(mentionsSecret);
    if (q.who === t.fx.owner) {
      // The subscriber hears of it: the filter above does catch these events.
      assert.ok(leaked.length >= 8, JSON.stringify(events));
    } else {
      assert.deepEqual(leaked, [], q.who.full_name);
    }
  }
});

test('outgoing webhooks: a bot not subscribed to the channel is not sent its messages', async () => {
  const res = await t.as(t.fx.member2).post('/bots', {
    full_name: 'Outside Bot',
    short_name: 'outside',
    bot_type: 3,
    payload_url: 'http://127.0.0.1:9/hook',
    interface_type: 1,
  });
  assert.equal(res.status, 200, res.text);
  await sendToChannel(t, t.fx.member, t.fx.channels.general, 'open', 'hey @**Outside Bot**');
  const pending = async () =>
    (
      await t.ctx.db
        .selectFrom('outgoing_webhook_deliveries')
        .select(['bot_id', 'message_id'])
        .orderBy('id')
        .execute()
    ).map((d) => d.message_id);
  // A public channel's mention does trigger it: the check below can fail.
  assert.equal((await pending()).length, 1);
  const secret = await sendToChannel(
    t,
    t.fx.member,
    t.fx.channels.private,
    TOPIC,
    'hey @**Outside Bot**',
  );
  assert.ok(
    !(await pending()).includes(secret),
    'the unsubscribed bot was queued the private message',
  );
});

describe('a guest limited by can_access_all_users_group', () => {
  let stranger: FixtureUser;
  beforeEach(async () => {
    await setRealmSetting(t, 'can_access_all_users_group', (await systemGroups(t))['role:members']);
    // A member who shares no channel (nor conversation) with the guest.
    stranger = await addUser(t, 'Stan Stranger', { channels: [t.fx.channels.design.id] });
  });

  const refused = (msg: string) => ({ status: 400, body: err(msg) });
  // Refused as the reference server refuses them; 'missing' is the answer for an unknown id.
  const ROWS: Array<[string, string, (id: number) => Params, Outcome | 'missing']> = [
    ['GET', '/users/{id}', () => ({}), refused('Insufficient permission')],
    ['GET', '/users/{id}/subscriptions/{general}', () => ({}), refused('Insufficient permission')],
    ['GET', '/user_groups/{members}/members/{id}', () => ({}), refused('Insufficient permission')],
    ['POST', '/users/me/muted_users/{id}', () => ({}), 'missing'],
    [
      'POST',
      '/messages',
      (id) => ({ type: 'direct', to: [id], content: 'hi' }),
      refused('You do not have permission to access some of the recipients.'),
    ],
    ['POST', '/typing', (id) => ({ op: 'start', type: 'direct', to: [id] }), 'missing'],
  ];
  for (const [method, path, params, expected] of ROWS) {
    test(`${method} ${path}`, async () => {
      const members = (await systemGroups(t))['role:members'];
      const call = (id: number) =>
        t
          .as(t.fx.guest)
          .request(
            method,
            path
              .replace('{id}', String(id))
              .replace('{general}', String(t.fx.channels.general.id))
              .replace('{members}', String(members)),
            params(id),
          );
      const res = await call(stranger.id);
      assert.deepEqual(
        normalized(res, stranger.id),
        expected === 'missing' ? normalized(await call(MISSING), MISSING) : expected,
      );
      assert.ok(!res.text.includes(stranger.email), res.text);
    });
  }

  test('GET /streams/{id}/members and GET /users name no stranger', async () => {
    const members = await t.as(t.fx.guest).get(`/streams/${t.fx.channels.general.id}/members`);
    assert.equal(members.status, 200, members.text);
    assert.ok(!(members.body.subscribers as number[]).includes(stranger.id), members.text);
    const users = await t.as(t.fx.guest).get('/users');
    assert.ok(!users.text.includes(stranger.email), 'the stranger is listed by email');
    // The member does see the stranger: the checks above can fail.
    assert.ok((await t.as(t.fx.member).get('/users')).text.includes(stranger.email), 'member');
  });
});
