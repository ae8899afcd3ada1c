// Small statistics: percentiles, and the floor/Parley ratio summary every figure reports.
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export interface RatioSummary {
  /** Median of the pairwise ratios of undisturbed pairs. */
  median: number;
  min: number;
  max: number;
  pairs: number;
  /** Pairs left out because a run of the pair was disturbed by foreign load or steal. */
  discarded: number;
}

export interface Pair {
  ratio: number;
  disturbed: boolean;
}

/**
 * Summarise pairs; if every pair was disturbed, summarise them all and say so (pairs 0).
 * Pairs with a run that completed nothing are discarded like disturbed ones.
 */
export function summarise(pairs: Pair[]): RatioSummary {
  // A run that completed nothing gives a ratio of 0, Infinity or NaN: never a measurement.
  const valid = pairs.filter((p) => Number.isFinite(p.ratio) && p.ratio > 0);
  const clean = valid.filter((p) => !p.disturbed).map((p) => p.ratio);
  const used = clean.length > 0 ? clean : valid.map((p) => p.ratio);
  return {
    median: median(used),
    min: Math.min(...used),
    max: Math.max(...used),
    pairs: clean.length,
    discarded: pairs.length - clean.length,
  };
}

/**
 * The result fields of a figure measured as pairwise ratios: the median and min–max of the
 * pairs summarise() keeps, whether the median passes, and how many pairs were used and left out.
 * With every pair disturbed the median is still shown, but it neither meets nor misses the
 * target (pass null, '?' in the table): in session 59 other load disturbed all 14 of a run's
 * K = 1,000 fan-out pairs, and their median, 0.665, had read as met.
 */
export function pairedValue(
  pairs: Pair[],
  passes: (median: number) => boolean,
): {
  value: number;
  min: number;
  max: number;
  pass: boolean | null;
  pairs: number;
  discarded: number;
} {
  const s = summarise(pairs);
  return {
    value: round(s.median),
    min: round(s.min),
    max: round(s.max),
    pass: passUnlessDisturbed(s.pairs === 0, passes(s.median)),
    pairs: s.pairs,
    discarded: s.discarded,
  };
}

/** A single run's pass, or null when other load disturbed it: shown, neither met nor missed. */
export const passUnlessDisturbed = (disturbed: boolean | number, pass: boolean): boolean | null =>
  disturbed ? null : pass;

export const round = (x: number, digits = 3): number =>
  Number.isFinite(x) ? Number(x.toFixed(digits)) : x;

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
