// Per-user message flags, stored as a bitmask in user_messages.flags.

export const FLAG_BITS = {
  read: 1 << 0,
  starred: 1 << 1,
  collapsed: 1 << 2,
  mentioned: 1 << 3,
  stream_wildcard_mentioned: 1 << 4,
  topic_wildcard_mentioned: 1 << 5,
  has_alert_word: 1 << 6,
  historical: 1 << 7,
} as const;

export type FlagName = keyof typeof FLAG_BITS;
/** Flags a client may change through POST /messages/flags. */
export const EDITABLE_FLAGS: FlagName[] = ['read', 'starred', 'collapsed'];
/** Every flag name a client may send, including derived and non-editable ones. */
export const KNOWN_FLAGS = [...(Object.keys(FLAG_BITS) as FlagName[]), 'wildcard_mentioned'];

/** The flag names a bitmask holds, as clients see them (with the derived wildcard_mentioned). */
export function flagsToNames(bits: number): string[] {
  const names: string[] = [];
  for (const [name, bit] of Object.entries(FLAG_BITS)) if (bits & bit) names.push(name);
  if (bits & (FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned)) {
    names.push('wildcard_mentioned');
  }
  return names;
}

export function namesToFlags(names: Iterable<FlagName>): number {
  let bits = 0;
  for (const n of names) bits |= FLAG_BITS[n];
  return bits;
}
