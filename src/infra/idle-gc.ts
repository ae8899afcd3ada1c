// Young-generation garbage collected while the process is idle. A burst of work (one message
// fanned out to a thousand parked polls) allocates a few megabytes; when the young generation
// is already half full of what the quiet time before left behind (the polls' own requests,
// parked just before), V8 stops the burst for a scavenge that copies everything still young:
// 5–25 ms at a thousand polls (docs/performance.md, item 4). A scavenge run when nothing is
// waiting does the same copying with nobody delayed, and leaves the burst an empty young
// generation. V8 in Node has no idle-time collection of its own, so this checks every
// interval whether the event loop was idle and the young generation has filled since.
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type CollectGarbage = (options: { type: 'minor' | 'major' }) => void;

export interface IdleCollectorOptions {
  /** How often the loop's idleness is looked at. */
  intervalMs: number;
  /** The loop counts as idle when it was busy for less than this share of the interval. */
  busyBelow: number;
  /** Bytes allocated in the young generation since the last idle collection, at least. */
  minAllocatedBytes: number;
}

export interface IdleCollector {
  /** Young-generation collections this collector ran. */
  readonly collections: number;
  stop(): void;
}

/** Checked ten times a second; a check costs microseconds. Idle: under 1 % busy. */
const IDLE_GC_DEFAULTS: IdleCollectorOptions = {
  intervalMs: 100,
  busyBelow: 0.01,
  minAllocatedBytes: 1 << 20,
};

let collectGarbage: CollectGarbage | null | undefined;

/**
 * V8's gc(), which takes { type: 'minor' } for a scavenge alone. Node exposes it only with
 * --expose-gc; set at run time, the flag gives the function to a context made afterwards, and
 * is unset again so no other code's contexts get a global gc.
 */
function gcFunction(): CollectGarbage | null {
  if (collectGarbage !== undefined) return collectGarbage;
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === 'function') return (collectGarbage = exposed as CollectGarbage);
  try {
    setFlagsFromString('--expose-gc');
    const made: unknown = runInNewContext('gc');
    collectGarbage = typeof made === 'function' ? (made as CollectGarbage) : null;
  } catch {
    collectGarbage = null;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
  return collectGarbage;
}

function youngGenerationUsed(): number {
  for (const space of getHeapSpaceStatistics()) {
    if (space.space_name === 'new_space') return space.space_used_size;
  }
  return 0;
}

/** Start collecting while idle; null when this runtime gives no way to ask for a scavenge. */
export function startIdleCollector(
  options: IdleCollectorOptions = IDLE_GC_DEFAULTS,
): IdleCollector | null {
  const gc = gcFunction();
  if (!gc) return null;
  let collections = 0;
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  // What survived the last idle collection is not new garbage: it counts from there.
  let usedAfterCollecting = 0;
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    if (busy >= options.busyBelow) return;
    const used = youngGenerationUsed();
    // A scavenge V8 ran on its own since leaves less in use than the last one left.
    if (used < usedAfterCollecting) usedAfterCollecting = 0;
    if (used - usedAfterCollecting < options.minAllocatedBytes) return;
    gc({ type: 'minor' });
    collections++;
    usedAfterCollecting = youngGenerationUsed();
    // The collection itself is not the load the next check should see.
    last = performance.eventLoopUtilization();
  }, options.intervalMs);
  timer.unref();
  return {
    get collections() {
      return collections;
    },
    stop: () => clearInterval(timer),
  };
}
