// Figure 7, idle capacity: one process holds 19,000 parked polls (fewer where the open-file
// limit is lower) for 2 minutes. Every heartbeat is answered and the poll renewed at once;
// the figures are the server's event-loop delay, its CPU share, dropped or erroneous
// responses, and how evenly the heartbeats fall per second.
import { heartbeatTiming } from '../src/events/heartbeats.ts';
import { progress, seedAndStart, type BenchOptions, type FigureResult } from './lib/common.ts';
import { createQueues, pollPath, settle, type Poller } from './lib/fanout.ts';
import { closeAll, openMany, type HttpConn, type Resp } from './lib/poller.ts';
import {
  heldPollsWithin,
  threadTimes,
  threadTimesSince,
  watchCpu,
  type CpuWindow,
  type ThreadTimes,
} from './lib/proc.ts';
import type { ProbeStats } from './lib/probe.ts';
import { startFloor } from './lib/servers.ts';
import { passUnlessDisturbed, round, sleep } from './lib/stats.ts';

/** The config's heartbeat jitter (config.ts), which the period depends on. */
const HEARTBEAT_JITTER_MS = 10_000;

function holdSize(opts: BenchOptions) {
  return {
    ...heldPollsWithin(opts.quick ? 5000 : 19_000),
    holdSeconds: opts.quick ? 20 : 120,
    heartbeatSeconds: opts.quick ? 5 : 45,
  };
}

export async function figure7(opts: BenchOptions): Promise<FigureResult[]> {
  const { limit, n, holdSeconds, heartbeatSeconds } = holdSize(opts);
  const parley = await seedAndStart(
    'fig7',
    { users: Math.ceil(n / 2), channels: [] },
    { PARLEY_HEARTBEAT_SECONDS: String(heartbeatSeconds) },
  );
  let conns: HttpConn[] = [];
  try {
    progress(`fig7: creating ${n} queues`);
    const owners = Array.from(
      { length: n },
      (_, i) => parley.seeded.users[i % parley.seeded.users.length],
    );
    const pollers = await createQueues(parley.server, owners);
    conns = await openMany(parley.server.port, n);
    progress(`fig7: parking ${n} polls, holding ${holdSeconds}s (heartbeat ${heartbeatSeconds}s)`);
    const held = startHolding(conns, pollers);
    await settle(parley.server);
    const parkedAt = performance.now();
    // The loop is sampled in the first half of the hold, from when the first heartbeats are
    // due, and the CPU read in the second half, unsampled: the sampling itself costs an
    // idle process about 2 % of a core here (probe.ts). In a full run each part outlasts the
    // heartbeat period (50 s), so every poll is answered and renewed in both.
    const half = holdSeconds * 500;
    await sleep(HEARTBEAT_JITTER_MS / 2);
    await parley.server.probe('loop-start');
    const closeSampled = watchCpu({ server: parley.server.pid, bench: process.pid });
    await sleep(parkedAt + half - performance.now());
    const stats = await parley.server.probe('loop-end');
    const sampled = closeSampled();
    const close = watchCpu({ server: parley.server.pid, bench: process.pid });
    const threads0 = threadTimes(parley.server.pid);
    await sleep(parkedAt + holdSeconds * 1000 - performance.now());
    const window = close();
    const threads = threadTimesSince(threads0, parley.server.pid);
    const collected = gcSince(stats, await parley.server.probe('stats'));
    const { heartbeats, errors, dropped, perSecond, t0 } = held.stop();
    const cpuShare = window.cpu.server / window.wall;
    // Every whole second of the hold, quiet ones included.
    const first = Math.ceil((parkedAt - t0) / 1000);
    const counts = Array.from({ length: holdSeconds - 1 }, (_, i) => perSecond.get(first + i) ?? 0);
    const busiest = Math.max(0, ...counts);
    const mean = counts.reduce((a, b) => a + b, 0) / Math.max(1, counts.length);
    // Burstiness is read once heartbeats have begun: every poll parked at the start of the
    // hold, and none is due before half the jitter, 5 s (events/heartbeats.ts), so the
    // first seconds are quiet by design and would only lower the mean.
    const steady = counts.slice(counts.findIndex((c) => c > 0) + 1);
    const steadyBusiest = Math.max(0, ...steady);
    const steadyMean = steady.reduce((a, b) => a + b, 0) / Math.max(1, steady.length);

    // The heartbeats of the unsampled half, whose CPU the figure reads.
    const lateBeats = counts.slice(Math.round(half / 1000)).reduce((a, b) => a + b, 0);
    const notes = [
      `${n} polls (open-file limit ${limit}); heartbeat interval ${heartbeatSeconds}s`,
      `${heartbeats} heartbeats; busiest second ${busiest}, mean ${round(mean, 1)}/s over the hold`,
      `server CPU ${round(window.cpu.server, 2)}s over the second ${round(window.wall, 1)}s (${round((window.cpu.server / Math.max(1, lateBeats)) * 1e6, 0)} µs a heartbeat, ${round((window.kernel.server / Math.max(1, lateBeats)) * 1e6, 0)} of them in the kernel); foreign ${round(window.foreignShare * 100, 0)}%${window.disturbed ? ' DISTURBED' : ''}`,
      `its collections over the second half: ${collected}`,
      wakeupsAndThreads(window, threads),
      `in the ${round(sampled.wall, 1)}s before, with the loop sampled: ${round((sampled.cpu.server / sampled.wall) * 100, 2)}% of a core; foreign ${round(sampled.foreignShare * 100, 0)}%${sampled.disturbed ? ' DISTURBED' : ''}`,
    ];
    const disturbed = window.disturbed || sampled.disturbed ? 1 : 0;
    return [
      {
        figure: '7a',
        title: `event-loop delay, ${n} parked polls for ${holdSeconds}s`,
        metric: 'loop delay p99 ms',
        value: round(stats.loop.p99, 1),
        target: '<= 10',
        pass: passUnlessDisturbed(disturbed, stats.loop.p99 <= 10),
        pairs: 1 - disturbed,
        discarded: disturbed,
        notes: [...notes, `loop max ${round(stats.loop.max, 1)} ms`],
      },
      {
        figure: '7b',
        title: 'idle CPU while holding',
        metric: '% of one core',
        value: round(cpuShare * 100, 2),
        target: '<= 5',
        pass: passUnlessDisturbed(disturbed, cpuShare <= 0.05),
        pairs: 1 - disturbed,
        discarded: disturbed,
        notes: [],
      },
      {
        figure: '7d',
        title: 'heartbeat burstiness',
        metric: 'busiest second / mean per second',
        value: steady.length > 0 ? round(steadyBusiest / steadyMean, 2) : Number.NaN,
        target: '~1 (even)',
        pass: null,
        notes: [
          `${steady.length} s after the first heartbeat: busiest ${steadyBusiest}, mean ${round(steadyMean, 1)}, quietest ${Math.min(...steady)}`,
          `whole hold, quiet start included: busiest ${busiest}, mean ${round(mean, 1)} (${round(busiest / Math.max(1, mean), 2)})`,
        ],
        detail: { perSecond: counts },
      },
      {
        figure: '7c',
        title: 'dropped or erroneous responses',
        metric: 'count',
        value: errors + dropped,
        target: '0',
        pass: errors + dropped === 0,
        notes: [`${dropped} dropped, ${errors} erroneous`],
      },
    ];
  } finally {
    closeAll(conns);
    await settle(parley.server, 5000);
    await parley.server.stop();
  }
}

/** The polls' counts as they are held: every heartbeat is checked and the poll renewed. */
interface Holding {
  heartbeats: number;
  errors: number;
  dropped: number;
  perSecond: Map<number, number>;
  t0: number;
}

/** Park one poll on each connection and renew it after every answer until stop. */
function startHolding(
  conns: HttpConn[],
  pollers: Poller[],
): { counts: Readonly<Holding>; stop(): Holding } {
  const counts: Holding = {
    heartbeats: 0,
    errors: 0,
    dropped: 0,
    perSecond: new Map(),
    t0: performance.now(),
  };
  let holding = true;
  const poll = (i: number): void => {
    if (!holding) return;
    conns[i].request('GET', pollPath(pollers[i]), pollers[i].auth).then(
      (r: Resp) => {
        if (!holding) return;
        const body =
          r.status === 200
            ? (JSON.parse(r.body.toString()) as { events?: Array<{ id: number; type: string }> })
            : null;
        const events = body?.events ?? [];
        if (!body || events.length === 0 || events.some((e) => e.type !== 'heartbeat')) {
          counts.errors++;
        } else {
          counts.heartbeats += events.length;
          pollers[i].lastEventId = events[events.length - 1].id;
          const sec = Math.floor((r.at - counts.t0) / 1000);
          counts.perSecond.set(sec, (counts.perSecond.get(sec) ?? 0) + 1);
        }
        poll(i);
      },
      () => {
        if (holding) counts.dropped++;
      },
    );
  };
  for (let i = 0; i < conns.length; i++) poll(i);
  return {
    counts,
    stop() {
      holding = false;
      return counts;
    },
  };
}

/**
 * Figure 7's floor, run only when named (PARLEY_BENCH_ONLY=7f; the suite's 10 minutes have
 * no room for it): the bare node:http floor holding as many polls with Parley's heartbeat
 * period, every connection on its own phase from the start, so the whole window is steady.
 * It gives the CPU a heartbeat costs a server that does nothing else, against which 7b's
 * absolute 5 % can be read on the machine at hand.
 */
export async function figure7Floor(opts: BenchOptions): Promise<FigureResult[]> {
  const { n, holdSeconds, heartbeatSeconds } = holdSize(opts);
  const { periodMs } = heartbeatTiming({
    heartbeatMinMs: heartbeatSeconds * 1000,
    heartbeatJitterMs: HEARTBEAT_JITTER_MS,
  });
  const floor = await startFloor('fig7-floor', { BENCH_FLOOR_HEARTBEAT_MS: String(periodMs) });
  let conns: HttpConn[] = [];
  try {
    progress(`fig7f: parking ${n} polls on the floor, heartbeat period ${periodMs / 1000}s`);
    conns = await openMany(floor.port, n);
    const pollers: Poller[] = conns.map((_, i) => ({
      user: { id: i, email: '', apiKey: '' },
      auth: '',
      queueId: `floor:${i}`,
      lastEventId: -1,
    }));
    const held = startHolding(conns, pollers);
    // Past the parking's own work: the first heartbeats are due from the start.
    await sleep(Math.min(5000, periodMs / 4));
    const stats0 = await floor.probe('stats');
    const close = watchCpu({ server: floor.pid, bench: process.pid });
    const threads0 = threadTimes(floor.pid);
    const beatsBefore = held.counts.heartbeats;
    // One period: every connection's heartbeat once, at Parley's steady rate.
    await sleep(Math.min(holdSeconds * 1000, periodMs));
    const window = close();
    const threads = threadTimesSince(threads0, floor.pid);
    const collected = gcSince(stats0, await floor.probe('stats'));
    const counts = held.stop();
    const beats = counts.heartbeats - beatsBefore;
    const disturbed = window.disturbed ? 1 : 0;
    return [
      {
        figure: '7f',
        title: `floor: bare node:http holding ${n} polls with heartbeats`,
        metric: '% of one core',
        value: round((window.cpu.server / window.wall) * 100, 2),
        target: 'report',
        pass: null,
        pairs: 1 - disturbed,
        discarded: disturbed,
        notes: [
          `${beats} heartbeats in ${round(window.wall, 1)}s (${round(beats / window.wall, 0)}/s, period ${periodMs / 1000}s); server CPU ${round(window.cpu.server, 2)}s, ${round((window.cpu.server / Math.max(1, beats)) * 1e6, 0)} µs a heartbeat, ${round((window.kernel.server / Math.max(1, beats)) * 1e6, 0)} of them in the kernel; ${counts.errors + counts.dropped} dropped or erroneous; foreign ${round(window.foreignShare * 100, 0)}%${window.disturbed ? ' DISTURBED' : ''}`,
          `its collections: ${collected}`,
          wakeupsAndThreads(window, threads),
        ],
      },
    ];
  } finally {
    closeAll(conns);
    await floor.stop();
  }
}

/**
 * The collections between two of the probe's readings, and the minor page faults: V8's work
 * for what the heartbeats allocate, which the CPU a heartbeat includes, and the kernel's for
 * the memory V8 touches afresh.
 */
function gcSince(before: ProbeStats, after: ProbeStats): string {
  const minor = after.gc.minor - before.gc.minor;
  const major = after.gc.major - before.gc.major;
  const paused = after.gc.pausedMs - before.gc.pausedMs;
  const faults = after.minorFaults - before.minorFaults;
  return `${minor} minor, ${major} major, ${round(paused, 1)} ms on the main thread; ${faults} minor page faults`;
}

/**
 * How often the server's main thread woke, and what its other threads ran: a wakeup costs
 * an idle process 90-220 µs on a nested virtual machine, and V8's helper threads do the
 * marking of a full collection, both in the server's CPU (docs/performance.md, session 60).
 */
function wakeupsAndThreads(window: CpuWindow, threads: ThreadTimes | null): string {
  const woke = `its main thread woke ${round(window.wakeups.server / Math.max(0.001, window.wall), 1)} times a second`;
  return threads ? `${woke}; its other threads ran ${round(threads.othersRun, 0)} ms` : woke;
}
