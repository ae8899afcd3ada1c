// Figure 1, framework overhead: GET /users/me on Parley against a bare node:http server
// that checks the same Basic credential and answers the same bytes.
//
// Each round starts a fresh Parley process and a fresh floor. On this machine the same code
// served this route at 11 µs of CPU a request in one server process and at 14 or 22 µs in
// another, while the rounds of one process agreed; with one process per run, a run's median
// told which state that process fell into (docs/performance.md, item 3).
import {
  authOf,
  describeWindow,
  load,
  seedOnly,
  type BenchOptions,
  type FigureResult,
} from './lib/common.ts';
import { startFloor, startParley, type Server } from './lib/servers.ts';
import { round, pairedValue, type Pair } from './lib/stats.ts';

export async function figure1(opts: BenchOptions): Promise<FigureResult> {
  const fixture = await seedOnly('fig1', { users: 2, channels: [] });
  const auth = authOf(fixture.seeded.users[0]);
  /** Parley's answer, which the floor answers with: read from the first round's Parley. */
  let body = '';
  const run = (s: Server, duration: number) =>
    load(s, {
      path: '/api/v1/users/me',
      headers: { authorization: auth },
      connections: 10,
      duration,
    });
  const duration = opts.quick ? 2 : 3;
  const pairs: Pair[] = [];
  const runs: Record<string, unknown>[] = [];
  for (let i = 0; i < opts.rounds; i++) {
    // Started together: each start is mostly waiting on module loading, not measured.
    const started = await Promise.allSettled([
      startFloor('fig1-floor', {}),
      startParley('fig1', fixture.dataDir),
    ]);
    const [floor, parley] = started.map((s) => (s.status === 'fulfilled' ? s.value : null));
    try {
      for (const s of started) if (s.status === 'rejected') throw s.reason;
      if (!floor || !parley) throw new Error('fig1: a server did not start');
      if (!body) {
        const me = await fetch(`${parley.base}/api/v1/users/me`, {
          headers: { authorization: auth },
        });
        body = await me.text();
      }
      floor.send({ op: 'set', key: 'me', body, auth });
      // A warm-up of each fresh process, then the measured runs.
      await run(floor, 1);
      await run(parley, 1);
      const f = await run(floor, duration);
      const q0 = (await parley.probe('stats')).sqliteStatements;
      const p = await run(parley, duration);
      const q1 = (await parley.probe('stats')).sqliteStatements;
      const disturbed = f.window.disturbed || p.window.disturbed;
      pairs.push({ ratio: p.rate / f.rate, disturbed });
      runs.push({
        floorRate: round(f.rate, 0),
        parleyRate: round(p.rate, 0),
        floorCpuPerReqUs: round((f.window.cpu.server / f.result['2xx']) * 1e6, 1),
        parleyCpuPerReqUs: round((p.window.cpu.server / p.result['2xx']) * 1e6, 1),
        sqlPerRequest: round((q1 - q0) / Math.max(1, p.result.requests.total), 1),
        errors: p.result.errors + p.result.non2xx + f.result.errors + f.result.non2xx,
        floor: describeWindow(f.window),
        parley: describeWindow(p.window),
      });
    } finally {
      await Promise.all([floor?.stop(), parley?.stop()]);
    }
  }
  const perReq = (key: string) => runs.map((r) => r[key] as number).join('/');
  return {
    figure: '1',
    title: 'GET /users/me vs raw node:http',
    metric: 'throughput ratio',
    target: '>= 0.90',
    ...pairedValue(pairs, (m) => m >= 0.9),
    notes: [
      `body ${Buffer.byteLength(body)} B; 10 connections, ${duration}s runs; a fresh process of each per round`,
      `server CPU µs per request, floor ${perReq('floorCpuPerReqUs')}, Parley ${perReq('parleyCpuPerReqUs')}`,
    ],
    detail: { runs },
  };
}
