// Rate limits on the /api/v1 routes, counted in fixed windows of config.rateLimit's length:
//
//   user:<id>        requests by one authenticated user          max            (200 by default)
//   ip:<address>     requests without authentication, and those   ceil(max / 2)  (100)
//                    whose authentication fails, per address
//   fail:<address>   failed authentications per address           ceil(max / 20) (10)
//
// The reference server's defaults are 200 per user and 100 per address a minute; deriving the
// other two from PARLEY_RATE_LIMIT keeps one setting. Counts live in Redis when the deployment
// has one (so every process shares them) and in this process's memory otherwise. Windows are
// numbered from ctx.clock, read at every request, so tests move time instead of sleeping.
//
// GET /events counts like any request, as on the reference server, and that is safe for
// clients: a poll refused with 429 loses nothing (its queue keeps the events, and outlives a
// window by far), and a parked poll answers with every event queued so far, so a client makes
// one request per batch of events rather than one per event. Only the routes declared through
// http/route.ts are counted; unknown paths (404) and the icon and emoji files are not.
//
// @fastify/rate-limit is not used: it keys a request before the route authenticates it, cannot
// tell a failed authentication from any other request, and its Redis store times windows with
// Redis TTLs, which an injected clock cannot move.
import type { IncomingHttpHeaders } from 'node:http';
import ipaddr from 'ipaddr.js';
import { Redis } from 'ioredis';
import type { RateLimitConfig } from '../config.ts';
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { JsonableError } from '../lib/errors.ts';
import { isUnauthorized } from './auth.ts';

/**
 * What the limiter reads of a request and writes to its answer: Fastify's request and reply,
 * or http/direct-listener.ts's own for the GET requests it answers without Fastify.
 */
export interface LimitedRequest {
  /** The socket's remote address. */
  ip: string;
  headers: IncomingHttpHeaders;
}
export interface HeaderSink {
  header(name: string, value: string): unknown;
}

export interface RateLimitRules {
  windowMs: number;
  perUser: number;
  perAddress: number;
  /*
   * Failed authentications are limited far more tightly than requests: a client whose key or
   * password is wrong keeps failing, so a few 401s a minute tell it all it can learn, while
   * 10 a minute holds password guessing on /fetch_api_key to 14,400 tries a day per address
   * yet lets a person mistype a password several times. (The reference allows 5 password
   * failures per 30 minutes per username; counting per address instead means nobody can
   * lock a known user out of their own account from elsewhere.)
   */
  failedAuth: number;
}

export function rateLimitRules(config: RateLimitConfig): RateLimitRules {
  return {
    windowMs: config.windowSeconds * 1000,
    perUser: config.max,
    perAddress: Math.ceil(config.max / 2),
    failedAuth: Math.ceil(config.max / 20),
  };
}

/** One bucket's count in the current window. */
interface Verdict {
  limit: number;
  count: number;
  /** When the window ends, ms since the epoch. */
  resetMs: number;
}

const remaining = (v: Verdict): number => Math.max(0, v.limit - v.count);

/** Counts per window. A window's counts are never read once the clock has left it. */
interface CounterStore {
  increment(window: number, key: string, ttlMs: number): Promise<number>;
  /** The same at once, where the counts are this process's own (no Redis). */
  incrementNow?(window: number, key: string): number;
  read(window: number, key: string): Promise<number>;
  close(): Promise<void>;
}

function memoryCounters(): CounterStore {
  let current = -1;
  let counts = new Map<string, number>();
  // Dropping the previous window's counts when a new one starts keeps the map to one window.
  const mapFor = (window: number): Map<string, number> | null => {
    if (window > current) {
      current = window;
      counts = new Map();
    }
    return window === current ? counts : null;
  };
  const incrementNow = (window: number, key: string): number => {
    const map = mapFor(window);
    const n = (map?.get(key) ?? 0) + 1;
    map?.set(key, n);
    return n;
  };
  return {
    async increment(window, key) {
      return incrementNow(window, key);
    },
    incrementNow,
    async read(window, key) {
      return mapFor(window)?.get(key) ?? 0;
    },
    async close() {},
  };
}

async function redisCounters(url: string, prefix: string): Promise<CounterStore> {
  // No offline queue and a short timeout: while Redis is away requests are admitted at
  // once (see countOrAdmit) instead of waiting for it.
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 1000,
  });
  // Errors reach the caller of each command; without a listener ioredis also prints them.
  redis.on('error', () => {});
  try {
    await redis.connect();
  } catch (err) {
    // Otherwise the client keeps reconnecting and holds the process open.
    redis.disconnect();
    throw err;
  }
  const keyOf = (window: number, key: string) => `${prefix}:${window}:${key}`;
  return {
    async increment(window, key, ttlMs) {
      const k = keyOf(window, key);
      const results = await redis.multi().incr(k).pexpire(k, ttlMs).exec();
      const [err, n] = results?.[0] ?? [new Error('rate limit transaction discarded'), 0];
      if (err) throw err;
      return Number(n);
    },
    async read(window, key) {
      return Number((await redis.get(keyOf(window, key))) ?? 0);
    },
    async close() {
      redis.disconnect();
    },
  };
}

/**
 * The address a request came from: the socket's, or, when that is a loopback proxy, the
 * nearest address the proxy put in X-Forwarded-For (docs/deploying.md's nginx appends the
 * client's). Forwarded addresses from anywhere else are ignored, so a client that reaches
 * Parley directly cannot choose its own. IPv6 clients are counted by /64, the block one
 * subscriber usually gets.
 */
export function clientAddress(request: LimitedRequest): string {
  let addr = parseAddress(request.ip);
  if (addr?.range() === 'loopback') {
    const header = request.headers['x-forwarded-for'];
    const hops = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',');
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = parseAddress(hops[i]);
      if (!hop) break;
      addr = hop;
      if (hop.range() !== 'loopback') break;
    }
  }
  if (!addr) return request.ip;
  if (addr.kind() === 'ipv6') {
    const parts = (addr as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
    return `${parts.join(':')}::/64`;
  }
  return addr.toString();
}

function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const t = text.trim().replace(/^\[(.*)\]$/, '$1');
  if (ipaddr.IPv4.isValidFourPartDecimal(t) || ipaddr.IPv6.isValid(t)) return ipaddr.process(t);
  return null;
}

function setHeaders(reply: HeaderSink, v: Verdict): void {
  reply.header('X-RateLimit-Limit', String(v.limit));
  reply.header('X-RateLimit-Remaining', String(remaining(v)));
  // A UNIX time in seconds, as the reference server sends.
  reply.header('X-RateLimit-Reset', String(Math.ceil(v.resetMs / 1000)));
}

export interface RateLimiter {
  /**
   * Run the route's authentication within the limits, and count the request to its user; a
   * value rather than a promise when nothing had to wait (then a refusal is thrown, not
   * rejected).
   */
  authenticate(
    request: LimitedRequest,
    reply: HeaderSink,
    check: () => Actor | Promise<Actor>,
  ): Actor | Promise<Actor>;
  /** Count an unauthenticated request to its address before the route reads it. */
  admitAnonymous(request: LimitedRequest, reply: HeaderSink): Promise<void>;
  /** Run an unauthenticated route's handler; a 401 it answers is a failed authentication. */
  runAnonymous<T>(request: LimitedRequest, reply: HeaderSink, run: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

const unlimited: RateLimiter = {
  authenticate: (_request, _reply, check) => check(),
  admitAnonymous: async () => {},
  runAnonymous: (_request, _reply, run) => run(),
  close: async () => {},
};

/** The app's limiter: unlimited when PARLEY_RATE_LIMIT is off. */
export async function createRateLimiter(ctx: AppContext): Promise<RateLimiter> {
  const config = ctx.config.rateLimit;
  if (!config) return unlimited;
  // The bus channel names one deployment, so its processes share counts and tests do not.
  const store = ctx.config.redisUrl
    ? await redisCounters(ctx.config.redisUrl, `${ctx.config.redisChannel}:ratelimit`)
    : memoryCounters();
  return new WindowLimiter(ctx, rateLimitRules(config), store);
}

class WindowLimiter implements RateLimiter {
  /** The address bucket's verdict for an unauthenticated request, for the headers of its 401. */
  private readonly anonymous = new WeakMap<LimitedRequest, Verdict>();
  private warnedWindow = -1;

  constructor(
    private readonly ctx: AppContext,
    private readonly rules: RateLimitRules,
    private readonly store: CounterStore,
  ) {}

  /**
   * A known client with counts in memory is admitted at once, with no promise: polls come
   * this way, one per event batch and heartbeat, and the async path cost about a tenth of
   * the CPU per delivered event (docs/performance-history.md, figure 5 with limits on).
   */
  authenticate(
    request: LimitedRequest,
    reply: HeaderSink,
    check: () => Actor | Promise<Actor>,
  ): Actor | Promise<Actor> {
    let actor: Actor | Promise<Actor>;
    try {
      actor = check();
    } catch (err) {
      return this.refuseFailed(request, reply, err);
    }
    if (actor instanceof Promise) {
      return actor.then(
        (known) => this.admitUser(reply, known),
        (err: unknown) => this.refuseFailed(request, reply, err),
      );
    }
    const counted = this.countNow(`user:${actor.user.id}`, this.rules.perUser);
    if (!counted) return this.admitUser(reply, actor);
    this.settle(reply, [counted]);
    return actor;
  }

  private async admitUser(reply: HeaderSink, actor: Actor): Promise<Actor> {
    this.settle(reply, [await this.count(`user:${actor.user.id}`, this.rules.perUser)]);
    return actor;
  }

  private async refuseFailed(
    request: LimitedRequest,
    reply: HeaderSink,
    err: unknown,
  ): Promise<never> {
    if (!isUnauthorized(err)) throw err;
    // Credentials are checked before the failure budget, so users with a valid key are
    // never locked out by someone else failing at the same address; an API key is too
    // long to guess, so answering 429 rather than 401 from here on teaches nothing.
    const address = clientAddress(request);
    this.settle(reply, [
      await this.count(`fail:${address}`, this.rules.failedAuth),
      await this.count(`ip:${address}`, this.rules.perAddress),
    ]);
    throw err;
  }

  async admitAnonymous(request: LimitedRequest, reply: HeaderSink): Promise<void> {
    const address = clientAddress(request);
    const visits = await this.count(`ip:${address}`, this.rules.perAddress);
    this.anonymous.set(request, visits);
    this.settle(reply, [visits]);
    // A password is checked only while the address has failures left, so a locked-out
    // address cannot tell a right password from a wrong one.
    const failures = await this.peek(`fail:${address}`, this.rules.failedAuth);
    if (failures.count >= failures.limit) throw this.refuse(reply, failures);
  }

  async runAnonymous<T>(
    request: LimitedRequest,
    reply: HeaderSink,
    run: () => Promise<T>,
  ): Promise<T> {
    try {
      return await run();
    } catch (err) {
      if (isUnauthorized(err)) {
        const failures = await this.count(`fail:${clientAddress(request)}`, this.rules.failedAuth);
        const visits = this.anonymous.get(request);
        setHeaders(reply, tightest(visits ? [failures, visits] : [failures]));
      }
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.store.close();
  }

  private window(): { nowMs: number; window: number; resetMs: number } {
    const nowMs = this.ctx.clock.nowMs();
    const window = Math.floor(nowMs / this.rules.windowMs);
    return { nowMs, window, resetMs: (window + 1) * this.rules.windowMs };
  }

  private async count(key: string, limit: number): Promise<Verdict> {
    const { nowMs, window, resetMs } = this.window();
    const count = await this.orAdmit(window, () =>
      this.store.increment(window, key, resetMs - nowMs + 1000),
    );
    return { limit, count, resetMs };
  }

  /** count() without a promise, where the store can; null where it cannot (Redis). */
  private countNow(key: string, limit: number): Verdict | null {
    if (!this.store.incrementNow) return null;
    const { window, resetMs } = this.window();
    return { limit, count: this.store.incrementNow(window, key), resetMs };
  }

  private async peek(key: string, limit: number): Promise<Verdict> {
    const { window, resetMs } = this.window();
    return {
      limit,
      count: await this.orAdmit(window, () => this.store.read(window, key)),
      resetMs,
    };
  }

  /** A counter store that fails (Redis away) admits the request: limits are not worth an outage. */
  private async orAdmit(window: number, op: () => Promise<number>): Promise<number> {
    try {
      return await op();
    } catch (err) {
      if (this.warnedWindow !== window) {
        this.warnedWindow = window;
        this.ctx.log.warn({ err }, 'rate limit counts unavailable; admitting requests');
      }
      return 0;
    }
  }

  /** Report the tightest bucket in the headers, and refuse the request if one is exceeded. */
  private settle(reply: HeaderSink, verdicts: Verdict[]): void {
    const over = verdicts.find((v) => v.count > v.limit);
    if (over) throw this.refuse(reply, over);
    setHeaders(reply, tightest(verdicts));
  }

  private refuse(reply: HeaderSink, v: Verdict): JsonableError {
    const seconds = (v.resetMs - this.ctx.clock.nowMs()) / 1000;
    setHeaders(reply, v);
    reply.header('Retry-After', String(Math.max(1, Math.ceil(seconds))));
    return new JsonableError('API usage exceeded rate limit', 'RATE_LIMIT_HIT', 429, {
      'retry-after': seconds,
    });
  }
}

function tightest(verdicts: Verdict[]): Verdict {
  return verdicts.reduce((a, b) => (remaining(b) < remaining(a) ? b : a));
}
