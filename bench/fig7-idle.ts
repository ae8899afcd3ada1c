// Figure 7, idle capacity: one process holds 19,000 parked polls (fewer where the open-file
// limit is lower) for 2 minutes. Every heartbeat is answered and the poll renewed at once;
// the figures are the server's event-loop delay, its CPU share, dropped or erroneous
// responses, and how evenly the heartbeats fall per second.
import { execFileSync } from 'node:child_process';
import { progress, seedAndStart, type BenchOptions, type FigureResult } from './lib/common.ts';
import { createQueues, pollPath, settle } from './lib/fanout.ts';
import { closeAll, openMany, type HttpConn, type Resp } from './lib/poller.ts';
import { watchCpu } from './lib/proc.ts';
import { round } from './lib/stats.ts';

function openFileLimit(): number {
  try {
    return Number(execFileSync('sh', ['-c', 'ulimit -n']).toString().trim()) || 1024;
  } catch {
    return 1024;
  }
}

export async function figure7(opts: BenchOptions): Promise<FigureResult[]> {
  // The bench holds one socket per poll too, so both processes need the files.
  const limit = openFileLimit();
  const wanted = opts.quick ? 5000 : 19_000;
  const n = Math.min(wanted, limit - 500);
  const holdSeconds = opts.quick ? 20 : 120;
  const heartbeatSeconds = opts.quick ? 5 : 45;
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
    let errors = 0;
    let dropped = 0;
    let heartbeats = 0;
    let holding = true;
    const perSecond = new Map<number, number>();
    const t0 = performance.now();
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
          if (!body || events.length === 0 || events.some((e) => e.type !== 'heartbeat')) errors++;
          else {
            heartbeats += events.length;
            pollers[i].lastEventId = events[events.length - 1].id;
            const sec = Math.floor((r.at - t0) / 1000);
            perSecond.set(sec, (perSecond.get(sec) ?? 0) + 1);
          }
          poll(i);
        },
        () => {
          if (holding) dropped++;
        },
      );
    };
    progress(`fig7: parking ${n} polls, holding ${holdSeconds}s (heartbeat ${heartbeatSeconds}s)`);
    for (let i = 0; i < n; i++) poll(i);
    await settle(parley.server);
    await parley.server.probe('reset');
    const close = watchCpu({ server: parley.server.pid, bench: process.pid });
    const parkedAt = performance.now();
    await new Promise((r) => setTimeout(r, holdSeconds * 1000));
    const stats = await parley.server.probe('stats');
    const window = close();
    holding = false;
    const cpuShare = window.cpu.server / window.wall;
    // Every whole second of the hold, quiet ones included.
    const first = Math.ceil((parkedAt - t0) / 1000);
    const counts = Array.from({ length: holdSeconds - 1 }, (_, i) => perSecond.get(first + i) ?? 0);
    const busiest = Math.max(0, ...counts);
    const mean = counts.reduce((a, b) => a + b, 0) / Math.max(1, counts.length);
    // Burstiness is read once heartbeats have begun: every poll parked at the start of the
    // hold, and none is due before a third of the interval (events/heartbeats.ts), so the
    // first seconds are quiet by design and would only lower the mean.
    const steady = counts.slice(counts.findIndex((c) => c > 0) + 1);
    const steadyBusiest = Math.max(0, ...steady);
    const steadyMean = steady.reduce((a, b) => a + b, 0) / Math.max(1, steady.length);

    const notes = [
      `${n} polls (open-file limit ${limit}); heartbeat interval ${heartbeatSeconds}s`,
      `${heartbeats} heartbeats; busiest second ${busiest}, mean ${round(mean, 1)}/s over the hold`,
      `server CPU ${round(window.cpu.server, 2)}s over ${round(window.wall, 1)}s; foreign ${round(window.foreignShare * 100, 0)}%${window.disturbed ? ' DISTURBED' : ''}`,
    ];
    const disturbed = window.disturbed ? 1 : 0;
    return [
      {
        figure: '7a',
        title: `event-loop delay, ${n} parked polls for ${holdSeconds}s`,
        metric: 'loop delay p99 ms',
        value: round(stats.loop.p99, 1),
        target: '<= 10',
        pass: stats.loop.p99 <= 10,
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
        pass: cpuShare <= 0.05,
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
