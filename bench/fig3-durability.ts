// Figure 3, durability nearly free: send throughput under 50 concurrent senders with SQLite
// synchronous=FULL against the same server with NORMAL; with PARLEY_BENCH_DATABASE_URL,
// PostgreSQL synchronous_commit on against off, and Parley on PostgreSQL against a raw pg
// script inserting the same rows 100 messages per transaction.
import pg from 'pg';
import {
  describeWindow,
  seedAndStart,
  type BenchOptions,
  type FigureResult,
  type Parley,
} from './lib/common.ts';
import { countAsOurs, isPostgres, postgresCpuSeconds, watchCpu } from './lib/proc.ts';
import { runScript } from './lib/servers.ts';
import { round, pairedValue, type Pair } from './lib/stats.ts';
import { countRows, sendLoad } from './fig2-send.ts';

const SPEC = { users: 10, channels: [{ name: 'bench', subscribers: 'all' as const }] };
const SENDERS = 50;

/** Alternate two servers under the same send load; ratio = b / a. */
async function alternate(
  a: Parley,
  b: Parley,
  opts: BenchOptions,
): Promise<{ pairs: Pair[]; runs: Record<string, unknown>[] }> {
  // 50 senders on a slow server need a few seconds before the counts mean anything.
  const duration = 3;
  await sendLoad(a.server, a, SENDERS, 1);
  await sendLoad(b.server, b, SENDERS, 1);
  const pairs: Pair[] = [];
  const runs: Record<string, unknown>[] = [];
  for (let i = 0; i < opts.rounds; i++) {
    const ra = await sendLoad(a.server, a, SENDERS, duration);
    const rb = await sendLoad(b.server, b, SENDERS, duration);
    pairs.push({ ratio: rb.rate / ra.rate, disturbed: ra.window.disturbed || rb.window.disturbed });
    runs.push({
      [a.server.name]: round(ra.rate, 0),
      [b.server.name]: round(rb.rate, 0),
      errors: ra.result.errors + ra.result.non2xx + rb.result.errors + rb.result.non2xx,
      [`${a.server.name}Window`]: describeWindow(ra.window),
      [`${b.server.name}Window`]: describeWindow(rb.window),
    });
  }
  return { pairs, runs };
}

function row(
  figure: string,
  title: string,
  target: string,
  min: number,
  pairs: Pair[],
  notes: string[],
  detail: Record<string, unknown>,
): FigureResult {
  return {
    figure,
    title,
    metric: 'throughput ratio',
    target,
    ...pairedValue(pairs, (m) => m >= min),
    notes,
    detail,
  };
}

async function sqliteFigure(opts: BenchOptions): Promise<FigureResult> {
  const normal = await seedAndStart('fig3-normal', SPEC, { PARLEY_SQLITE_SYNCHRONOUS: 'NORMAL' });
  const full = await seedAndStart('fig3-full', SPEC, { PARLEY_SQLITE_SYNCHRONOUS: 'FULL' });
  try {
    const { pairs, runs } = await alternate(normal, full, opts);
    const rows = [countRows(normal), countRows(full)];
    const ok = rows.every((r) => r.userMessages === r.messages * 10);
    return row(
      '3a',
      'SQLite synchronous FULL vs NORMAL, 50 senders',
      '>= 0.80',
      0.8,
      pairs,
      [
        `${SENDERS} concurrent senders; per-user rows ${ok ? 'consistent' : 'INCONSISTENT'} (${rows.map((r) => r.messages).join(' / ')} messages)`,
      ],
      { runs, rows },
    );
  } finally {
    await normal.server.stop();
    await full.server.stop();
  }
}

/** A fresh database on the PostgreSQL server of baseUrl; dropped by the returned function. */
async function freshDatabase(baseUrl: string, name: string) {
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  const db = `parley_bench_${name}_${process.pid}`;
  await admin.query(`DROP DATABASE IF EXISTS ${db}`);
  await admin.query(`CREATE DATABASE ${db}`);
  await admin.end();
  const url = new URL(baseUrl);
  url.pathname = `/${db}`;
  return {
    url: url.href,
    async drop() {
      const c = new pg.Client({ connectionString: baseUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
      await c.end();
    },
  };
}

async function pgFigures(opts: BenchOptions, baseUrl: string): Promise<FigureResult[]> {
  const on = await freshDatabase(baseUrl, 'on');
  const off = await freshDatabase(baseUrl, 'off');
  const offUrl = new URL(off.url);
  offUrl.searchParams.set('options', '-c synchronous_commit=off');
  let syncOn: Parley | null = null;
  let syncOff: Parley | null = null;
  const stopCounting = countAsOurs('postgres', postgresCpuSeconds, isPostgres);
  try {
    syncOn = await seedAndStart('fig3-pg-on', SPEC, { PARLEY_DATABASE_URL: on.url });
    syncOff = await seedAndStart('fig3-pg-off', SPEC, { PARLEY_DATABASE_URL: offUrl.href });
    const durability = await alternate(syncOff, syncOn, opts);
    const duration = 3;
    const floorPairs: Pair[] = [];
    const floorRuns: Record<string, unknown>[] = [];
    for (let i = 0; i < opts.rounds; i++) {
      const close = watchCpu({ bench: process.pid });
      const out = await runScript(
        'bench/lib/pg-floor.ts',
        [
          on.url,
          String(syncOn.seeded.channels[0].id),
          String(syncOn.seeded.users[0].id),
          String(duration),
        ],
        {},
        60_000,
      );
      const f = JSON.parse(out) as { messages: number; seconds: number; cpuSeconds: number };
      const fw = close({ floor: f.cpuSeconds });
      const p = await sendLoad(syncOn.server, syncOn, SENDERS, duration);
      const floorRate = f.messages / f.seconds;
      floorPairs.push({ ratio: p.rate / floorRate, disturbed: fw.disturbed || p.window.disturbed });
      floorRuns.push({
        floorRate: round(floorRate, 0),
        parleyRate: round(p.rate, 0),
        floor: describeWindow(fw),
        parley: describeWindow(p.window),
      });
    }
    return [
      row(
        '3b',
        'PostgreSQL synchronous_commit on vs off',
        '>= 0.80',
        0.8,
        durability.pairs,
        [`${SENDERS} concurrent senders`],
        { runs: durability.runs },
      ),
      row(
        '3c',
        'PostgreSQL send vs raw pg, 100 messages/txn',
        '>= 0.50',
        0.5,
        floorPairs,
        ['floor: one client, 100 messages and their per-user rows per transaction'],
        { runs: floorRuns },
      ),
    ];
  } finally {
    stopCounting();
    await syncOn?.server.stop();
    await syncOff?.server.stop();
    await on.drop();
    await off.drop();
  }
}

export async function figure3(opts: BenchOptions): Promise<FigureResult[]> {
  const out = [await sqliteFigure(opts)];
  const url = process.env.PARLEY_BENCH_DATABASE_URL;
  if (url) out.push(...(await pgFigures(opts, url)));
  else {
    out.push({
      figure: '3b/3c',
      title: 'PostgreSQL figures',
      metric: 'skipped',
      value: NaN,
      target: 'set PARLEY_BENCH_DATABASE_URL',
      pass: null,
      notes: ['PARLEY_BENCH_DATABASE_URL is not set'],
    });
  }
  return out;
}
