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
  /** How often the loop's idleness is looked at while it works, and after a collection. */
  intervalMs: number;
  /**
   * The longest between two looks while the loop stays idle with nothing to collect: each
   * such look doubles the wait, up to this, and the first busy one brings it back.
   */
  quietIntervalMs: number;
  /** The loop counts as idle when it was busy for less than this share of the interval. */
  busyBelow: number;
  /** Bytes allocated in the young generation since the last idle collection, at least. */
  minAllocatedBytes: number;
  /** The share of the young generation's capacity in use, at least. */
  minUsedShare: number;
}

export interface IdleCollector {
  /** Young-generation collections this collector ran. */
  readonly collections: number;
  /** Times it looked at the loop. */
  readonly checks: number;
  stop(): void;
}

/**
 * Checked ten times a second while the loop works. An idle loop with nothing to collect is
 * looked at less and less often, down to once in 1.6 s: an idle server woke ten times a
 * second for it, about 0.4 % of a core in all (docs/performance.md, session 25), and a burst
 * brings the checks back within that. Idle: under 1 % busy. Only a young
 * generation at least half full is collected: a steady trickle of work with idle moments
 * between (19,000 parked polls and their heartbeats, 8 ticks a second) otherwise had a
 * collection every megabyte, four times V8's own, each copying the polls parked since the
 * last and promoting them no sooner: 1.1 % of a core more in figure 7's hold
 * (docs/performance.md). A burst needs the room only when little is left.
 */
const IDLE_GC_DEFAULTS: IdleCollectorOptions = {
  intervalMs: 100,
  quietIntervalMs: 1600,
  busyBelow: 0.01,
  minAllocatedBytes: 1 << 20,
  minUsedShare: 0.5,
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

/** Bytes in use in the young generation, and its capacity (one semi-space). */
function youngGeneration(): { used: number; capacity: number } {
  for (const space of getHeapSpaceStatistics()) {
    if (space.space_name === 'new_space') {
      const used = space.space_used_size;
      return { used, capacity: used + space.space_available_size };
    }
  }
  return { used: 0, capacity: 0 };
}

/**
 * Whether an idle loop's young generation is worth a scavenge: enough allocated since what the
 * last idle collection left (usedAfter), and at least the given share of its capacity in use.
 */
export function worthCollecting(
  young: { used: number; capacity: number },
  usedAfter: number,
  options: Pick<IdleCollectorOptions, 'minAllocatedBytes' | 'minUsedShare'>,
): boolean {
  return (
    young.used - usedAfter >= options.minAllocatedBytes &&
    young.used >= young.capacity * options.minUsedShare
  );
}

/** Start collecting while idle; null when this runtime gives no way to ask for a scavenge. */
export function startIdleCollector(
  options: IdleCollectorOptions = IDLE_GC_DEFAULTS,
): IdleCollector | null {
  const gc = gcFunction();
  if (!gc) return null;
  let collections = 0;
  let checks = 0;
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  // What survived the last idle collection is not new garbage: it counts from there.
  let usedAfterCollecting = 0;
  let delay = options.intervalMs;
  let timer: NodeJS.Timeout;
  const check = (): void => {
    checks++;
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    delay = busy >= options.busyBelow ? options.intervalMs : collectIfWorth();
    timer = setTimeout(check, delay);
    timer.unref();
  };
  /** The delay to the next check: the shortest after a collection, twice the last if none. */
  const collectIfWorth = (): number => {
    const young = youngGeneration();
    // A scavenge V8 ran on its own since leaves less in use than the last one left.
    if (young.used < usedAfterCollecting) usedAfterCollecting = 0;
    if (!worthCollecting(young, usedAfterCollecting, options)) {
      return Math.min(delay * 2, options.quietIntervalMs);
    }
    gc({ type: 'minor' });
    collections++;
    usedAfterCollecting = youngGeneration().used;
    // The collection itself is not the load the next check should see.
    last = performance.eventLoopUtilization();
    return options.intervalMs;
  };
  timer = setTimeout(check, delay);
  timer.unref();
  return {
    get collections() {
      return collections;
    },
    get checks() {
      return checks;
    },
    stop: () => clearTimeout(timer),
  };
}
