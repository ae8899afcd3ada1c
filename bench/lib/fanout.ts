// Long-poll machinery shared by figures 4 to 7: create queues, park one poll per queue on
// its own connection, trigger a send, collect every response, and a fixed-rate probe of a
// light endpoint that runs alongside.
import type { SeedUser } from './seed.ts';
import { authOf } from './common.ts';
import { closeAll, HttpConn, openMany, type Resp } from './poller.ts';
import { processCpuSeconds } from './proc.ts';
import type { Server } from './servers.ts';
import { percentile, sleep } from './stats.ts';

export interface Poller {
  user: SeedUser;
  auth: string;
  queueId: string;
  lastEventId: number;
}

const EVENTS_QUERY = `event_types=${encodeURIComponent('["message"]')}`;

/** Create one queue per entry of owners (GET /events without queue_id, dont_block). */
export async function createQueues(
  server: Server,
  owners: SeedUser[],
  concurrency = 32,
): Promise<Poller[]> {
  const conns = await openMany(server.port, Math.min(concurrency, owners.length));
  const out: Poller[] = new Array(owners.length);
  let next = 0;
  const deadline = Date.now() + 600_000;
  await Promise.all(
    conns.map(async (c) => {
      while (next < owners.length && Date.now() < deadline) {
        const i = next++;
        const user = owners[i];
        const auth = authOf(user);
        const r = await c.request('GET', `/api/v1/events?dont_block=true&${EVENTS_QUERY}`, auth);
        const body = JSON.parse(r.body.toString()) as { queue_id?: string; result: string };
        if (r.status !== 200 || !body.queue_id) {
          throw new Error(`queue creation failed: ${r.status} ${r.body.toString().slice(0, 200)}`);
        }
        out[i] = { user, auth, queueId: body.queue_id, lastEventId: -1 };
      }
    }),
  );
  closeAll(conns);
  if (next < owners.length) throw new Error('queue creation overran 600 s');
  return out;
}

export const pollPath = (p: Poller): string =>
  `/api/v1/events?queue_id=${encodeURIComponent(p.queueId)}&last_event_id=${p.lastEventId}`;

/**
 * Wait until the server's CPU time stops growing (every request taken), at most maxMs: two
 * quiet 100 ms samples in a row. (Three made figure 5 wait over 30 s in all, once after
 * each of its sends, and the suite passed 10 minutes with PostgreSQL.)
 */
export async function settle(server: Server, maxMs = 20_000): Promise<void> {
  const deadline = Date.now() + maxMs;
  let last = processCpuSeconds(server.pid);
  let quiet = 0;
  while (Date.now() < deadline && quiet < 2) {
    await sleep(100);
    const now = processCpuSeconds(server.pid);
    quiet = now - last <= 0.01 ? quiet + 1 : 0;
    last = now;
  }
}

export interface Collected {
  latencies: number[];
  errors: number;
  dropped: number;
  /** Responses without exactly the expected message event (wrong or duplicate). */
  wrong: number;
}

/** Await each parked poll, timing it from t0; check each body with check. */
export async function collect(
  polls: Array<Promise<Resp>>,
  t0: () => number,
  check: (r: Resp, i: number) => boolean,
  timeoutMs: number,
): Promise<Collected> {
  const out: Collected = { latencies: [], errors: 0, dropped: 0, wrong: 0 };
  const timeout = sleep(timeoutMs).then(() => 'timeout' as const);
  await Promise.race([
    Promise.all(
      polls.map((p, i) =>
        p.then(
          (r) => {
            if (r.status !== 200) out.errors++;
            else if (!check(r, i)) out.wrong++;
            else out.latencies.push(r.at - t0());
          },
          () => {
            out.dropped++;
          },
        ),
      ),
    ),
    timeout,
  ]);
  const missing = polls.length - out.latencies.length - out.errors - out.wrong - out.dropped;
  out.dropped += missing;
  return out;
}

export interface ProbeResult {
  sent: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
}

/**
 * GET /api/v1/server_settings at a fixed rate on a few connections; latency counts from
 * the scheduled send time, so a stalled server cannot hide behind a late request.
 */
export async function startLatencyProbe(
  server: Server,
  perSecond: number,
  path = '/api/v1/server_settings',
): Promise<() => Promise<ProbeResult>> {
  const conns = await openMany(server.port, 8);
  const free = [...conns];
  const latencies: number[] = [];
  let errors = 0;
  let sent = 0;
  const inflight = new Set<Promise<void>>();
  const start = performance.now();
  let stopped = false;
  const loop = (async () => {
    const maxRequests = perSecond * 600;
    while (!stopped && sent < maxRequests) {
      const scheduled = start + (sent * 1000) / perSecond;
      const wait = scheduled - performance.now();
      if (wait > 0) await sleep(wait);
      sent++;
      const c = free.pop();
      if (!c) {
        // Every connection still waiting: the server is stalled; count it as an error.
        errors++;
        continue;
      }
      const p = c.request('GET', path, '').then(
        (r) => {
          if (r.status !== 200) errors++;
          latencies.push(r.at - scheduled);
          free.push(c);
        },
        () => {
          errors++;
        },
      );
      inflight.add(p);
      void p.finally(() => inflight.delete(p));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
    await Promise.race([Promise.all(inflight), sleep(5_000)]);
    closeAll(conns);
    return {
      sent,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: Math.max(0, ...latencies),
      errors,
    };
  };
}

export { HttpConn, openMany, closeAll };
