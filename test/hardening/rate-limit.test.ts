// Rate limits (src/http/rate-limit.ts): per user, per address without authentication, and
// failed authentications per address, in fixed windows timed by ctx.clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RateLimitConfig } from '../../src/config.ts';
import { authenticateBasic } from '../../src/http/auth.ts';
import { createRateLimiter } from '../../src/http/rate-limit.ts';
import { buildTestApp, TEST_REDIS_URL, type TestApp } from '../support/app.ts';
import { basicAuth, type ApiResponse } from '../support/client.ts';
import { err, OK } from '../support/callers.ts';

/** A minute boundary (2025-01-01T00:00:00Z): windows of 60 s start here. */
const T0 = 1735689600;

async function limitedApp(
  rateLimit: RateLimitConfig,
  shareStoreWith?: TestApp,
): Promise<{ t: TestApp; setClock: (seconds: number) => void }> {
  const t = await buildTestApp({ config: { rateLimit }, shareStoreWith });
  let nowMs = T0 * 1000;
  t.ctx.clock = { nowMs: () => nowMs };
  return { t, setClock: (seconds) => (nowMs = Math.round(seconds * 1000)) };
}

const RATE_LIMITED = (retryAfter: number) => ({
  result: 'error',
  msg: 'API usage exceeded rate limit',
  code: 'RATE_LIMIT_HIT',
  'retry-after': retryAfter,
});

function limitHeaders(res: ApiResponse): Record<string, unknown> {
  return {
    limit: res.headers['x-ratelimit-limit'],
    remaining: res.headers['x-ratelimit-remaining'],
    reset: res.headers['x-ratelimit-reset'],
    retryAfter: res.headers['retry-after'],
  };
}

const headersOf = (limit: number, remaining: number, reset: number, retryAfter?: string) => ({
  limit: String(limit),
  remaining: String(remaining),
  reset: String(reset),
  retryAfter,
});

const WRONG_KEY = { authorization: basicAuth('member@parley.test', 'A'.repeat(32)) };

test('a user gets max requests a window, then 429 with the time left', async () => {
  const { t, setClock } = await limitedApp({ max: 3, windowSeconds: 60 });
  try {
    setClock(T0 + 10.25);
    for (const left of [2, 1, 0]) {
      const res = await t.as(t.fx.member).get('/users/me');
      assert.equal(res.status, 200);
      assert.deepEqual(limitHeaders(res), headersOf(3, left, T0 + 60));
    }
    const refused = await t.as(t.fx.member).get('/users/me');
    assert.equal(refused.status, 429);
    assert.deepEqual(refused.body, RATE_LIMITED(49.75));
    assert.deepEqual(limitHeaders(refused), headersOf(3, 0, T0 + 60, '50'));
    assert.equal(refused.headers['content-type'], 'application/json; charset=utf-8');

    // Every route a user calls draws on the same budget.
    const other = await t.as(t.fx.member).post('/users/me/presence', { status: 'active' });
    assert.equal(other.status, 429);

    // Another user has a budget of their own.
    const member2 = await t.as(t.fx.member2).get('/users/me');
    assert.equal(member2.status, 200);
    assert.deepEqual(limitHeaders(member2), headersOf(3, 2, T0 + 60));

    // The last millisecond of the window is still in it; the next starts afresh.
    setClock(T0 + 59.999);
    const last = await t.as(t.fx.member).get('/users/me');
    assert.deepEqual(last.body, RATE_LIMITED(0.001));
    assert.equal(last.headers['retry-after'], '1');
    setClock(T0 + 60);
    const next = await t.as(t.fx.member).get('/users/me');
    assert.equal(next.status, 200);
    assert.deepEqual(limitHeaders(next), headersOf(3, 2, T0 + 120));
  } finally {
    await t.close();
  }
});

test('with counts in memory a known client is admitted at once, with no promise', async () => {
  // Polls come this way: the listener answers a known client's poll in the same turn. The
  // counts are in memory only without Redis, so this app has none even where Redis is tested.
  const t = await buildTestApp({
    config: { rateLimit: { max: 2, windowSeconds: 60 }, redisUrl: null },
  });
  // One window throughout: a real clock could cross into the next between two calls.
  t.ctx.clock = { nowMs: () => (T0 + 1) * 1000 };
  try {
    const limiter = await createRateLimiter(t.ctx);
    const header = basicAuth(t.fx.member.email, t.fx.member.api_key);
    const actor = await authenticateBasic(t.ctx, header, 'parley.test');
    const request = { ip: '127.0.0.1', headers: {} };
    const seen: Record<string, string> = {};
    const sink = { header: (name: string, value: string) => (seen[name] = value) };
    for (const left of ['1', '0']) {
      assert.equal(
        limiter.authenticate(request, sink, () => actor),
        actor,
      );
      assert.equal(seen['X-RateLimit-Remaining'], left);
    }
    assert.throws(() => limiter.authenticate(request, sink, () => actor), {
      code: 'RATE_LIMIT_HIT',
    });
    // A check that has to wait still gets a promise, counted on the same budget.
    const later = limiter.authenticate(request, sink, async () => actor);
    assert.ok(later instanceof Promise);
    await assert.rejects(later, { code: 'RATE_LIMIT_HIT' });
    await limiter.close();
  } finally {
    await t.close();
  }
});

test("errors count and carry the headers too, and GET /events draws on the user's budget", async () => {
  const { t } = await limitedApp({ max: 200, windowSeconds: 60 });
  try {
    const bad = await t.as(t.fx.member).get('/messages', { anchor: 'nowhere' });
    assert.equal(bad.status, 400);
    assert.deepEqual(limitHeaders(bad), headersOf(200, 199, T0 + 60));

    const reg = await t.as(t.fx.member).post('/register', { event_types: ['presence'] });
    assert.equal(reg.status, 200);
    const poll = await t.as(t.fx.member).get('/events', {
      queue_id: reg.body.queue_id,
      last_event_id: -1,
      dont_block: true,
    });
    assert.equal(poll.status, 200);
    assert.deepEqual(limitHeaders(poll), headersOf(200, 197, T0 + 60));
  } finally {
    await t.close();
  }
});

test('unauthenticated requests are limited per address, at half the user limit', async () => {
  const { t, setClock } = await limitedApp({ max: 4, windowSeconds: 60 });
  try {
    setClock(T0 + 30);
    for (const left of [1, 0]) {
      const res = await t.as(null).get('/server_settings');
      assert.equal(res.status, 200);
      assert.deepEqual(limitHeaders(res), headersOf(2, left, T0 + 60));
    }
    const refused = await t.as(null).post('/fetch_api_key', {
      username: t.fx.member.delivery_email,
      password: t.fx.member.password,
    });
    assert.equal(refused.status, 429);
    assert.deepEqual(refused.body, RATE_LIMITED(30));
    assert.deepEqual(limitHeaders(refused), headersOf(2, 0, T0 + 60, '30'));

    // Authenticated users at the same address are counted by user, not by address.
    const user = await t.as(t.fx.member).get('/users/me');
    assert.equal(user.status, 200);
    assert.deepEqual(limitHeaders(user), headersOf(4, 3, T0 + 60));

    // Behind a proxy on this host, the address it forwards is the client's.
    const forwarded = await t
      .as(null)
      .withHeaders({ 'x-forwarded-for': '198.51.100.9, 203.0.113.7' })
      .get('/server_settings');
    assert.equal(forwarded.status, 200);
    assert.deepEqual(limitHeaders(forwarded), headersOf(2, 1, T0 + 60));
  } finally {
    await t.close();
  }
});

test('a client reaching the server directly cannot choose its address; IPv6 counts by /64', async () => {
  const { t } = await limitedApp({ max: 2, windowSeconds: 60 });
  const from = async (remoteAddress: string, forwardedFor?: string) =>
    t
      .as(null)
      .inject({
        method: 'GET',
        url: '/api/v1/server_settings',
        remoteAddress,
        headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {},
      })
      .then((res) => res.statusCode);
  try {
    assert.equal(await from('198.51.100.1'), 200);
    assert.equal(await from('198.51.100.1', '203.0.113.1'), 429);
    assert.equal(await from('::ffff:198.51.100.1'), 429);
    assert.equal(await from('198.51.100.2'), 200);

    assert.equal(await from('2001:db8:1:2::1'), 200);
    assert.equal(await from('2001:db8:1:2:ffff:ffff:ffff:ffff'), 429);
    assert.equal(await from('2001:db8:1:3::1'), 200);
  } finally {
    await t.close();
  }
});

test('failed authentication is limited per address, a twentieth of the user limit', async () => {
  const { t, setClock } = await limitedApp({ max: 200, windowSeconds: 60 });
  const badKey = t.as(null).withHeaders(WRONG_KEY);
  try {
    setClock(T0 + 15);
    for (let left = 9; left >= 0; left--) {
      const res = await badKey.get('/users/me');
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, err('Invalid API key', 'UNAUTHORIZED'));
      assert.deepEqual(limitHeaders(res), headersOf(10, left, T0 + 60));
    }
    const refused = await badKey.get('/users/me');
    assert.equal(refused.status, 429);
    assert.deepEqual(refused.body, RATE_LIMITED(45));
    assert.deepEqual(limitHeaders(refused), headersOf(10, 0, T0 + 60, '45'));
    // A missing header is a failed authentication as well.
    assert.equal((await t.as(null).get('/users/me')).status, 429);

    // A valid key from the same address still works...
    const member = await t.as(t.fx.member).get('/users/me');
    assert.equal(member.status, 200);
    assert.deepEqual(limitHeaders(member), headersOf(200, 199, T0 + 60));
    // ...but the address may not try a password or do anything else unauthenticated.
    const login = await t.as(null).post('/fetch_api_key', {
      username: t.fx.member.delivery_email,
      password: t.fx.member.password,
    });
    assert.equal(login.status, 429);
    assert.deepEqual(login.body, RATE_LIMITED(45));
    assert.equal((await t.as(null).get('/server_settings')).status, 429);

    setClock(T0 + 60);
    const later = await badKey.get('/users/me');
    assert.equal(later.status, 401);
    assert.deepEqual(limitHeaders(later), headersOf(10, 9, T0 + 120));
  } finally {
    await t.close();
  }
});

test('wrong passwords use up the failure budget; then even the right one is refused', async () => {
  const { t } = await limitedApp({ max: 200, windowSeconds: 60 });
  const login = (password: string) =>
    t.as(null).post('/fetch_api_key', { username: t.fx.member.delivery_email, password });
  try {
    const first = await login(t.fx.member.password);
    assert.equal(first.status, 200);
    assert.deepEqual(limitHeaders(first), headersOf(100, 99, T0 + 60));

    for (let left = 9; left >= 0; left--) {
      const res = await login('wrong-password');
      assert.deepEqual(
        [res.status, res.body, limitHeaders(res)],
        [
          401,
          err('Your username or password is incorrect', 'AUTHENTICATION_FAILED'),
          headersOf(10, left, T0 + 60),
        ],
      );
    }
    const right = await login(t.fx.member.password);
    assert.equal(right.status, 429);
    assert.deepEqual(right.body, RATE_LIMITED(60));
  } finally {
    await t.close();
  }
});

test('failed authentications also count against the address', async () => {
  const { t } = await limitedApp({ max: 200, windowSeconds: 60 });
  try {
    for (let i = 0; i < 5; i++) {
      assert.equal((await t.as(null).withHeaders(WRONG_KEY).get('/users/me')).status, 401);
    }
    const res = await t.as(null).get('/server_settings');
    assert.equal(res.status, 200);
    assert.deepEqual(limitHeaders(res), headersOf(100, 94, T0 + 60));
  } finally {
    await t.close();
  }
});

test('PARLEY_RATE_LIMIT=off: no limit and no headers', async () => {
  const t = await buildTestApp({ config: { rateLimit: null } });
  try {
    for (let i = 0; i < 12; i++) {
      const bad = await t.as(null).withHeaders(WRONG_KEY).get('/users/me');
      assert.equal(bad.status, 401);
    }
    const results = await Promise.all(
      Array.from({ length: 201 }, () => t.as(t.fx.member).get('/users/me')),
    );
    assert.deepEqual(new Set(results.map((r) => r.status)), new Set([200]));
    const last = results[200];
    assert.deepEqual(limitHeaders(last), {
      limit: undefined,
      remaining: undefined,
      reset: undefined,
      retryAfter: undefined,
    });
    const login = await t.as(null).post('/fetch_api_key', {
      username: t.fx.member.delivery_email,
      password: t.fx.member.password,
    });
    assert.equal(login.status, 200);
    assert.deepEqual({ result: login.body.result, msg: login.body.msg }, OK);
  } finally {
    await t.close();
  }
});

const skip = TEST_REDIS_URL ? false : 'PARLEY_TEST_REDIS_URL is not set: no Redis to test with';

test('two processes sharing one Redis share the budgets', { skip }, async () => {
  const { t: a, setClock: setA } = await limitedApp({ max: 3, windowSeconds: 60 });
  const { t: b, setClock: setB } = await limitedApp({ max: 3, windowSeconds: 60 }, a);
  // Its own bus channel, hence its own counts: a third deployment on the same Redis.
  const c = await buildTestApp({
    config: {
      rateLimit: { max: 3, windowSeconds: 60 },
      redisChannel: `${a.ctx.config.redisChannel}:elsewhere`,
    },
    shareStoreWith: a,
  });
  c.ctx.clock = a.ctx.clock;
  try {
    assert.equal((await a.as(a.fx.member).get('/users/me')).status, 200);
    assert.equal((await b.as(b.fx.member).get('/users/me')).status, 200);
    const third = await a.as(a.fx.member).get('/users/me');
    assert.deepEqual(limitHeaders(third), headersOf(3, 0, T0 + 60));
    const refused = await b.as(b.fx.member).get('/users/me');
    assert.equal(refused.status, 429);
    assert.deepEqual(refused.body, RATE_LIMITED(60));

    const elsewhere = await c.as(c.fx.member).get('/users/me');
    assert.deepEqual(limitHeaders(elsewhere), headersOf(3, 2, T0 + 60));

    // One failed authentication a window at max 3: the second, on the other process, is refused.
    const failed = await a.as(null).withHeaders(WRONG_KEY).get('/users/me');
    assert.deepEqual([failed.status, limitHeaders(failed)], [401, headersOf(1, 0, T0 + 60)]);
    const again = await b.as(null).withHeaders(WRONG_KEY).get('/users/me');
    assert.deepEqual([again.status, again.body], [429, RATE_LIMITED(60)]);

    setA(T0 + 60);
    setB(T0 + 60);
    const next = await b.as(b.fx.member).get('/users/me');
    assert.equal(next.status, 200);
    assert.deepEqual(limitHeaders(next), headersOf(3, 2, T0 + 120));
  } finally {
    await c.close();
    await b.close();
    await a.close();
  }
});
