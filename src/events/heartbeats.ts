// When parked polls get their heartbeat: a timing wheel of slots, one per timer tick, each
// holding the queues whose heartbeat falls in it. One timer is armed at a time, for the
// earliest slot; when it fires, every due slot's queues are handed to the owner (queues.ts),
// which answers them in chunks.
import type { QueueConfig } from './queues.ts';

/**
 * A quiet poll is answered between (latest - period) and latest after it parks: latest is
 * the configured interval plus jitter. The period is what a quiet queue, re-polling after
 * each heartbeat, gets them at: interval + jitter/2 by default (50 s), the mean of the
 * reference server's 45–55 s, which a period of two thirds of the interval (40 s, until
 * session 25) exceeded by a quarter in heartbeats. The lower bound, half the jitter and at
 * least a tenth of the interval, keeps a poll that just parked from a heartbeat at once. A
 * timer tick is the longest length that divides a second and is at most 1/300 of the
 * period (125 ms by default): the polls due in one tick are answered together, and their
 * re-polls arrive together, so finer ticks keep those bursts short (19,000 polls: about 50
 * per tick; a hundredth of the period gave 190 and a loop delay p99 of 10.6 ms, a
 * thousandth 7.4 ms but 18 % more CPU per heartbeat).
 */
export function heartbeatTiming(
  config: Pick<QueueConfig, 'heartbeatMinMs' | 'heartbeatJitterMs'>,
): {
  latestMs: number;
  periodMs: number;
  tickMs: number;
} {
  const latestMs = config.heartbeatMinMs + config.heartbeatJitterMs;
  const soonestMs = Math.max(config.heartbeatJitterMs / 2, config.heartbeatMinMs / 10);
  const periodMs = Math.max(1, Math.floor(latestMs - soonestMs));
  const wanted = Math.floor(periodMs / 300);
  return { latestMs, periodMs, tickMs: TICKS_THAT_FILL_A_SECOND.find((t) => t <= wanted) ?? 1 };
}

/**
 * Tick lengths that divide a second, longest first. With 133 ms ticks (7.5 to a
 * second) the seconds took seven or eight ticks' heartbeats in turn, 442 and 505 of a mean
 * of 475 with 19,000 polls; with 125 ms every second takes eight.
 */
const TICKS_THAT_FILL_A_SECOND = [1000, 500, 250, 200, 125, 100, 50, 40, 25, 20, 10, 8, 5, 4, 2, 1];

/** The golden ratio's fractional part, (√5 - 1) / 2. */
const GOLDEN_FRACTION = (Math.sqrt(5) - 1) / 2;

/**
 * Heartbeat phases for new queues, evenly spread over the period however many there are:
 * each is the last one plus the golden ratio's fraction of the period, which leaves at most
 * three sizes of gap between neighbouring phases at any count (the three-gap theorem).
 * Random phases bunch: 19,000 of them over 40 one-second windows put about 50 more or fewer
 * than the mean (475) in the fullest or emptiest window; these put at most 3.
 * `start` (a fraction of the period) keeps processes from sharing one sequence.
 */
export function evenPhases(start: number): (periodMs: number) => number {
  let fraction = start;
  return (periodMs) => {
    fraction = (fraction + GOLDEN_FRACTION) % 1;
    return Math.floor(fraction * periodMs);
  };
}

export class HeartbeatWheel<T> {
  /**
   * A slot stays until its tick passes, its removed items with it: a queue polling again
   * after each event leaves its slot and comes back to the same one (its phase fixes the slot
   * for a whole period), and deleting the slot to make a new one was a map delete, a map
   * insert and a Set per poll, with the map's table rebuilt every so often for the deletions.
   */
  private readonly slots = new Map<number, Set<T>>();
  /** Items parked in the slots, not those removed: with none, no timer keeps the process up. */
  private items = 0;
  private timer: NodeJS.Timeout | null = null;
  private timerTick = Infinity;
  private stopped = false;
  private readonly timing: ReturnType<typeof heartbeatTiming>;
  /**
   * Where ticks are counted from: a multiple of both the period and the tick, so phases and
   * slots fall where they would counted from 1970. Ticks since 1970 (1.4e10 of 125 ms) are
   * beyond V8's small integers, so each was a heap number, allocated for every park and
   * hashed as a double in the slot map; ticks since the wheel's start stay small for years.
   */
  private readonly originMs: number;

  constructor(
    config: Pick<QueueConfig, 'heartbeatMinMs' | 'heartbeatJitterMs'>,
    private readonly now: () => number,
    /** Called with each due slot's items, in no particular order of slots. */
    private readonly beat: (due: Set<T>) => void,
    /**
     * The tick the item's poll is parked at, as add returned it; undefined when none is. An
     * item removed stays in its slot's set, and the slot's beat skips it unless it is parked
     * there again.
     */
    private readonly parkedAt: (item: T) => number | undefined,
  ) {
    this.timing = heartbeatTiming(config);
    const cycle = this.timing.periodMs * this.timing.tickMs;
    this.originMs = Math.floor(now() / cycle) * cycle;
  }

  /** The heartbeat period: a queue's phase is an offset within it (evenPhases). */
  get periodMs(): number {
    return this.timing.periodMs;
  }

  /**
   * A queue's heartbeats fall on its own phase of a fixed period, whenever its polls were
   * parked: polls parked together (after a restart, or re-polling after one fan-out) get
   * their heartbeats spread over a whole period instead of one jitter window, and a quiet
   * queue gets one heartbeat per period. The heartbeat is the latest slot of the queue's
   * phase no later than interval + jitter after the park, so never later than before.
   * Returns the tick the item was put in (counted from the wheel's origin), for remove.
   */
  add(item: T, phaseMs: number): number {
    const { latestMs, periodMs, tickMs } = this.timing;
    const latest = this.now() - this.originMs + latestMs - tickMs;
    const due = latest - mod(latest - phaseMs, periodMs);
    const tick = Math.ceil(due / tickMs);
    const slot = this.slots.get(tick);
    if (!slot) this.slots.set(tick, new Set([item]));
    // Still in the slot: removed since (it comes back), or parked there already.
    else if (slot.has(item)) {
      if (this.parkedAt(item) === tick) return tick;
    } else slot.add(item);
    this.items++;
    this.arm(tick);
    return tick;
  }

  /**
   * An item parked at this tick (as add returned it) is no longer parked: it is counted out
   * but stays in the slot's set, which skips it when it fires (parkedAt). A queue polling
   * again after each event comes back to the same slot, and a delete from the set and an add
   * to it again were a third of the wheel's work in a fan-out's answers (docs/performance.md,
   * session 54). An item whose slot already fired was counted out then.
   */
  remove(tick: number): void {
    if (!this.slots.has(tick)) return;
    // With nothing left to beat, no timer keeps the process up.
    if (--this.items === 0 && this.timer) this.disarm();
  }

  /** No more timers (shutdown); items stay where they are. */
  stop(): void {
    this.stopped = true;
    this.disarm();
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerTick = Infinity;
  }

  private arm(tick: number): void {
    if (this.stopped || tick >= this.timerTick) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerTick = tick;
    this.timer = setTimeout(
      () => this.fire(tick),
      Math.max(0, tick * this.timing.tickMs + this.originMs - this.now()),
    );
  }

  /** The timer set for dueTick fired: beat every slot up to it, then arm for the next. */
  private fire(dueTick: number): void {
    this.timer = null;
    this.timerTick = Infinity;
    let next = Infinity;
    // Keys, not entries: this runs every tick over every slot, and an entry is an array.
    for (const tick of this.slots.keys()) {
      const slot = this.slots.get(tick)!;
      if (tick > dueTick) {
        if (slot.size > 0) next = Math.min(next, tick);
        continue;
      }
      this.slots.delete(tick);
      // Those removed and not parked here again are left out (a set may lose items while
      // iterated).
      for (const item of slot) if (this.parkedAt(item) !== tick) slot.delete(item);
      if (slot.size === 0) continue;
      this.items -= slot.size;
      this.beat(slot);
    }
    // Slots left with removed items alone keep no timer up.
    if (next !== Infinity && this.items > 0) this.arm(next);
  }
}

function mod(a: number, n: number): number {
  return ((a % n) + n) % n;
}
