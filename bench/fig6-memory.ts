// Figure 6, memory: resident memory per registered queue with a parked poll against the
// bare floor's memory per parked request, and per registered queue without a connection
// (100,000 of them). Both servers run with --expose-gc and collect before each reading.
// K is 19,000 where the open-file limit allows: what V8 keeps outside the items themselves
// (the young generation, sized by its own heuristics up to 32 MB, and pages it has freed but
// not yet returned) moves a reading by megabytes either way whatever K is: the young
// generation alone moved a side's figure by up to 1.7 KB a poll at K = 10,000
// (docs/performance.md, Method, session 61).
import { progress, seedAndStart, type BenchOptions, type FigureResult } from './lib/common.ts';
import { createQueues, pollPath, settle, type Poller } from './lib/fanout.ts';
import { closeAll, openMany, type Resp } from './lib/poller.ts';
import type { ProbeStats } from './lib/probe.ts';
import { heldPollsWithin, processRssBytes } from './lib/proc.ts';
import { startFloor, type Server } from './lib/servers.ts';
import { round, pairedValue, type Pair } from './lib/stats.ts';

interface Reading {
  rss: number;
  heap: number;
  /** V8's heap pages in physical memory, by space, and node's memory outside the heap. */
  parts: Record<string, number>;
}

async function reading(server: Server): Promise<Reading> {
  const s: ProbeStats = await server.probe('gc');
  // /proc is the kernel's view; the probe's rss is the same number from inside.
  return {
    rss: processRssBytes(server.pid) || s.rss,
    heap: s.heapUsed,
    parts: { ...s.heapPhysical, external: s.external },
  };
}

/** What each part grew by from one reading to the next, per item, in KB. */
function partsGrowth(before: Reading, after: Reading, items: number): Record<string, number> {
  const growth: Record<string, number> = {};
  for (const [part, bytes] of Object.entries(after.parts)) {
    const grown = bytes - (before.parts[part] ?? 0);
    if (grown !== 0) growth[part] = kb(grown / items);
  }
  return growth;
}

/** Bytes per parked poll: open k connections, park one poll each, read, close. */
async function parkedBytes(server: Server, pollers: Poller[], k: number): Promise<Reading> {
  await settle(server);
  const before = await reading(server);
  const conns = await openMany(server.port, k);
  const polls: Array<Promise<Resp>> = conns.map((c, i) =>
    c.request('GET', pollPath(pollers[i]), pollers[i].auth),
  );
  await settle(server);
  const after = await reading(server);
  closeAll(conns);
  polls.forEach((p) => p.catch(() => undefined));
  // The next reading starts by settling; settling here as well only added time to the suite.
  return {
    rss: (after.rss - before.rss) / k,
    heap: (after.heap - before.heap) / k,
    parts: partsGrowth(before, after, k),
  };
}

const kb = (b: number) => round(b / 1024, 2);

export async function figure6(opts: BenchOptions): Promise<FigureResult[]> {
  const k = opts.quick ? 5000 : heldPollsWithin(19_000).n;
  const idleCount = opts.quick ? 20_000 : 100_000;
  const parley = await seedAndStart('fig6', { users: k, channels: [] });
  const floor = await startFloor('fig6-floor', {});
  try {
    // Queues without a connection first, on the fresh server: later rounds free memory the
    // allocator keeps or returns unpredictably, which would blur a small per-queue figure.
    const r0 = await reading(parley.server);
    progress(`fig6: creating ${idleCount} queues without a connection`);
    const owners = Array.from(
      { length: idleCount },
      (_, i) => parley.seeded.users[i % parley.seeded.users.length],
    );
    const created = await createQueues(parley.server, owners);
    const r1 = await reading(parley.server);
    progress(`fig6: ${opts.rounds + 1} rounds of ${k} parked polls on each side`);
    const idle = (r1.rss - r0.rss) / idleCount;
    const idleHeap = (r1.heap - r0.heap) / idleCount;
    const pollers = created.slice(0, k);
    // One unmeasured round each: the first parking grows the heap and the allocator's pools,
    // later ones reuse them, so only rounds after it compare like with like.
    await parkedBytes(floor, pollers, k);
    await parkedBytes(parley.server, pollers, k);
    const pairs: Pair[] = [];
    const runs: Record<string, unknown>[] = [];
    for (let i = 0; i < opts.rounds; i++) {
      const f = await parkedBytes(floor, pollers, k);
      const p = await parkedBytes(parley.server, pollers, k);
      const perQueue = idle + p.rss;
      // Memory readings are not CPU-bound: foreign load does not disturb them.
      pairs.push({ ratio: perQueue / f.rss, disturbed: false });
      runs.push({
        floorKB: kb(f.rss),
        parleyParkedKB: kb(p.rss),
        parleyQueueKB: kb(perQueue),
        heapKB: [kb(f.heap), kb(p.heap)],
        partsKB: { floor: f.parts, parley: p.parts },
      });
    }
    return [
      {
        figure: '6a',
        title: `memory per queue with a parked poll, K=${k}`,
        metric: 'RSS ratio (lower is better)',
        target: '<= 1.5',
        ...pairedValue(pairs, (m) => m <= 1.5),
        notes: [
          `KB per parked request floor ${runs.map((r) => r.floorKB).join('/')}; Parley per queue (idle ${kb(idle)} + parked) ${runs.map((r) => r.parleyQueueKB).join('/')}`,
        ],
        detail: { runs, idleKB: kb(idle) },
      },
      {
        figure: '6b',
        title: `memory per queue without a connection, ${idleCount} queues`,
        metric: 'KB per queue (RSS)',
        value: kb(idle),
        target: '<= 2',
        pass: idle <= 2048,
        notes: [
          `heap ${kb(idleHeap)} KB per queue; one measurement on a fresh server after a forced GC`,
        ],
      },
    ];
  } finally {
    await floor.stop();
    await parley.server.stop();
  }
}
