// `npm run bench`: every figure of docs/performance.md as a ratio against a floor measured
// in the same run. PARLEY_BENCH_ONLY=1,4 runs some figures (and 7f, figure 7's floor, which
// runs only when named); PARLEY_BENCH_QUICK=1 runs fewer rounds and smaller sizes (a smoke
// run, not a measurement); PARLEY_BENCH_ROUNDS overrides the rounds; PARLEY_BENCH_PROFILE=1
// writes CPU profiles of the Parley servers to bench/results/profiles. Results: a table on
// stdout, JSON under bench/results/.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchOptions, FigureResult } from './lib/common.ts';
import { canPin, FOREIGN_LIMIT, foreignLoadSource, hasProc, pinSelf } from './lib/proc.ts';
import { killAll, removeWorkDir, RESULTS_DIR } from './lib/servers.ts';
import { figure1 } from './fig1-overhead.ts';
import { figure2 } from './fig2-send.ts';
import { figure3 } from './fig3-durability.ts';
import { figure4 } from './fig4-fanout.ts';
import { figure5 } from './fig5-delivery-cpu.ts';
import { figure6 } from './fig6-memory.ts';
import { figure7, figure7Floor } from './fig7-idle.ts';
import { figure8 } from './fig8-register.ts';
import { figure9 } from './fig9-history.ts';
import { figureInstructions } from './figi-instructions.ts';

const FIGURES: Record<string, (o: BenchOptions) => Promise<FigureResult | FigureResult[]>> = {
  '1': figure1,
  '2': figure2,
  '3': figure3,
  '4': figure4,
  '5': figure5,
  '6': figure6,
  '7': figure7,
  '7f': figure7Floor,
  '8': figure8,
  '9': figure9,
  i: figureInstructions,
};

/** Figures run only when PARLEY_BENCH_ONLY names them. */
const ONLY_WHEN_NAMED = new Set(['7f', 'i']);

/** The whole suite must end: a figure that overruns this is abandoned. */
const FIGURE_TIMEOUT_MS = 480_000;
/** Figure i runs its servers under valgrind, about fifty times slower. */
const LONGER_TIMEOUTS_MS: Record<string, number> = { i: 1_800_000 };

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + ' '.repeat(n - s.length);
}

function table(rows: FigureResult[]): string {
  const head = ['fig', 'what', 'metric', 'value', 'min-max', 'target', 'ok', 'pairs (disc.)'];
  const body = rows.map((r) => [
    r.figure,
    r.title,
    r.metric,
    String(r.value),
    r.min === undefined ? '' : `${r.min}-${r.max}`,
    r.target,
    r.pass === null ? '?' : r.pass ? 'yes' : 'NO',
    r.pairs === undefined ? '' : `${r.pairs} (${r.discarded})`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => pad(c, widths[i])).join(' | ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('-|-'), ...body.map(line)].join('\n');
}

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, rej) => {
    timer = setTimeout(() => rej(new Error(`${what} overran ${ms / 1000}s`)), ms);
  });
  try {
    return await Promise.race([p, t]);
  } finally {
    clearTimeout(timer);
  }
}

async function main(): Promise<void> {
  const quick = process.env.PARLEY_BENCH_QUICK === '1';
  const only = (process.env.PARLEY_BENCH_ONLY ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const rounds = Number(process.env.PARLEY_BENCH_ROUNDS) || (quick ? 3 : 5);
  const opts: BenchOptions = { quick, rounds };
  pinSelf();
  const started = new Date();
  console.log(
    `parley bench: ${quick ? 'QUICK smoke run' : 'full run'}, ${rounds} rounds per figure; ` +
      `pinning ${canPin ? 'server to cpu0, load to cpu1' : 'unavailable'}; ` +
      `disturbance check ${hasProc ? `on (foreign load > ${FOREIGN_LIMIT * 100}% of a core, from ${foreignLoadSource}, or steal > 5%)` : 'unavailable (no /proc)'}`,
  );
  const results: FigureResult[] = [];
  const failures: Array<{ figure: string; error: string }> = [];
  for (const [id, fn] of Object.entries(FIGURES)) {
    if (only.length > 0 ? !only.includes(id) : ONLY_WHEN_NAMED.has(id)) continue;
    const t0 = Date.now();
    console.log(`\n== figure ${id}`);
    try {
      const limitMs = LONGER_TIMEOUTS_MS[id] ?? FIGURE_TIMEOUT_MS;
      const out = await withTimeout(fn(opts), limitMs, `figure ${id}`);
      for (const r of Array.isArray(out) ? out : [out]) {
        results.push(r);
        console.log(
          `  ${r.title}: ${r.metric} ${r.value} (target ${r.target})${r.notes.length ? `\n    ${r.notes.join('\n    ')}` : ''}`,
        );
      }
    } catch (err) {
      const msg = err instanceof Error ? (err.stack ?? err.message) : String(err);
      failures.push({ figure: id, error: msg });
      console.error(`  figure ${id} failed: ${msg}`);
      killAll();
    }
    console.log(`  (${((Date.now() - t0) / 1000).toFixed(0)}s)`);
  }
  console.log(`\n${table(results)}`);
  const disturbed = results.reduce((n, r) => n + (r.discarded ?? 0), 0);
  console.log(
    `\n${disturbed} disturbed run pairs discarded.${quick ? ' QUICK mode: smoke numbers only.' : ''}`,
  );
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `bench-${started.toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    file,
    JSON.stringify(
      {
        started: started.toISOString(),
        finished: new Date().toISOString(),
        quick,
        rounds,
        pinned: canPin,
        node: process.version,
        results,
        failures,
      },
      null,
      2,
    ),
  );
  console.log(`results: ${file}`);
  if (failures.length > 0) process.exitCode = 1;
}

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.error(`\n${signal}: stopping every process the bench started`);
    killAll();
    removeWorkDir();
    process.exit(130);
  });
}

try {
  await main();
} finally {
  killAll();
  removeWorkDir();
}
