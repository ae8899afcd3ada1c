// Memoization of pure functions of one string. Parley reads the same few settings texts and
// addresses on every request (the caller's own row, its organization's); parsing or hashing
// them again costs more than the lookup here. The memo only ever holds results of pure
// functions, so it changes no behaviour, and its size is bounded.

/** fn, remembered for the last `size` distinct texts (least recently used forgotten first). */
export function memoByText<T>(fn: (text: string) => T, size: number): (text: string) => T {
  const known = new Map<string, T>();
  return (text) => {
    const hit = known.get(text);
    if (hit !== undefined) {
      // Re-inserting keeps the map in order of last use.
      known.delete(text);
      known.set(text, hit);
      return hit;
    }
    const value = fn(text);
    if (known.size >= size) known.delete(known.keys().next().value!);
    known.set(text, value);
    return value;
  };
}
