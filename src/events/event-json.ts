// The JSON of the events a poll answers. One message sent to K receivers is shaped into one
// object per client form (shaping.ts marks those objects shared); its JSON is made the first
// time a reply needs it and reused for every other receiver of that form, so a fan-out
// serialises the message a handful of times instead of K times. Shared objects are never
// changed once shaped, which is what makes reusing their JSON safe.
import { JsonText } from '../lib/json-text.ts';
import type { NumberedEvent } from './queues.ts';

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

/** Event keys as JSON strings: a few dozen names, met in every reply. */
const quotedKeys = new Map<string, string>();
const MAX_QUOTED_KEYS = 1000;

function keyJson(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = JSON.stringify(key);
    if (quotedKeys.size < MAX_QUOTED_KEYS) quotedKeys.set(key, quoted);
  }
  return quoted;
}

/** The events of a reply as a JSON array, shared values written from their kept JSON. */
export function eventsJson(events: readonly NumberedEvent[]): JsonText {
  // Every poll's answer comes through here: one string grown in place, no arrays to join,
  // and no copy of each event to add its id. The id goes where `{ ...event, id }` puts it.
  let out = '[';
  for (let i = 0; i < events.length; i++) {
    const { id, event } = events[i];
    const fields = event as unknown as Record<string, unknown>;
    let text = '';
    let idWritten = false;
    // Events are plain objects, so for-in lists their own keys (in JSON.stringify's order).
    for (const key in fields) {
      let json: string;
      if (key === 'id') {
        json = String(id);
        idWritten = true;
      } else {
        const value = fields[key];
        if (value === undefined) continue;
        json = valueJson(value);
      }
      text += `${text === '' ? '' : ','}${keyJson(key)}:${json}`;
    }
    if (!idWritten) text += `${text === '' ? '' : ','}"id":${id}`;
    out += `${i === 0 ? '' : ','}{${text}}`;
  }
  return new JsonText(`${out}]`);
}
