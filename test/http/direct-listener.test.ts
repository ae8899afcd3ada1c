// Plain authenticated GETs over a real socket (GET /events and every route without path
// parameters) are answered by http/direct-listener.ts without Fastify: the same status, body
// and headers as Fastify's route gives the same request (reached here through inject), every
// error included; what the listener does not expect goes to Fastify.
import { once } from 'node:events';
import { Agent, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createDirectServer, DirectListener } from '../../src/http/direct-listener.ts';
import { createRateLimiter } from '../../src/http/rate-limit.ts';
import { defineRoute } from '../../src/http/route.ts';
import { buildTestApp, type TestAppOptions } from '../support/app.ts';
import { basicAuth, encodeParams, type Params } from '../support/client.ts';
import type { FixtureUser } from '../support/fixture.ts';
import {
  rawRequest,
  withServer,
  type Live,
  type RawRequest,
  type RawResponse,
} from '../support/live.ts';

const HOST = 'parley.test';
// Enough failed authentications per address (max / 20) for every 401 case on both paths.
const RATE_LIMITED: TestAppOptions = { config: { rateLimit: { max: 2000, windowSeconds: 60 } } };

/** The headers both paths must agree on (Date and Connection differ by nature). */
const COMPARED_HEADERS = [
  'content-type',
  'content-length',
  'www-authenticate',
  'retry-after',
  'x-ratelimit-limit',
  'x-ratelimit-reset',
];

function pick(headers: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(COMPARED_HEADERS.map((h) => [h, headers[h]]));
}

interface Case {
  name: string;
  who: FixtureUser | null;
  /** Below /api/v1; /events unless said. */
  path?: string;
  query: string;
  host?: string;
  key?: string;
}

async function register(live: Live, who: FixtureUser, host = HOST): Promise<string> {
  const res = await live.raw({
    method: 'POST',
    path: '/api/v1/register',
    headers: {
      host,
      authorization: basicAuth(who.email, who.api_key),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: encodeParams({ event_types: ['message'] }),
  });
  assert.equal(res.status, 200, res.text);
  return String((JSON.parse(res.text) as { queue_id: string }).queue_id);
}

/** The same GET on the socket (listener) and through inject (Fastify). */
async function both(live: Live, c: Case): Promise<{ socket: RawResponse; fastify: RawResponse }> {
  const headers: Record<string, string> = { host: c.host ?? HOST };
  if (c.who) headers.authorization = basicAuth(c.who.email, c.key ?? c.who.api_key);
  const path = `/api/v1${c.path ?? '/events'}?${c.query}`;
  const before = live.fastifyRequests();
  const socket = await live.raw({ method: 'GET', path, headers });
  assert.equal(live.fastifyRequests(), before, `${c.name}: the socket request reached Fastify`);
  const injected = await live.t.app.inject({ method: 'GET', url: path, headers });
  return {
    socket,
    fastify: {
      status: injected.statusCode,
      headers: injected.headers,
      text: injected.body,
    },
  };
}

const q = (params: Params) => encodeParams(params);

/** The socket's answer to each case is Fastify's: status, body and the compared headers. */
async function assertAlike(live: Live, cases: Case[]): Promise<void> {
  for (const c of cases) {
    const { socket, fastify } = await both(live, c);
    assert.equal(socket.status, fastify.status, c.name);
    assert.deepEqual(JSON.parse(socket.text), JSON.parse(fastify.text), c.name);
    assert.deepEqual(pick(socket.headers), pick(fastify.headers), c.name);
  }
}

test('polls on a socket get what Fastify answers, errors included, without reaching it', () =>
  withServer(async (live) => {
    const { member, deactivated, otherOwner } = live.t.fx;
    const queueId = await register(live, member);
    const otherHost = `${live.t.fx.other.string_id}.${HOST}`;
    const otherQueue = await register(live, otherOwner, otherHost);
    const quick = { queue_id: queueId, last_event_id: -1, dont_block: true };
    const cases: Case[] = [
      { name: 'plain', who: member, query: q(quick) },
      { name: 'unknown parameter', who: member, query: q({ ...quick, colour: 'red' }) },
      {
        name: 'another organization',
        who: otherOwner,
        host: otherHost,
        query: q({ ...quick, queue_id: otherQueue }),
      },
      { name: 'key of another organization', who: otherOwner, query: q(quick) },
      { name: 'unknown queue', who: member, query: q({ ...quick, queue_id: 'nope' }) },
      { name: "another user's queue", who: live.t.fx.member2, query: q(quick) },
      { name: 'bad integer', who: member, query: q({ ...quick, last_event_id: 'abc' }) },
      { name: 'bad boolean', who: member, query: q({ ...quick, dont_block: 'maybe' }) },
      { name: 'repeated parameter', who: member, query: `${q(quick)}&queue_id=x` },
      { name: 'lone surrogate', who: member, query: `${q(quick)}&colour=%ED%A0%80` },
      { name: 'no credentials', who: null, query: q(quick) },
      { name: 'wrong key', who: member, key: 'x'.repeat(32), query: q(quick) },
      { name: 'malformed key', who: member, key: 'short', query: q(quick) },
      { name: 'deactivated', who: deactivated, query: q(quick) },
    ];
    await assertAlike(live, cases);
    // And the answers are the right ones, not merely equal.
    const plain = await both(live, cases[0]);
    assert.deepEqual(JSON.parse(plain.socket.text), { result: 'success', msg: '', events: [] });
    const unknown = await both(live, cases[1]);
    assert.deepEqual(JSON.parse(unknown.socket.text), {
      result: 'success',
      msg: '',
      events: [],
      ignored_parameters_unsupported: ['colour'],
    });
    const lost = await both(live, cases[4]);
    assert.equal(lost.socket.status, 400);
    assert.deepEqual(JSON.parse(lost.socket.text), {
      result: 'error',
      msg: 'Bad event queue ID: nope',
      code: 'BAD_EVENT_QUEUE_ID',
      queue_id: 'nope',
    });
    const wrongKey = await both(live, cases[11]);
    assert.equal(wrongKey.socket.status, 401);
    assert.equal(wrongKey.socket.headers['www-authenticate'], 'Basic realm="parley"');
    assert.deepEqual(JSON.parse(wrongKey.socket.text), {
      result: 'error',
      msg: 'Invalid API key',
      code: 'UNAUTHORIZED',
    });
  }, RATE_LIMITED));

test('other GET routes on a socket get what Fastify answers, without reaching it', () =>
  withServer(async (live) => {
    const { member, guest, admin, deactivated } = live.t.fx;
    const cases: Case[] = [
      { name: 'own user', who: member, path: '/users/me', query: '' },
      { name: 'own user, a guest', who: guest, path: '/users/me', query: '' },
      { name: 'own user, unknown parameter', who: member, path: '/users/me', query: 'x=1' },
      {
        name: 'users',
        who: admin,
        path: '/users',
        query: q({ client_gravatar: false, include_custom_profile_fields: true }),
      },
      { name: 'users, a guest', who: guest, path: '/users', query: '' },
      { name: 'users, bad boolean', who: member, path: '/users', query: 'client_gravatar=maybe' },
      { name: 'users, bad id list', who: member, path: '/users', query: 'user_ids=[1,"a"]' },
      {
        name: 'subscriptions with subscribers',
        who: member,
        path: '/users/me/subscriptions',
        query: q({ include_subscribers: true }),
      },
      { name: 'channels', who: member, path: '/streams', query: '' },
      {
        name: 'channel id, unknown channel',
        who: member,
        path: '/get_stream_id',
        query: q({ stream: 'no such channel' }),
      },
      {
        name: 'messages',
        who: member,
        path: '/messages',
        query: q({ anchor: 'newest', num_before: 5, num_after: 0 }),
      },
      { name: 'messages, bad anchor', who: member, path: '/messages', query: 'anchor=soon' },
      { name: 'user groups', who: member, path: '/user_groups', query: '' },
      { name: 'drafts', who: member, path: '/drafts', query: '' },
      {
        name: 'own user, wrong key',
        who: member,
        key: 'x'.repeat(32),
        path: '/users/me',
        query: '',
      },
      { name: 'own user, deactivated', who: deactivated, path: '/users/me', query: '' },
      { name: 'own user, no credentials', who: null, path: '/users/me', query: '' },
    ];
    await assertAlike(live, cases);
    // And the answers are the right ones, not merely equal.
    const me = JSON.parse((await both(live, cases[0])).socket.text) as Record<string, unknown>;
    assert.equal(me.result, 'success');
    assert.equal(me.user_id, member.id);
    assert.equal(me.email, member.email);
    const ignored = JSON.parse((await both(live, cases[2])).socket.text) as Record<string, unknown>;
    assert.deepEqual(ignored.ignored_parameters_unsupported, ['x']);
    const bad = await both(live, cases[5]);
    assert.equal(bad.socket.status, 400);
    assert.deepEqual(JSON.parse(bad.socket.text), {
      result: 'error',
      msg: 'client_gravatar is not a boolean',
      code: 'BAD_REQUEST',
    });
    const missing = await both(live, cases[9]);
    assert.equal(missing.socket.status, 400);
    assert.equal((JSON.parse(missing.socket.text) as { code: string }).code, 'BAD_REQUEST');
    const denied = await both(live, cases[14]);
    assert.equal(denied.socket.status, 401);
    assert.equal(denied.socket.headers['www-authenticate'], 'Basic realm="parley"');
  }, RATE_LIMITED));

test('on one connection, each request is authenticated by its own headers', () =>
  withServer(async (live) => {
    const { member, admin, owner, bot } = live.t.fx;
    // One kept-alive connection for every request below.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const ports = new Set<number | undefined>();
    live.t.app.server.on('request', (req: IncomingMessage) => {
      if (req.url === '/api/v1/users/me') ports.add(req.socket.remotePort);
    });
    const me = async (who: FixtureUser, host = HOST, query = '') => {
      const before = live.fastifyRequests();
      const res = await live.raw({
        method: 'GET',
        path: `/api/v1/users/me${query}`,
        headers: { host, authorization: basicAuth(who.email, who.api_key) },
        agent,
      });
      const body = JSON.parse(res.text) as Record<string, unknown>;
      return { status: res.status, body, byFastify: live.fastifyRequests() > before };
    };
    try {
      assert.deepEqual(await me(member), await me(member));
      assert.equal((await me(member)).body.user_id, member.id);
      // Another query on the connection gets its own answer.
      const withQuery = await me(member, HOST, '?x=1');
      assert.deepEqual(withQuery.body.ignored_parameters_unsupported, ['x']);
      assert.equal((await me(member)).body.ignored_parameters_unsupported, undefined);
      // Another user's credential on the same connection is that user.
      assert.equal((await me(admin)).body.user_id, admin.id);
      assert.equal((await me(member)).body.user_id, member.id);
      // The same credential on a host naming no organization is refused, then accepted again.
      const elsewhere = await me(member, 'nowhere.parley.test');
      assert.deepEqual(
        [elsewhere.status, elsewhere.body, elsewhere.byFastify],
        [401, { result: 'error', msg: 'Invalid API key', code: 'UNAUTHORIZED' }, false],
      );
      assert.equal((await me(member)).body.user_id, member.id);
      // A host the listener leaves to Fastify, between two it answers.
      const unusual = await me(member, '[::1]:80');
      assert.equal(unusual.byFastify, true);
      const again = await me(member);
      assert.deepEqual([again.status, again.byFastify], [200, false]);
      // A new key: the old one is refused at once on the connection that used it.
      assert.equal((await me(bot)).body.user_id, bot.id);
      const regenerated = await live.call(member, 'POST', `/bots/${bot.id}/api_key/regenerate`);
      assert.equal(regenerated.status, 200, regenerated.text);
      const stale = await me(bot);
      assert.deepEqual([stale.status, stale.body.msg], [401, 'Invalid API key']);
      const fresh = { ...bot, api_key: regenerated.body.api_key as string };
      assert.equal((await me(fresh)).body.user_id, bot.id);
      // Deactivated between two requests on the connection: the second is refused.
      assert.equal((await me(member)).body.user_id, member.id);
      const deactivated = await live.call(owner, 'DELETE', `/users/${member.id}`);
      assert.equal(deactivated.status, 200, deactivated.text);
      const gone = await me(member);
      assert.deepEqual([gone.status, gone.body.msg], [401, 'Account is deactivated']);
      assert.equal(ports.size, 1, 'the requests shared one connection');
    } finally {
      agent.destroy();
    }
  }));

test('a route with a path parameter, or an anonymous one, goes to Fastify', () =>
  withServer(async (live) => {
    const { member } = live.t.fx;
    const auth = basicAuth(member.email, member.api_key);
    for (const path of [`/api/v1/users/${member.id}`, '/api/v1/server_settings']) {
      const before = live.fastifyRequests();
      const res = await live.raw({
        method: 'GET',
        path,
        headers: { host: HOST, authorization: auth },
      });
      assert.equal(live.fastifyRequests(), before + 1, path);
      assert.equal(res.status, 200, res.text);
    }
  }));

test('a raw reply (a file, not the JSON envelope) is written as the route gives it', async () => {
  // No route of the API answers a plain GET this way today; a future one must still get its
  // status, type, headers and bytes, so the listener is run here with such a route alone.
  const t = await buildTestApp({ config: { rateLimit: { max: 100, windowSeconds: 60 } } });
  const limiter = await createRateLimiter(t.ctx);
  const file = defineRoute({
    method: 'GET',
    url: '/test-file',
    summary: 'A file',
    tags: ['test'],
    auth: 'user',
    handler: async () => ({
      raw: true,
      status: 201,
      contentType: 'text/plain; charset=utf-8',
      headers: { 'cache-control': 'no-store' },
      body: 'héllo',
    }),
  });
  const direct = new DirectListener(t.ctx, limiter, [file]);
  const server = createDirectServer(direct, (_req, res) => res.writeHead(404).end(), {});
  try {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { member } = t.fx;
    const res = await rawRequest((server.address() as AddressInfo).port, {
      method: 'GET',
      path: '/api/v1/test-file',
      headers: { host: HOST, authorization: basicAuth(member.email, member.api_key) },
    });
    assert.deepEqual(
      {
        status: res.status,
        text: res.text,
        type: res.headers['content-type'],
        length: res.headers['content-length'],
        cache: res.headers['cache-control'],
        limit: res.headers['x-ratelimit-limit'],
      },
      {
        status: 201,
        text: 'héllo',
        type: 'text/plain; charset=utf-8',
        length: '6',
        cache: 'no-store',
        limit: '100',
      },
    );
  } finally {
    server.close();
    await limiter.close();
    await t.close();
  }
});

test('a poll without a queue id registers one on the socket too', () =>
  withServer(async (live) => {
    const { member } = live.t.fx;
    const before = live.fastifyRequests();
    const res = await live.raw({
      method: 'GET',
      path: `/api/v1/events?${q({ dont_block: true, event_types: ['message'] })}`,
      headers: { host: HOST, authorization: basicAuth(member.email, member.api_key) },
    });
    assert.equal(live.fastifyRequests(), before);
    assert.equal(res.status, 200);
    const body = JSON.parse(res.text) as { queue_id: string; events: unknown[] };
    assert.deepEqual(body, { result: 'success', msg: '', events: [], queue_id: body.queue_id });
    assert.equal(live.t.ctx.queues.inspect(body.queue_id)?.parked, false);
  }));

test('polls again on one connection each read their own event id', () =>
  withServer(async (live) => {
    const { member, channels } = live.t.fx;
    const queueId = await register(live, member);
    const send = async (content: string) => {
      const sent = await live.call(member, 'POST', '/messages', {
        type: 'stream',
        to: channels.general.name,
        topic: 'polls',
        content,
      });
      assert.equal(sent.status, 200, sent.text);
    };
    for (const content of ['one', 'two', 'three']) await send(content);
    // One keep-alive connection for every poll: the connection keeps the last poll's query.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    let connections = 0;
    live.t.app.server.on('connection', () => connections++);
    const headers = { host: HOST, authorization: basicAuth(member.email, member.api_key) };
    const poll = async (lastEventId: string) => {
      const before = live.fastifyRequests();
      const path = `/api/v1/events?${q({ queue_id: queueId })}&last_event_id=${lastEventId}&dont_block=true`;
      const res = await live.raw({ method: 'GET', path, headers, agent });
      assert.equal(live.fastifyRequests(), before);
      const body = JSON.parse(res.text) as Record<string, unknown>;
      if (res.status !== 200) return { status: res.status, body };
      const events = body.events as Array<{ id: number; message: { content: string } }>;
      return { status: 200, events: events.map((e) => [e.id, e.message.content]) };
    };
    try {
      const answer = (...events: Array<[number, string]>) => ({ status: 200, events });
      assert.deepEqual(await poll('-1'), answer([0, 'one'], [1, 'two'], [2, 'three']));
      assert.deepEqual(await poll('0'), answer([1, 'two'], [2, 'three']));
      assert.deepEqual(await poll('2'), answer());
      assert.deepEqual(await poll('1-2'), {
        status: 400,
        body: { result: 'error', msg: 'last_event_id is not an integer', code: 'BAD_REQUEST' },
      });
      await send('four');
      assert.deepEqual(await poll('2'), answer([3, 'four']));
      assert.deepEqual(await poll('3'), answer());
      assert.equal(connections, 1);
    } finally {
      agent.destroy();
    }
  }));

test('requests the listener does not expect go to Fastify and get its answer', () =>
  withServer(async (live) => {
    const { member } = live.t.fx;
    const queueId = await register(live, member);
    const auth = basicAuth(member.email, member.api_key);
    const query = q({ queue_id: queueId, last_event_id: -1, dont_block: true });
    const success = { result: 'success', msg: '', events: [] };
    const unusual: RawRequest[] = [
      // A trailing slash: Fastify's router ignores it.
      {
        method: 'GET',
        path: `/api/v1/events/?${query}`,
        headers: { host: HOST, authorization: auth },
      },
      // A GET with a body, which Fastify does not parse.
      {
        method: 'GET',
        path: `/api/v1/events?${query}`,
        headers: {
          host: HOST,
          authorization: auth,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: 'colour=red',
      },
      // A host with characters the listener leaves to Fastify's hostname rules.
      {
        method: 'GET',
        path: `/api/v1/events?${query}`,
        headers: { host: `[::1]:80`, authorization: auth },
      },
    ];
    for (const req of unusual) {
      const before = live.fastifyRequests();
      const res = await live.raw(req);
      assert.equal(live.fastifyRequests(), before + 1, req.path);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(JSON.parse(res.text), success);
    }
    const before = live.fastifyRequests();
    const head = await live.raw({
      method: 'HEAD',
      path: `/api/v1/events?${query}`,
      headers: { host: HOST, authorization: auth },
    });
    assert.equal(live.fastifyRequests(), before + 1);
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
  }));

test('polls answered on the socket count against the rate limit', () =>
  withServer(
    async (live) => {
      const { member } = live.t.fx;
      const queueId = await register(live, member);
      const path = `/api/v1/events?${q({ queue_id: queueId, last_event_id: -1, dont_block: true })}`;
      const headers = { host: HOST, authorization: basicAuth(member.email, member.api_key) };
      // The register above was the first of 3.
      for (const left of ['1', '0']) {
        const res = await live.raw({ method: 'GET', path, headers });
        assert.equal(res.status, 200);
        assert.equal(res.headers['x-ratelimit-remaining'], left);
      }
      const before = live.fastifyRequests();
      const refused = await live.raw({ method: 'GET', path, headers });
      assert.equal(live.fastifyRequests(), before);
      assert.equal(refused.status, 429);
      assert.equal(refused.headers['x-ratelimit-remaining'], '0');
      assert.equal(refused.headers['content-type'], 'application/json; charset=utf-8');
      const body = JSON.parse(refused.text) as Record<string, unknown>;
      const seconds = body['retry-after'] as number;
      assert.ok(seconds > 0 && seconds <= 60, String(seconds));
      assert.equal(refused.headers['retry-after'], String(Math.max(1, Math.ceil(seconds))));
      assert.deepEqual(body, {
        result: 'error',
        msg: 'API usage exceeded rate limit',
        code: 'RATE_LIMIT_HIT',
        'retry-after': seconds,
      });
    },
    { config: { rateLimit: { max: 3, windowSeconds: 60 } } },
  ));
