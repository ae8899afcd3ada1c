// The JSON of the events a poll answers. One message sent to K receivers is shaped into one
// object per client form (shaping.ts marks those objects shared); its JSON is made the first
// time a reply needs it and reused for every other receiver of that form, so a fan-out
// serialises the message a handful of times instead of K times. Shared objects are never
// changed once shaped, which is what makes reusing their JSON safe.
import { JsonText } from '../lib/json-text.ts';

/** Shared objects, with their JSON once made (null until then). */
const sharedJson = new WeakMap<object, string | null>();

/** Mark an object that many queued events hold and nobody changes. */
export function markShared(value: object): void {
  if (!sharedJson.has(value)) sharedJson.set(value, null);
}

function valueJson(value: unknown): string {
  if (typeof value === 'object' && value !== null) {
    const known = sharedJson.get(value);
    if (typeof known === 'string') return known;
    if (known === null) {
      const json = JSON.stringify(value);
      sharedJson.set(value, json);
      return json;
    }
  }
  return JSON.stringify(value);
}

/** The events of a reply as a JSON array, shared values written from their kept JSON. */
export function eventsJson(events: readonly Record<string, unknown>[]): JsonText {
  const out: string[] = [];
  for (const event of events) {
    const fields: string[] = [];
    for (const key of Object.keys(event)) {
      const value = event[key];
      if (value !== undefined) fields.push(`${JSON.stringify(key)}:${valueJson(value)}`);
    }
    out.push(`{${fields.join(',')}}`);
  }
  return new JsonText(`[${out.join(',')}]`);
}
