// Figure 9, a send to a large channel with history: POST /messages to a channel of 1,000
// members who each already have earlier messages, one send at a time, against raw
// better-sqlite3 inserting the same rows on a copy of the same database with Parley's
// pragmas and SQLite's own checkpoints. The other figures run on nearly empty tables, where
// a send's rows fill a few pages; here each member's new row lands on a page of its own in
// every table ordered by user, so the WAL fills a thousand times faster and where
// checkpoints run decides much of a send's time (docs/performance-history.md, session 23).
// No target: the issue names none. It records the ratio and the medians, and of a second
// floor that never checkpoints (the rows alone, what no server can keep up for long).
import { join } from 'node:path';
import { sendBody } from './fig2-send.ts';
import {
  authOf,
  describeWindow,
  progress,
  seedAndStart,
  type BenchOptions,
  type FigureResult,
} from './lib/common.ts';
import { HttpConn } from './lib/poller.ts';
import { watchCpu } from './lib/proc.ts';
import { runScript } from './lib/servers.ts';
import { median, pairedValue, percentile, round, type Pair } from './lib/stats.ts';

const MEMBERS = 1000;

export async function figure9(opts: BenchOptions): Promise<FigureResult> {
  const history = opts.quick ? 50 : 200;
  const sends = opts.quick ? 10 : 30;
  const parley = await seedAndStart('fig9', {
    users: MEMBERS,
    channels: [{ name: 'bench', subscribers: 'all', history }],
  });
  try {
    const sender = parley.seeded.users[0];
    const channelId = parley.seeded.channels[0].id;
    const auth = authOf(sender);
    const body = sendBody(channelId);
    const conn = await HttpConn.open(parley.server.port);
    let n = 0;
    const runParley = async (count: number) => {
      const close = watchCpu({ server: parley.server.pid, bench: process.pid });
      const times: number[] = [];
      for (let i = 0; i < count; i++) {
        const t = performance.now();
        const r = await conn.request('POST', '/api/v1/messages', auth, body(n++));
        times.push(r.at - t);
        if (r.status !== 200) throw new Error(`send failed: ${r.status} ${r.body.toString()}`);
      }
      return { times, window: close() };
    };
    const runFloor = async (count: number, checkpoints: boolean) => {
      const close = watchCpu({ bench: process.pid });
      const out = await runScript(
        'bench/lib/sqlite-floor.ts',
        [
          join(parley.dataDir, 'parley.sqlite3'),
          join(parley.dataDir, `floor-copy-${Date.now()}.sqlite3`),
          String(channelId),
          String(sender.id),
          'NORMAL',
          '60',
          String(count),
        ],
        checkpoints ? {} : { BENCH_FLOOR_NO_CHECKPOINTS: '1' },
        120_000,
      );
      const r = JSON.parse(out) as { sendMs: number[]; cpuSeconds: number; subscribers: number };
      if (r.subscribers !== MEMBERS) throw new Error(`floor saw ${r.subscribers} subscribers`);
      return { times: r.sendMs, window: close({ floor: r.cpuSeconds }) };
    };
    progress(`fig9: ${opts.rounds} rounds of ${sends} sends, ${history} messages of history`);
    await runParley(3);
    const pairs: Pair[] = [];
    const runs: Record<string, unknown>[] = [];
    for (let i = 0; i < opts.rounds; i++) {
      const f = await runFloor(sends, true);
      const rowsOnly = await runFloor(sends, false);
      const p = await runParley(sends);
      const floorMs = median(f.times);
      const rowsOnlyMs = median(rowsOnly.times);
      const parleyMs = median(p.times);
      pairs.push({
        ratio: parleyMs / floorMs,
        disturbed: f.window.disturbed || rowsOnly.window.disturbed || p.window.disturbed,
      });
      runs.push({
        floorP50Ms: round(floorMs, 1),
        floorP90Ms: round(percentile(f.times, 90), 1),
        rowsOnlyP50Ms: round(rowsOnlyMs, 1),
        parleyP50Ms: round(parleyMs, 1),
        parleyP90Ms: round(percentile(p.times, 90), 1),
        floor: describeWindow(f.window),
        rowsOnly: describeWindow(rowsOnly.window),
        parley: describeWindow(p.window),
      });
    }
    conn.close();
    const summary = pairedValue(pairs, () => true);
    return {
      figure: '9',
      title: `POST /messages, ${MEMBERS} members with ${history} earlier messages each, vs raw SQLite`,
      metric: 'send p50 ratio',
      target: 'report',
      ...summary,
      pass: null,
      notes: [
        `p50 per round, floor / floor without checkpoints / Parley (ms): ${runs.map((r) => `${String(r.floorP50Ms)} / ${String(r.rowsOnlyP50Ms)} / ${String(r.parleyP50Ms)}`).join(', ')}`,
      ],
      detail: { runs, history, sends },
    };
  } finally {
    await parley.server.stop();
  }
}
