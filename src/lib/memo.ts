// Memoization of pure functions of one string. Parley reads the same few settings texts and
// addresses on every request (the caller's own row, its organization's); parsing or hashing
// them again costs more than the lookup here. The memo only ever holds results of pure
// functions, so it changes no behaviour, and its size is bounded.

/**
 * fn, remembered for at least the last `size` distinct texts and at most twice as many: two
 * generations of at most `size` each, the older dropped whole when the newer fills. A hit
 * in the older one moves the text to the newer. A lookup changes no map on a hit in the
 * newer generation: re-inserting on every hit to keep an exact order of use made Map rebuild
 * its table over and over when a register presented a thousand users.
 */
export function memoByText<T>(fn: (text: string) => T, size: number): (text: string) => T {
  let recent = new Map<string, T>();
  let older = new Map<string, T>();
  const remember = (text: string, value: T): T => {
    if (recent.size >= size) {
      older = recent;
      recent = new Map();
    }
    recent.set(text, value);
    return value;
  };
  return (text) => {
    const hit = recent.get(text);
    if (hit !== undefined) return hit;
    const old = older.get(text);
    return remember(text, old !== undefined ? old : fn(text));
  };
}
