// The JSON of the events a poll answers. One message sent to K receivers is shaped into one
// object per client form (shaping.ts marks those objects shared); its JSON is made the first
// time a reply needs it and reused for every other receiver of that form, so a fan-out
// serialises the message a handful of times instead of K times. Shared objects are never
// changed once shaped, which is what makes reusing their JSON safe.
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

/**
 * Events many queues hold (one message event per form and flags, a heartbeat), with the JSON
 * of their fields once made: null until then, false for an event with its own id field.
 */
const sharedEvents = new WeakMap<object, string | false | null>();

/** Mark an event that many queues hold and nobody changes: its fields are written once. */
export function markSharedEvent(event: object): void {
  if (!sharedEvents.has(event)) sharedEvents.set(event, null);
}

/** An event's fields as JSON, without braces; false when it has an id field of its own. */
function fieldsJson(fields: Record<string, unknown>): string | false {
  let text = '';
  // Events are plain objects, so for-in lists their own keys (in JSON.stringify's order).
  for (const key in fields) {
    if (key === 'id') return false;
    const value = fields[key];
    if (value === undefined) continue;
    text += `${text === '' ? '' : ','}${keyJson(key)}:${valueJson(value)}`;
  }
  return text;
}

/** The fields of an event with its own id field, the queue's id written in its place. */
function fieldsWithOwnIdJson(fields: Record<string, unknown>, id: number): string {
  let text = '';
  for (const key in fields) {
    const value = fields[key];
    if (key !== 'id' && value === undefined) continue;
    text += `${text === '' ? '' : ','}${keyJson(key)}:${key === 'id' ? id : valueJson(value)}`;
  }
  return text;
}

function eventJson({ id, event }: NumberedEvent): string {
  const fields = event as unknown as Record<string, unknown>;
  let text = sharedEvents.get(fields);
  if (text === null) sharedEvents.set(fields, (text = fieldsJson(fields)));
  else if (text === undefined) text = fieldsJson(fields);
  // The id goes where `{ ...event, id }` puts it: last, or in place of the event's own.
  if (text === false) return `{${fieldsWithOwnIdJson(fields, id)}}`;
  return text === '' ? `{"id":${id}}` : `{${text},"id":${id}}`;
}

/** The events of a reply as a JSON array, shared values written from their kept JSON. */
export function eventsJson(events: readonly NumberedEvent[]): string {
  // Every poll's answer comes through here: one string grown in place, no arrays to join,
  // and no copy of each event to add its id.
  let out = '[';
  for (let i = 0; i < events.length; i++) out += `${i === 0 ? '' : ','}${eventJson(events[i])}`;
  return `${out}]`;
}
