// Young-generation garbage collected while the process is idle. A burst of work (one message
// fanned out to a thousand parked polls) allocates a few megabytes; when the young generation
// has less room left than that, V8 stops the burst for a scavenge that copies everything
// still young (the polls' own requests, parked just before): 5–25 ms at a thousand polls
// (docs/performance.md, item 4). A scavenge run when nothing is waiting does the same copying
// with nobody delayed, and leaves the burst an empty young generation. V8 in Node has no
// idle-time collection of its own, so this looks at the event loop every interval, notes how
// much the young generation grew while it was busy since the last idle look (the largest such
// growth lately is the burst to keep room for), and collects when the loop was idle and less
// room is left.
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type CollectGarbage = (options: { type: 'minor' | 'major' }) => void;

export interface IdleCollectorOptions {
  /** How often the loop's idleness is looked at after an idle look and after a collection. */
  intervalMs: number;
  /**
   * How soon the next look comes after one that found the loop busy: an idle moment right
   * after a burst of work (a thousand polls parking) is found before the next burst comes.
   */
  busyIntervalMs: number;
  /**
   * The longest between two looks while the loop stays idle with nothing to collect: each
   * such look doubles the wait, up to this, and the first busy one brings it back.
   */
  quietIntervalMs: number;
  /** The loop counts as idle when it was busy for less than this share of the interval. */
  busyBelow: number;
  /** Bytes allocated in the young generation since the last idle collection, at least. */
  minAllocatedBytes: number;
  /**
   * What the largest burst (the growth from one idle look to the next) counts for at the
   * next look: the burst to keep room for is the largest of the last few seconds of work, or
   * minutes of quiet.
   */
  burstDecay: number;
  /** Room in the young generation always kept, bursts or not (tests use it to collect at once). */
  minFreeBytes: number;
}

export interface IdleCollector {
  /** Young-generation collections this collector ran. */
  readonly collections: number;
  /** Times it looked at the loop. */
  readonly checks: number;
  stop(): void;
}

/**
 * Looked at every 25 ms while the loop works, so that the idle moment after a burst of work is
 * seen within 25-50 ms: with looks every 100 ms, a thousand polls parking ran into the look
 * after them, the collection waited for the next, and the fan-out that came 200 ms after the
 * polls met the scavenge instead in a third of figure 4's rounds (docs/performance-history.md,
 * session 26). Ten times a second after an idle look. An idle loop with nothing to collect is
 * looked at less and less often, down to once in 1.6 s: an idle server woke ten times a
 * second for it, about 0.4 % of a core in all (docs/performance.md, session 25), and a burst
 * brings the looks back within that. Idle: under 1 % busy. Only a young generation with less
 * room than the bursts need is collected: a steady trickle of work with idle moments between
 * (19,000 parked polls and their heartbeats, 8 ticks a second, half a megabyte a look)
 * otherwise had a collection every megabyte, four times V8's own, each copying the polls
 * parked since the last and promoting them no sooner: 1.1 % of a core more in figure 7's
 * hold (docs/performance.md). Decaying by 1 % an idle look, a burst counts half after 69 of
 * them, 7 s of looks a tenth of a second apart.
 */
const IDLE_GC_DEFAULTS: IdleCollectorOptions = {
  intervalMs: 100,
  busyIntervalMs: 25,
  quietIntervalMs: 1600,
  busyBelow: 0.01,
  minAllocatedBytes: 1 << 20,
  burstDecay: 0.99,
  minFreeBytes: 0,
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
 * last idle collection left (usedAfter), and less room left than the burst it may meet.
 */
export function worthCollecting(
  young: { used: number; capacity: number },
  usedAfter: number,
  burst: number,
  options: Pick<IdleCollectorOptions, 'minAllocatedBytes' | 'minFreeBytes'>,
): boolean {
  const free = young.capacity - young.used;
  return (
    young.used - usedAfter >= options.minAllocatedBytes &&
    free < Math.max(burst, options.minFreeBytes)
  );
}

/**
 * The burst to keep room for after an idle look: the growth since the last idle look, or the
 * decayed earlier burst if larger. Work that outgrew the whole young generation met V8's own
 * scavenges whatever room it found (the setup of thousands of queues): it is no burst.
 */
export function nextBurst(burst: number, growth: number, capacity: number, decay: number): number {
  return Math.max(growth <= capacity ? growth : 0, burst * decay);
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
  let usedAtLastLook = 0;
  /** The young generation's growth since the last idle look: the burst under way. */
  let growth = 0;
  let burst = 0;
  let delay = options.intervalMs;
  let timer: NodeJS.Timeout;
  const check = (): void => {
    checks++;
    const busy = performance.eventLoopUtilization(last).utilization;
    const young = youngGeneration();
    // Less in use than at the last look: V8 collected meanwhile, and all in use is new.
    growth += young.used >= usedAtLastLook ? young.used - usedAtLastLook : young.used;
    usedAtLastLook = young.used;
    if (busy >= options.busyBelow) {
      delay = options.busyIntervalMs;
    } else {
      burst = nextBurst(burst, growth, young.capacity, options.burstDecay);
      growth = 0;
      delay = collectIfWorth(young);
    }
    timer = setTimeout(check, delay);
    timer.unref();
    // Read after the look's own work (and any collection), which is not the load the next
    // look should see: counted, it kept an idle server's looks busy, 40 a second at 25 ms
    // apart, about 3 % of a core, and no look ever found the loop idle enough to collect
    // (docs/performance.md, session 45).
    last = performance.eventLoopUtilization();
  };
  /** The delay to the next look: the shortest after a collection, twice the last if none. */
  const collectIfWorth = (young: { used: number; capacity: number }): number => {
    // A scavenge V8 ran on its own since leaves less in use than the last one left.
    if (young.used < usedAfterCollecting) usedAfterCollecting = 0;
    if (!worthCollecting(young, usedAfterCollecting, burst, options)) {
      return Math.min(delay * 2, options.quietIntervalMs);
    }
    gc({ type: 'minor' });
    collections++;
    usedAfterCollecting = usedAtLastLook = youngGeneration().used;
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
