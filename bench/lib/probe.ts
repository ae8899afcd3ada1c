// Preloaded into every server the bench starts (Parley and the floors, `--import`): it
// answers the bench over the IPC channel with the event-loop delay histogram, CPU and
// memory, so Parley needs no bench-only code of its own.
import { createRequire } from 'node:module';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { keepForLife } from '../../src/store/sqlite-lifetime.ts';
import { tracing } from './tracing.ts';

export interface ProbeStats {
  loop: { p50: number; p99: number; max: number; mean: number; count: number };
  cpuSeconds: number;
  /**
   * Of cpuSeconds, the kernel's (getrusage), and the minor page faults so far: on a machine
   * whose kernel is slow (a nested virtual machine) they are where two servers doing the same
   * work part (docs/performance.md, item 4, session 59).
   */
  systemSeconds: number;
  minorFaults: number;
  rss: number;
  heapUsed: number;
  /**
   * Where the resident memory is, for figure 6: V8's heap pages in physical memory by space
   * (new_space, old_space, ...), and the memory node's buffers hold outside the heap.
   */
  heapPhysical: Record<string, number>;
  external: number;
  /**
   * V8's collections since the window began ('loop-start'): how many of each kind and how
   * long they held the main thread (ms). Marking on V8's other threads is not in it.
   */
  gc: { minor: number; major: number; incremental: number; pausedMs: number };
  /** SQLite statements run so far (one per query Kysely runs). */
  sqliteStatements: number;
}

let statements = 0;
try {
  // Count statement runs where the server loads better-sqlite3 from (the project's copy).
  // Runs, not prepares: Parley reuses prepared statements, so prepares undercount queries.
  const Database = createRequire(`${process.cwd()}/package.json`)('better-sqlite3') as new (
    file: string,
  ) => { prepare(sql: string): object; close(): void };
  // Kept, as Parley keeps its own: on some runtimes freeing them aborts the process.
  const scratch = keepForLife(new Database(':memory:'));
  const Statement = Object.getPrototypeOf(keepForLife(scratch.prepare('SELECT 1'))) as Record<
    string,
    (...args: unknown[]) => unknown
  >;
  scratch.close();
  for (const method of ['run', 'get', 'all', 'iterate']) {
    const original = Statement[method];
    Statement[method] = function (this: unknown, ...args: unknown[]) {
      statements++;
      return original.apply(this, args);
    };
  }
} catch {
  // No better-sqlite3 here: the count stays 0.
}

// Sampled only between 'loop-start' and 'loop-end': its timer wakes the loop 200 times a
// second, which on this workplace's machines cost an idle process about 2 % of a core and
// kept its event-loop utilization above 1 % (docs/performance.md, Method). That was the
// bench's own load on the server it measured, in every figure.
const histogram = monitorEventLoopDelay({ resolution: 5 });

const ms = (ns: number): number => ns / 1e6;

const gcs = { minor: 0, major: 0, incremental: 0, pausedMs: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = (entry as { detail?: { kind?: number } }).detail?.kind;
    if (kind === constants.NODE_PERFORMANCE_GC_MINOR) gcs.minor++;
    else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) gcs.major++;
    else if (kind === constants.NODE_PERFORMANCE_GC_INCREMENTAL) gcs.incremental++;
    gcs.pausedMs += entry.duration;
  }
}).observe({ entryTypes: ['gc'] });

function stats(): ProbeStats {
  const usage = process.resourceUsage();
  const mem = process.memoryUsage();
  return {
    loop: {
      p50: ms(histogram.percentile(50)),
      p99: ms(histogram.percentile(99)),
      max: ms(histogram.max),
      mean: ms(histogram.mean),
      count: histogram.count,
    },
    cpuSeconds: (usage.userCPUTime + usage.systemCPUTime) / 1e6,
    systemSeconds: usage.systemCPUTime / 1e6,
    minorFaults: usage.minorPageFault,
    rss: mem.rss,
    heapUsed: mem.heapUsed,
    heapPhysical: Object.fromEntries(
      getHeapSpaceStatistics().map((space) => [space.space_name, space.physical_space_size]),
    ),
    external: mem.external,
    gc: { ...gcs },
    sqliteStatements: statements,
  };
}

/**
 * With PARLEY_BENCH_PROFILE=windows, a CPU profile of each window the event loop is sampled
 * in (figure 4's rounds, figure 7's hold), sampled every 50 µs, written to
 * bench/results/profiles/window-<kind>-<pid>-<n>.cpuprofile: a K = 1,000 round is 10-20 ms,
 * lost in a whole run's profile (`--cpu-prof`).
 */
const windowProfiles = process.env.PARLEY_BENCH_PROFILE === 'windows' ? new Session() : null;
/** Windows so far: they number the profiles and the marks in what node prints (servers.ts). */
let windows = 0;
windowProfiles?.connect();
windowProfiles?.post('Profiler.enable');
windowProfiles?.post('Profiler.setSamplingInterval', { interval: 50 });

function stopWindowProfile(n: number): void {
  windowProfiles?.post('Profiler.stop', (err, result) => {
    if (err) return;
    // Every server runs from the project's root, as the statement count above assumes.
    const dir = join(process.cwd(), 'bench', 'results', 'profiles');
    mkdirSync(dir, { recursive: true });
    const kind = process.argv.includes('serve') ? 'parley' : 'floor';
    const file = `window-${kind}-${process.pid}-${n}.cpuprofile`;
    writeFileSync(join(dir, file), JSON.stringify(result.profile));
  });
}

if (process.send) {
  process.on('message', (msg: { op?: string; id?: number }) => {
    if (msg?.op === 'loop-start') {
      histogram.reset();
      histogram.enable();
      Object.assign(gcs, { minor: 0, major: 0, incremental: 0, pausedMs: 0 });
      if (tracing()) process.stdout.write(`--- window ${windows} start\n`);
      windowProfiles?.post('Profiler.start');
    }
    if (msg?.op === 'loop-end') {
      stopWindowProfile(windows);
      if (tracing()) process.stdout.write(`--- window ${windows} end\n`);
      windows++;
    }
    if (msg?.op === 'gc') {
      const gc = (globalThis as { gc?: () => void }).gc;
      gc?.();
      gc?.();
    }
    process.send!({ id: msg?.id, stats: stats() });
    if (msg?.op === 'loop-end') histogram.disable();
  });
  // The channel must not keep a stopped server alive.
  process.channel?.unref();
}
