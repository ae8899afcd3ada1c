// Figure 1, framework overhead: GET /users/me on Parley against a bare node:http server
// that checks the same Basic credential and answers the same bytes.
import {
  authOf,
  describeWindow,
  load,
  seedAndStart,
  type BenchOptions,
  type FigureResult,
} from './lib/common.ts';
import { startFloor } from './lib/servers.ts';
import { round, pairedValue, type Pair } from './lib/stats.ts';

export async function figure1(opts: BenchOptions): Promise<FigureResult> {
  const parley = await seedAndStart('fig1', { users: 2, channels: [] });
  const floor = await startFloor('fig1-floor', {});
  const notes: string[] = [];
  try {
    const owner = parley.seeded.users[0];
    const auth = authOf(owner);
    const body = await (
      await fetch(`${parley.server.base}/api/v1/users/me`, { headers: { authorization: auth } })
    ).text();
    floor.send({ op: 'set', key: 'me', body, auth });
    const run = (s: typeof floor, duration: number) =>
      load(s, {
        path: '/api/v1/users/me',
        headers: { authorization: auth },
        connections: 10,
        duration,
      });
    const duration = opts.quick ? 2 : 3;
    await run(floor, 1);
    await run(parley.server, 1);
    const pairs: Pair[] = [];
    const runs: Record<string, unknown>[] = [];
    for (let i = 0; i < opts.rounds; i++) {
      const f = await run(floor, duration);
      const q0 = (await parley.server.probe('stats')).sqliteStatements;
      const p = await run(parley.server, duration);
      const q1 = (await parley.server.probe('stats')).sqliteStatements;
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
    }
    notes.push(`body ${Buffer.byteLength(body)} B; 10 connections, ${duration}s runs`);
    return {
      figure: '1',
      title: 'GET /users/me vs raw node:http',
      metric: 'throughput ratio',
      target: '>= 0.90',
      ...pairedValue(pairs, (m) => m >= 0.9),
      notes,
      detail: { runs },
    };
  } finally {
    await floor.stop();
    await parley.server.stop();
  }
}
