// Long-poll machinery shared by figures 4 to 7: create queues, park one poll per queue on
// its own connection, trigger a send, collect every response, and a fixed-rate probe of a
// light endpoint that runs alongside.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { SeedUser } from './seed.ts';
import { authOf } from './common.ts';
import { closeAll, HttpConn, openMany, type Resp } from './poller.ts';
import { countAsOurs, processCpuSeconds } from './proc.ts';
import type { Server } from './servers.ts';
import type { ProbeResult } from './latency-probe.ts';
import { sleep } from './stats.ts';

export interface Poller {
  user: SeedUser;
  auth: string;
  queueId: string;
  lastEventId: number;
}

/**
 * Collect the bench's own garbage before a timed round. The bench stamps each answer as its
 * loop reads it, so a collection of its own during the round delays the stamps as if the
 * server had been slow (`clientGcMs` in figure 4: 5-9 ms in some K = 1,000 rounds and 17-81
 * ms in every K = 10,000 round, on both sides). npm run bench gives the bench `--expose-gc`,
 * and a young generation of up to 64 MB, so that what a round of 10,000 answers allocates
 * fits in what this leaves empty; without the flag (the bench started some other way) the
 * rounds go as before.
 */
export function collectOwnGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
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

/**
 * Await each parked poll, timing it from t0; then check each body with check. The checks run
 * after the last answer: run as each answer came, they parsed Parley's answers (the floor's
 * are not parsed) on the event loop that stamps the next ones, and a K = 1,000 round's last
 * answer was stamped up to 35 ms after the server had written it, where the floor's came
 * within a millisecond (docs/performance-history.md, session 26).
 */
export async function collect(
  polls: Array<Promise<Resp>>,
  t0: () => number,
  check: (r: Resp, i: number) => boolean,
  timeoutMs: number,
): Promise<Collected> {
  const out: Collected = { latencies: [], errors: 0, dropped: 0, wrong: 0 };
  const answered: Array<{ r: Resp; i: number }> = [];
  const timeout = sleep(timeoutMs).then(() => 'timeout' as const);
  await Promise.race([
    Promise.all(
      polls.map((p, i) =>
        p.then(
          (r) => {
            if (r.status !== 200) out.errors++;
            else answered.push({ r, i });
          },
          () => {
            out.dropped++;
          },
        ),
      ),
    ),
    timeout,
  ]);
  for (const { r, i } of answered) {
    if (!check(r, i)) out.wrong++;
    else out.latencies.push(r.at - t0());
  }
  const missing = polls.length - out.latencies.length - out.errors - out.wrong - out.dropped;
  out.dropped += missing;
  return out;
}

/**
 * GET /api/v1/server_settings at a fixed rate, from a process of its own on the load core
 * (latency-probe.ts). Run in the bench's own process, the probe was timed by an event loop
 * that was at the same moment taking 10,000 fan-out answers and parsing each: its requests
 * went out up to 35 ms late, and that lateness counted as the server's.
 */
export async function startLatencyProbe(
  server: Server,
  perSecond: number,
  path = '/api/v1/server_settings',
): Promise<() => Promise<ProbeResult>> {
  const child = fork(PROBE_SCRIPT, [], {
    execArgv: ['--import', 'tsx'],
    env: {
      ...process.env,
      BENCH_PROBE_PORT: String(server.port),
      BENCH_PROBE_RATE: String(perSecond),
      BENCH_PROBE_PATH: path,
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  // Its CPU is the load generator's, like the bench's own, not foreign load.
  const uncount = countAsOurs(
    'probe',
    () => processCpuSeconds(child.pid ?? 0),
    (pid) => pid === child.pid,
  );
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`latency probe exited (${code})`))),
  );
  exited.catch(() => undefined);
  const message = <T>(): Promise<T> =>
    Promise.race([
      new Promise<T>((resolve) => child.once('message', (m) => resolve(m as T))),
      exited,
    ]);
  const startLimit = setTimeout(() => child.kill('SIGKILL'), 30_000);
  try {
    await message<{ ready: true }>();
  } catch (err) {
    uncount();
    throw err;
  } finally {
    clearTimeout(startLimit);
  }
  return async () => {
    const result = message<{ result: ProbeResult }>();
    child.send({ op: 'stop' });
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    try {
      return (await result).result;
    } finally {
      clearTimeout(timer);
      uncount();
    }
  };
}

export { HttpConn, openMany, closeAll };
export type { ProbeResult };

const PROBE_SCRIPT = fileURLToPath(new URL('./latency-probe.ts', import.meta.url));
