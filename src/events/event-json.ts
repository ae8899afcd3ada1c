// The JSON of the events a poll answers. One message sent to K receivers is shaped into one
// message object per client form, and one event per form and flags (shaping.ts marks both
// shared, as it does an event passed on unchanged; queues.ts its one heartbeat); their JSON
// is made the first time a reply needs it and reused for every other receiver, so a fan-out
// serialises the message a handful of times instead of K times and each answer adds only
// its queue's event id. Shared objects are never changed once shaped, which is what makes
// reusing their JSON safe.
import type { NumberedEvent } from './queues.ts';

/** Shared objects, with their JSON once made (null until then). */
const sharedJson = new WeakMap<object, string | null>();

/** Mark an object (an event, or a value in events) that many queues hold and nobody changes. */
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

/**
 * A string as JSON, as JSON.stringify writes it. A string of printable ASCII without quote
 * or backslash (every queue id, named in each poll's answer) is written as it is: the builtin
 * took about 1,200 instructions a call, a tenth of a fan-out's own work per answer
 * (docs/performance.md, session 52).
 */
export function stringJson(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return JSON.stringify(text);
  }
  return `"${text}"`;
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

/** An event's fields as JSON, without braces; its own id field, if any, holds the queue's id. */
function fieldsJson(fields: Record<string, unknown>, id: number): string {
  let text = '';
  // Events are plain objects, so for-in lists their own keys (in JSON.stringify's order).
  for (const key in fields) {
    const value = fields[key];
    if (key !== 'id' && value === undefined) continue;
    text += `${text === '' ? '' : ','}${keyJson(key)}:${key === 'id' ? id : valueJson(value)}`;
  }
  return text;
}

function eventJson({ id, event }: NumberedEvent): string {
  const fields = event as unknown as Record<string, unknown>;
  // The id goes where `{ ...event, id }` puts it: in place of the event's own, or last.
  if (Object.hasOwn(fields, 'id')) return `{${fieldsJson(fields, id)}}`;
  // A shared event (a message event of one form and flags, a heartbeat) is written once.
  let json = sharedJson.get(fields);
  if (json === null) sharedJson.set(fields, (json = `{${fieldsJson(fields, id)}}`));
  json ??= `{${fieldsJson(fields, id)}}`;
  return json === '{}' ? `{"id":${id}}` : `${json.slice(0, -1)},"id":${id}}`;
}

/** The events of a reply as a JSON array, shared values written from their kept JSON. */
export function eventsJson(events: readonly NumberedEvent[]): string {
  // Every poll's answer comes through here: one string grown in place, no arrays to join,
  // and no copy of each event to add its id.
  let out = '[';
  for (let i = 0; i < events.length; i++) out += `${i === 0 ? '' : ','}${eventJson(events[i])}`;
  return `${out}]`;
}
