// Every evented commit advances its organization's sequence by one and stamps its notices
// with it (actions/transaction.ts), so a process that holds queues should see each number.
// One that never comes was lost: published by no one (a process that stopped between its
// commit and its publication, a command-line action on its own bus) or dropped by the bus
// (Redis delivers a channel's messages to the subscribers connected at that moment only).
// The queues that should have had it are then behind their clients' state for good; the
// tracker says so, and they are dropped, so that their clients register again.
//
// Processes publish in the order their commits end, not always in the order of their
// numbers, so a missing number is waited for before it counts as lost. A gap shows when a
// later number comes, or when the database says numbers were committed that have not come
// (expect: after the bus reconnects, or after this process failed to publish).

interface Seen {
  /** Tracking began here: what came before it is not known. */
  from: number;
  /** Every number up to this one has come (or came before tracking began). */
  upTo: number;
  /** Numbers that came after a gap. */
  above: Set<number>;
  /** Every number up to this one was committed and should come within the wait. */
  expected: number;
  /** The highest number declared lost: a snapshot older than it missed a change. */
  lostUpTo: number;
  timer: NodeJS.Timeout | null;
}

export class RealmSequences {
  private readonly realms = new Map<number, Seen>();

  constructor(
    private readonly waitMs: number,
    /** Numbers up to `lastMissing` of realmId did not all come. */
    private readonly onMissing: (realmId: number, lastMissing: number) => void,
  ) {}

  /**
   * Start tracking realmId at seq, everything before it accounted for (a queue's snapshot,
   * restored queues), unless it is tracked already.
   */
  start(realmId: number, seq: number): void {
    if (!this.realms.has(realmId))
      this.realms.set(realmId, {
        from: seq,
        upTo: seq,
        above: new Set(),
        expected: seq,
        lostUpTo: -1,
        timer: null,
      });
  }

  /** A notice of realmId came with seq. */
  note(realmId: number, seq: number): void {
    const seen = this.realms.get(realmId);
    if (!seen) return this.start(realmId, seq);
    if (seq <= seen.upTo) return;
    if (seq !== seen.upTo + 1) {
      seen.above.add(seq);
      this.wait(realmId, seen);
      return;
    }
    seen.upTo = seq;
    while (seen.above.delete(seen.upTo + 1)) seen.upTo++;
  }

  /** Every number of realmId up to seq was committed: those not come within the wait are lost. */
  expect(realmId: number, seq: number): void {
    const seen = this.realms.get(realmId);
    if (!seen || seq <= seen.upTo) return;
    seen.expected = Math.max(seen.expected, seq);
    this.wait(realmId, seen);
  }

  /**
   * Whether a queue of realmId whose snapshot is at seq may lack a notice after it: one was
   * declared lost, or tracking began later (nothing says the numbers before it came).
   */
  missed(realmId: number, seq: number): boolean {
    const seen = this.realms.get(realmId);
    return seen !== undefined && (seq < seen.from || seq < seen.lostUpTo);
  }

  /** Each tracked realm with the number up to which every one has come. */
  seen(): Array<[realmId: number, upTo: number]> {
    return [...this.realms].map(([realmId, seen]) => [realmId, seen.upTo]);
  }

  /** Stop every wait (the queues are closing). */
  stop(): void {
    for (const seen of this.realms.values()) {
      if (seen.timer) clearTimeout(seen.timer);
      seen.timer = null;
    }
  }

  private wait(realmId: number, seen: Seen): void {
    seen.timer ??= setTimeout(() => this.check(realmId), this.waitMs).unref();
  }

  private check(realmId: number): void {
    const seen = this.realms.get(realmId);
    if (!seen) return;
    seen.timer = null;
    let highest = seen.expected;
    for (const seq of seen.above) if (seq > highest) highest = seq;
    if (highest <= seen.upTo) return;
    // upTo + 1 never came (it would have advanced upTo), so this stops above upTo.
    let lastMissing = highest;
    while (seen.above.has(lastMissing)) lastMissing--;
    seen.upTo = highest;
    seen.above.clear();
    seen.lostUpTo = Math.max(seen.lostUpTo, lastMissing);
    this.onMissing(realmId, lastMissing);
  }
}
