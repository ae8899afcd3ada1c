// When parked polls are answered: each poll that has events is marked ready and answered in
// a later macrotask, with every other poll made ready meanwhile, so that one event for
// thousands of clients is answered in bounded slices and never stalls the process
// (docs/performance.md, item 4).

/**
 * How long one macrotask may answer parked polls (ms), whatever the number of answers that
 * takes: 256 answers took 4.5 ms on a fast machine and 10 ms on a slow one, where the loop
 * stalled for that long plus any collection inside it (docs/performance-history.md, item 4).
 */
const ANSWER_SLICE_MS = 5;
/**
 * A fan-out whose parked polls the recent pace says can all be answered within this (ms),
 * with nothing else still to offer, is answered in one macrotask instead: slices put Node's
 * finishing of the earlier answers (their `finish`, `close` and keep-alive timers) before
 * the last ones, 1-2 ms of a 1,000-poll fan-out's 18-20 (docs/performance-history.md, item 4). The
 * loop stalls no longer than the 10,000-poll fan-outs' bound on loop delay, 20 ms.
 */
const ANSWER_WHOLE_MS = 20;
/** Answers a slice needs before its pace counts, so that one slow answer does not set it. */
const PACE_SAMPLE_MIN = 32;
/**
 * The recent pace is the fastest of this many slices. A slice a collection or another thread
 * slowed (a mark-compact inside one fan-out read 60-140 µs an answer against 20) is no pace to
 * plan by, and an average of them kept the next fan-outs sliced for rounds after it
 * (docs/performance.md, item 4, session 46). Too fast a pace costs little: a fan-out that does
 * not fit is still cut at ANSWER_WHOLE_MS, and its rest waits for the finishing of what went
 * before about as long as the gaps between slices would have taken.
 */
const PACE_SAMPLES = 4;

export class AnswerSlices<T> {
  private readonly ready = new Set<T>();
  /**
   * The item added last that was not in the set already: a flush that has taken it has
   * taken every item (the set keeps insertion order).
   */
  private newest: T | undefined = undefined;
  private scheduled = false;
  /** The ready set is the rest of a fan-out already being answered in slices. */
  private slicing = false;
  /** Time per answer (ms) of the last PACE_SAMPLES slices of PACE_SAMPLE_MIN answers or more. */
  private readonly paces: number[] = [];

  constructor(
    /** Answers one ready poll; false when it had nothing to answer with after all. */
    private readonly answer: (item: T) => boolean,
    /** More events are still being offered: answering now would only answer part of them. */
    private readonly offering: () => boolean,
    /** A monotonic clock (ms) timing each macrotask of answers. */
    private readonly clock: () => number,
  ) {}

  /** The poll has events: answer it in the next slice. */
  add(item: T): void {
    const size = this.ready.size;
    this.ready.add(item);
    if (this.ready.size !== size) this.newest = item;
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** The poll went away meanwhile. (One answered meanwhile may stay: answer skips it.) */
  delete(item: T): void {
    this.ready.delete(item);
    // Not kept alive here; a flush then takes its items out one by one.
    if (item === this.newest) this.newest = undefined;
  }

  /** The recent time per answer (ms): Infinity until a slice has set it. */
  private paceMs(): number {
    return this.paces.length === 0 ? Infinity : Math.min(...this.paces);
  }

  private flush(): void {
    this.scheduled = false;
    const whole =
      !this.slicing && !this.offering() && this.ready.size * this.paceMs() <= ANSWER_WHOLE_MS;
    const limitMs = whole ? ANSWER_WHOLE_MS : ANSWER_SLICE_MS;
    const started = this.clock();
    let answered = 0;
    let elapsed = 0;
    let last: T | undefined;
    for (const item of this.ready) {
      last = item;
      if (this.answer(item)) answered++;
      elapsed = this.clock() - started;
      if (elapsed >= limitMs) break;
    }
    this.takeThrough(last);
    if (answered >= PACE_SAMPLE_MIN) {
      if (this.paces.length === PACE_SAMPLES) this.paces.shift();
      this.paces.push(elapsed / answered);
    }
    this.slicing = this.ready.size > 0;
    if (this.slicing) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /**
   * Take the items a flush went through, up to last, out of the set. Taken one by one as they
   * were answered, the emptying set was rehashed smaller at every quarter, and the deletes and
   * rehashes of a 1,000-poll fan-out cost about a thousand instructions a poll
   * (docs/performance.md, session 53): a flush that went through every item empties it at once.
   * An item left in the set by mistake costs a second look, which answer turns down; one taken
   * out by mistake would never be answered, so when last went away meanwhile nothing is taken.
   */
  private takeThrough(last: T | undefined): void {
    if (last === undefined) return;
    if (last === this.newest) {
      this.ready.clear();
      this.newest = undefined;
      return;
    }
    if (!this.ready.has(last)) return;
    for (const item of this.ready) {
      this.ready.delete(item);
      if (item === last) return;
    }
  }
}
