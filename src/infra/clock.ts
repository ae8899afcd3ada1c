// Time behind an interface so tests can move it.
export interface Clock {
  /** Milliseconds since the epoch. */
  nowMs(): number;
}

export const systemClock: Clock = { nowMs: () => Date.now() };

export const unixNow = (clock: Clock): number => Math.floor(clock.nowMs() / 1000);
