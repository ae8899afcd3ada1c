// A repeatable source of small random numbers for tests that try many generated inputs: the
// same seed gives the same inputs, so a failure names an input that fails again.

/** Whole numbers below n, from a linear congruential sequence started at seed. */
export function seededBelow(seed: number): (n: number) => number {
  let state = seed;
  return (n) => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % n;
  };
}
