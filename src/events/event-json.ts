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
 * JSON text with its size in UTF-8 bytes, a poll answer's Content-Length, counted as the text
 * is written: Buffer.byteLength of an answer made of pieces flattened it and counted it again
 * in V8's slow path, about 2,500 instructions an answer, more than a tenth of node:http's own
 * work for it (docs/performance.md, session 53).
 */
export interface JsonText {
  readonly text: string;
  readonly bytes: number;
}

/**
 * A string as JSON, as JSON.stringify writes it. A string of printable ASCII without quote
 * or backslash (every queue id, named in each poll's answer) is written as it is: the builtin
 * took about 1,200 instructions a call, a tenth of a fan-out's own work per answer
 * (docs/performance.md, session 52).
 */
export function stringJson(text: string): JsonText {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) {
      const json = JSON.stringify(text);
      return { text: json, bytes: Buffer.byteLength(json) };
    }
  }
  return { text: `"${text}"`, bytes: text.length + 2 };
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

/**
 * Shared events' JSON up to the value of the id a reply adds (`{…,"id":`), made the first
 * time a reply writes one, with its size in bytes.
 */
const sharedEventHeads = new WeakMap<object, JsonText>();

/** A shared event's head, or undefined for an event that is not shared. */
function sharedEventHead(fields: Record<string, unknown>): JsonText | undefined {
  let head = sharedEventHeads.get(fields);
  if (head === undefined && sharedJson.has(fields)) {
    const inner = fieldsJson(fields, 0);
    const text = `{${inner}${inner === '' ? '' : ','}"id":`;
    head = { text, bytes: Buffer.byteLength(text) };
    sharedEventHeads.set(fields, head);
  }
  return head;
}

/**
 * A shared event's JSON up to the value of its id (`{…,"id":`), for a reply that writes the id
 * and the closing brace after it; undefined for an event that is not shared or has an id field
 * of its own, which eventsJson writes each time.
 */
export function sharedEventBeforeId(event: object): JsonText | undefined {
  const fields = event as Record<string, unknown>;
  return Object.hasOwn(fields, 'id') ? undefined : sharedEventHead(fields);
}

/** An event written for one reply; its own id field, if any, holds the queue's id. */
function ownEventJson(fields: Record<string, unknown>, id: number): string {
  const inner = fieldsJson(fields, id);
  // The id goes where `{ ...event, id }` puts it: in place of the event's own, or last.
  if (Object.hasOwn(fields, 'id')) return `{${inner}}`;
  return inner === '' ? `{"id":${id}}` : `{${inner},"id":${id}}`;
}

/**
 * The events of a reply as a JSON array, shared events written from their kept JSON (a
 * shared event with an id field of its own is written each time, the queue's id in its place).
 */
export function eventsJson(events: readonly NumberedEvent[]): JsonText {
  // Every poll's answer comes through here: one string grown in place, no arrays to join,
  // and no copy of each event to add its id.
  let text = '[';
  let bytes = 1;
  for (let i = 0; i < events.length; i++) {
    const { id, event } = events[i];
    const fields = event as unknown as Record<string, unknown>;
    const comma = i === 0 ? '' : ',';
    const head = sharedEventBeforeId(fields);
    if (head !== undefined) {
      // Past the head everything is ASCII: a byte a character.
      const tail = `${id}}`;
      text += `${comma}${head.text}${tail}`;
      bytes += comma.length + head.bytes + tail.length;
    } else {
      const piece = `${comma}${ownEventJson(fields, id)}`;
      text += piece;
      bytes += Buffer.byteLength(piece);
    }
  }
  return { text: `${text}]`, bytes: bytes + 1 };
}
