// Figure 4, fan-out latency: one message to a channel of K subscribers, each with one parked
// GET /events on its own connection, against a bare node:http server that parks K requests
// and answers them all on one trigger. During the largest fan-out, the server's event-loop
// delay and a GET /server_settings probe at 100/s.
import { PerformanceObserver } from 'node:perf_hooks';
import {
  authOf,
  progress,
  seedAndStart,
  type BenchOptions,
  type FigureResult,
  type Parley,
} from './lib/common.ts';
import {
  collect,
  collectOwnGarbage,
  createQueues,
  pollPath,
  settle,
  startLatencyProbe,
  type Collected,
  type Poller,
  type ProbeResult,
} from './lib/fanout.ts';
import { closeAll, HttpConn, openMany, type Resp } from './lib/poller.ts';
import type { ProbeStats } from './lib/probe.ts';
import {
  threadTimes,
  threadTimesSince,
  watchCpu,
  type CpuWindow,
  type ThreadTimes,
} from './lib/proc.ts';
import { startFloor, type Server } from './lib/servers.ts';
import { median, percentile, round, pairedValue, type Pair } from './lib/stats.ts';
import { sendBody } from './fig2-send.ts';

export interface FanoutRound {
  collected: Collected;
  p99: number;
  last: number;
  /**
   * The first receiver's time: what the trigger took before any answer went out (for Parley
   * the send), apart from the answering after it.
   */
  first: number;
  /**
   * The bench's own collection pauses (ms) while it took the answers: its loop stamps each
   * answer's arrival, so a pause there delays the stamps as if the server had been slow.
   */
  clientGcMs: number;
  window: CpuWindow;
  loop: ProbeStats['loop'];
  /** The server's collections in the round (from just before the send). */
  gc: ProbeStats['gc'];
  probe?: ProbeResult;
  /** Server CPU seconds from the trigger until the last response arrived. */
  deliveryCpu: number;
  /** Of deliveryCpu, the kernel's (ms), and the minor page faults over the same span. */
  kernel: { systemMs: number; faults: number };
  /** The server's threads over the same span (ms), where the kernel keeps their account. */
  threads: ThreadTimes | null;
  sample?: string;
}

export interface FanoutTarget {
  server: Server;
  /** One poller per receiver (Parley); the floor needs only the auth. */
  pollers: Poller[];
  trigger: { auth: string; body: (n: number) => string };
  parley: boolean;
}

let sendNo = 0;

/** Unmeasured K = 1,000 rounds of each side before the measured ones (see figure4). */
const WARMUP_ROUNDS = 7;
/**
 * More warm-up rounds, at most, while a server's other threads still run in a round: V8
 * compiling what only now got hot (see figure4).
 */
const WARMUP_MORE_ROUNDS = 8;
/** A round whose server's other threads ran less than this (ms) found V8 done compiling. */
const WARMUP_QUIET_MS = 1;
/** Quiet rounds in a row that end the warm-up: one came between two compiles in one run. */
const WARMUP_QUIET_ROUNDS = 2;

/** The other threads' run time in a round (ms); 0 where the kernel keeps no account. */
const othersRunMs = (r: FanoutRound): number => r.threads?.othersRun ?? 0;

/** The bench process's collection pauses from now: call the result for their sum (ms). */
function watchClientGc(): () => number {
  let pausedMs = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) pausedMs += entry.duration;
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => {
    // Entries are delivered in a later task: take the ones still buffered.
    for (const entry of observer.takeRecords()) pausedMs += entry.duration;
    observer.disconnect();
    return pausedMs;
  };
}

/** Park one poll per receiver, trigger one send, collect every response. */
export async function fanoutRound(
  t: FanoutTarget,
  k: number,
  withProbe: boolean,
): Promise<FanoutRound> {
  const conns = await openMany(t.server.port, k);
  const sender = await HttpConn.open(t.server.port);
  try {
    const polls: Array<Promise<Resp>> = conns.map((c, i) => {
      const p = t.pollers[i];
      return c.request('GET', pollPath(p), p.auth);
    });
    await settle(t.server);
    // Before the probe starts, whose process shares the bench's core.
    collectOwnGarbage();
    await t.server.probe('loop-start');
    const stopProbe = withProbe ? await startLatencyProbe(t.server, 100) : null;
    if (stopProbe) await new Promise((r) => setTimeout(r, 300));
    const clientGc = watchClientGc();
    const close = watchCpu({ server: t.server.pid, bench: process.pid });
    const before = await t.server.probe('stats');
    const threads0 = threadTimes(t.server.pid);
    const t0 = performance.now();
    const sent = sender.request(
      'POST',
      '/api/v1/messages',
      t.trigger.auth,
      t.trigger.body(sendNo++),
    );
    let sample: string | undefined;
    const collected = await collect(
      polls,
      () => t0,
      (r, i) => {
        if (!t.parley) return true;
        const body = JSON.parse(r.body.toString()) as {
          events?: Array<{ id: number; type: string }>;
        };
        const events = body.events ?? [];
        if (events.length !== 1 || events[0].type !== 'message') return false;
        t.pollers[i].lastEventId = events[0].id;
        sample ??= r.body.toString();
        return true;
      },
      60_000,
    );
    const threads = threadTimesSince(threads0, t.server.pid);
    const after = await t.server.probe('loop-end');
    const window = close();
    const sendResp = await sent;
    if (sendResp.status !== 200) collected.errors++;
    const probe = stopProbe ? await stopProbe() : undefined;
    return {
      collected,
      p99: percentile(collected.latencies, 99),
      last: Math.max(0, ...collected.latencies),
      first: collected.latencies.length > 0 ? Math.min(...collected.latencies) : 0,
      clientGcMs: clientGc(),
      window,
      loop: after.loop,
      gc: after.gc,
      probe,
      deliveryCpu: after.cpuSeconds - before.cpuSeconds,
      kernel: {
        systemMs: (after.systemSeconds - before.systemSeconds) * 1000,
        faults: after.minorFaults - before.minorFaults,
      },
      threads,
      sample,
    };
  } finally {
    closeAll(conns);
    sender.close();
  }
}

/**
 * K users, one queue each, and one channel per size: channel i has the first sizes[i]
 * users, so a send to it reaches exactly those queues. Each channel has one earlier
 * message: a channel's first message is also announced to everyone who can see the
 * channel (its first_message_id), a second notice to every queue that only the first
 * measured K = 10,000 round paid, 37-65 ms of its send's task (docs/performance-history.md,
 * item 4).
 */
export async function fanoutFixture(
  sizes: number[],
): Promise<{ parley: Parley; pollers: Poller[] }> {
  const users = Math.max(...sizes);
  const parley = await seedAndStart('fanout', {
    users,
    channels: sizes.map((k) => ({
      name: `fanout-${k}`,
      subscribers: Array.from({ length: k }, (_, i) => i),
      history: 1,
    })),
  });
  progress(`fanout: creating ${users} queues`);
  const pollers = await createQueues(parley.server, parley.seeded.users);
  return { parley, pollers };
}

/** A pair is left out when other load disturbed either of its runs. */
function pairDisturbed(r: { floor: FanoutRound; parley: FanoutRound }): boolean {
  return r.floor.window.disturbed || r.parley.window.disturbed;
}

/**
 * Each side's main thread per round: how long it ran and waited for the server's one core,
 * and how long the server's other threads (V8's compiler and collector) ran meanwhile. In an
 * undisturbed round the wait is the server's own threads, which foreign load does not count.
 */
function threadNotes(rounds: Array<{ floor: FanoutRound; parley: FanoutRound }>): string[] {
  if (rounds.some((r) => !r.floor.threads || !r.parley.threads)) return [];
  const list = (side: 'floor' | 'parley', key: 'mainRun' | 'mainWait' | 'othersRun') =>
    rounds.map((r) => round(r[side].threads![key], 1)).join('/');
  return [
    `main thread ran ms floor ${list('floor', 'mainRun')}, Parley ${list('parley', 'mainRun')}`,
    `main thread waited for the core ms floor ${list('floor', 'mainWait')}, Parley ${list('parley', 'mainWait')} (its other threads ran floor ${list('floor', 'othersRun')}, Parley ${list('parley', 'othersRun')})`,
  ];
}

function summariseK(k: number, rounds: Array<{ floor: FanoutRound; parley: FanoutRound }>) {
  const pairs: Pair[] = rounds.map((r) => ({
    ratio: r.parley.p99 / r.floor.p99,
    disturbed: pairDisturbed(r),
  }));
  const bad = rounds.reduce(
    (n, r) =>
      n +
      r.parley.collected.errors +
      r.parley.collected.dropped +
      r.parley.collected.wrong +
      r.floor.collected.errors +
      r.floor.collected.dropped,
    0,
  );
  const fmt = (x: number) => round(x, 1);
  const result: FigureResult = {
    figure: k > 1000 ? '4b' : '4a',
    title: `fan-out to K=${k} parked polls, p99 vs bare floor`,
    metric: 'p99 latency ratio (lower is better)',
    target: '<= 1.5',
    ...pairedValue(pairs, (m) => m <= 1.5 && bad === 0),
    notes: [
      `p99 ms floor ${rounds.map((r) => fmt(r.floor.p99)).join('/')}, Parley ${rounds.map((r) => fmt(r.parley.p99)).join('/')}; last receiver Parley ${rounds.map((r) => fmt(r.parley.last)).join('/')} ms`,
      `first receiver ms floor ${rounds.map((r) => fmt(r.floor.first)).join('/')}, Parley ${rounds.map((r) => fmt(r.parley.first)).join('/')}; the bench's own collections paused it ms floor ${rounds.map((r) => fmt(r.floor.clientGcMs)).join('/')}, Parley ${rounds.map((r) => fmt(r.parley.clientGcMs)).join('/')}`,
      ...threadNotes(rounds),
      `of its CPU in the kernel ms floor ${rounds.map((r) => fmt(r.floor.kernel.systemMs)).join('/')}, Parley ${rounds.map((r) => fmt(r.parley.kernel.systemMs)).join('/')}; minor page faults floor ${rounds.map((r) => r.floor.kernel.faults).join('/')}, Parley ${rounds.map((r) => r.parley.kernel.faults).join('/')}`,
      `errors/dropped/wrong responses: ${bad}`,
      `${rounds.length} rounds (${pairs.filter((x) => x.disturbed).length} disturbed)`,
    ],
    detail: {
      rounds: rounds.map((r) => ({
        floor: {
          p99: fmt(r.floor.p99),
          last: fmt(r.floor.last),
          first: fmt(r.floor.first),
          clientGcMs: fmt(r.floor.clientGcMs),
          cpu: r.floor.deliveryCpu,
          kernel: r.floor.kernel,
          threads: r.floor.threads,
          loop: r.floor.loop,
          gc: r.floor.gc,
        },
        parley: {
          p99: fmt(r.parley.p99),
          last: fmt(r.parley.last),
          first: fmt(r.parley.first),
          clientGcMs: fmt(r.parley.clientGcMs),
          cpu: r.parley.deliveryCpu,
          kernel: r.parley.kernel,
          threads: r.parley.threads,
          loop: r.parley.loop,
          gc: r.parley.gc,
          probe: r.parley.probe,
          collected: { ...r.parley.collected, latencies: undefined },
        },
        disturbed: pairDisturbed(r),
        foreign: [round(r.floor.window.foreignShare, 2), round(r.parley.window.foreignShare, 2)],
      })),
    },
  };
  return result;
}

export async function figure4(opts: BenchOptions): Promise<FigureResult[]> {
  const sizes = opts.quick ? [1000, 5000] : [1000, 10_000];
  const kMax = sizes[1];
  const { parley, pollers } = await fanoutFixture(sizes);
  const floor = await startFloor('fanout-floor', {});
  try {
    const ownerAuth = authOf(parley.seeded.users[0]);
    floor.send({ op: 'set', auth: '' });
    const targets = (channel: number) => {
      const trigger = { auth: ownerAuth, body: sendBody(channel) };
      return {
        parley: { server: parley.server, pollers, trigger, parley: true } as FanoutTarget,
        floor: { server: floor, pollers, trigger, parley: false } as FanoutTarget,
      };
    };
    // Warm up both, and give the floor Parley's response body to answer with. A fresh process
    // compiles its hot paths on V8's background threads, which share the server's one core:
    // after a single warm-up round, the next six K = 1,000 rounds had 12-117 ms of TurboFan
    // compiling each (--trace-opt), against 16-29 ms of the main thread's own work, so they
    // measured the compiler more than the fan-out (docs/performance.md, item 4).
    // Seven rounds were enough until the send's own code got hot only after them (a send a
    // round): since session 54 the warm-up goes on, up to eight more rounds, until two rounds
    // of each side in a row run with the server's other threads quiet. In the first measured
    // round of one run, TurboFan took 12.3 ms compiling the send's `planMessage` on a
    // background thread, and the main thread waited that long (docs/performance.md, item 4).
    const small = targets(parley.seeded.channels[0].id);
    const warmupOthersMs: number[][] = [];
    const most = opts.quick ? 1 : WARMUP_ROUNDS + WARMUP_MORE_ROUNDS;
    let quietRounds = 0;
    for (let i = 0; i < most; i++) {
      const warm = await fanoutRound(small.parley, sizes[0], false);
      if (warm.sample) floor.send({ op: 'set', key: 'event', body: warm.sample });
      const warmFloor = await fanoutRound(small.floor, sizes[0], false);
      warmupOthersMs.push([othersRunMs(warmFloor), othersRunMs(warm)].map((ms) => round(ms, 1)));
      const quiet = Math.max(othersRunMs(warm), othersRunMs(warmFloor)) < WARMUP_QUIET_MS;
      quietRounds = quiet ? quietRounds + 1 : 0;
      if (opts.quick || (i + 1 >= WARMUP_ROUNDS && quietRounds >= WARMUP_QUIET_ROUNDS)) break;
    }
    const warmupNote = `warm-up: ${warmupOthersMs.length} rounds of each side; the servers' other threads ran ms (floor, Parley) ${warmupOthersMs.map((w) => w.join(', ')).join(' / ')}`;
    const out: FigureResult[] = [];
    const loopRows: Array<{ loop: ProbeStats['loop']; probe?: ProbeResult; disturbed: boolean }> =
      [];
    for (const [ci, k] of sizes.entries()) {
      const { floor: floorTarget, parley: parleyTarget } = targets(parley.seeded.channels[ci].id);
      progress(`fanout: K=${k}, ${opts.rounds} rounds`);
      const rounds: Array<{ floor: FanoutRound; parley: FanoutRound }> = [];
      // A K = 1,000 round lasts tens of milliseconds, so a moment of other load marks it
      // disturbed; its pairs take about 1.6 s, so up to as many again are run while fewer
      // than opts.rounds are clean (the 10,000 rounds take 9 s a pair: no extra ones).
      const extra = k === kMax ? 0 : opts.rounds;
      let clean = 0;
      for (let i = 0; i < opts.rounds || (i < opts.rounds + extra && clean < opts.rounds); i++) {
        const f = await fanoutRound(floorTarget, k, false);
        const p = await fanoutRound(parleyTarget, k, k === kMax);
        rounds.push({ floor: f, parley: p });
        if (!pairDisturbed({ floor: f, parley: p })) clean++;
        if (k === kMax) {
          loopRows.push({ loop: p.loop, probe: p.probe, disturbed: p.window.disturbed });
        }
      }
      const summary = summariseK(k, rounds);
      if (ci === 0) summary.notes.push(warmupNote);
      out.push(summary);
    }
    const clean = loopRows.filter((r) => !r.disturbed);
    const used = clean.length > 0 ? clean : loopRows;
    const loopP99 = median(used.map((r) => r.loop.p99));
    const probeP99 = median(used.map((r) => r.probe?.p99 ?? NaN));
    const probeErrors = used.reduce((n, r) => n + (r.probe?.errors ?? 0), 0);
    out.push({
      figure: '4c',
      title: `event-loop delay during K=${kMax} fan-out`,
      metric: 'loop delay p99 ms (median of rounds)',
      value: round(loopP99, 1),
      min: round(Math.min(...used.map((r) => r.loop.p99)), 1),
      max: round(Math.max(...used.map((r) => r.loop.p99)), 1),
      target: '<= 20',
      pass: loopP99 <= 20,
      pairs: clean.length,
      discarded: loopRows.length - clean.length,
      notes: [`loop max ms ${used.map((r) => round(r.loop.max, 1)).join('/')}`],
    });
    out.push({
      figure: '4d',
      title: `GET /server_settings at 100/s during K=${kMax} fan-out`,
      metric: 'probe p99 ms (median of rounds)',
      value: round(probeP99, 1),
      min: round(Math.min(...used.map((r) => r.probe?.p99 ?? NaN)), 1),
      max: round(Math.max(...used.map((r) => r.probe?.p99 ?? NaN)), 1),
      target: '<= 25',
      pass: probeP99 <= 25 && probeErrors === 0,
      pairs: clean.length,
      discarded: loopRows.length - clean.length,
      notes: [
        `probe errors ${probeErrors}; window: from 300 ms before the send until the last receiver has its response`,
      ],
    });
    return out;
  } finally {
    await floor.stop();
    await parley.server.stop();
  }
}
