// Text that is JSON already. A reply body may hold it as a top-level value (http/route.ts
// writes it in place): GET /events serialises each shared message once per client form
// rather than once per receiver (events/event-json.ts).

export class JsonText {
  constructor(readonly text: string) {}
}

/** The JSON of a reply body whose top-level values may be JsonText. */
export function stringifyBody(body: Record<string, unknown>): string {
  // Every poll's answer comes through here: no entry arrays, no parts to join.
  let out = '';
  for (const key in body) {
    const value = body[key];
    if (value === undefined) continue;
    const json = value instanceof JsonText ? value.text : JSON.stringify(value);
    out += `${out === '' ? '{' : ','}${JSON.stringify(key)}:${json}`;
  }
  return out === '' ? '{}' : `${out}}`;
}

/** Whether a body holds JsonText (and so needs stringifyBody). */
export function holdsJsonText(body: Record<string, unknown>): boolean {
  for (const value of Object.values(body)) if (value instanceof JsonText) return true;
  return false;
}
