// A client polls again on its connection with the query of its last poll but for the
// last_event_id it acknowledges: every answer, a heartbeat's too, brings a poll that differs
// from the one before in those digits alone. Reading the query and checking it against the
// schema was a sixth of the instructions of such a poll, the largest part of the listener's
// own (docs/performance.md, What we changed, session 63). So each connection keeps its last
// poll's parameters with the text around the id, and a query that matches that text with
// other digits between gets the same parameters with only the id read again, through the
// schema's own reader of it. Any other query is read in full, as before.
import { parseParams, propertyReader, type JsonSchema, type ParseResult } from '../lib/params.ts';
import { parseQueryValues } from './request-params.ts';
import { GetEventsParamsSchema } from './routes/events.ts';

const EVENTS_SCHEMA = GetEventsParamsSchema as unknown as JsonSchema;
const ID_KEY = 'last_event_id';
const ID_PAIR = `${ID_KEY}=`;
const readEventId = propertyReader(EVENTS_SCHEMA, ID_KEY);

type PollParams = ParseResult<Record<string, unknown>>;

/** One connection's last poll with a queue id and an event id, and its parameters. */
export class PollQuery {
  /** The query's text before the event id's digits, and after them. */
  private head = '';
  private tail = '';
  private values: Record<string, unknown> | null = null;
  private ignored: readonly string[] = [];

  /** The parameters of GET /events in this query, as parseParams gives them, or its error. */
  read(query: string): PollParams {
    const values = this.values;
    if (values !== null) {
      const from = this.head.length;
      const to = query.length - this.tail.length;
      if (
        to > from &&
        isIdText(query, from, to) &&
        // Compared as cut strings: V8 compiles startsWith into a loop over the characters of
        // the two sliced strings, about 3,800 instructions a poll (figure i).
        query.slice(0, from) === this.head &&
        query.slice(to) === this.tail
      ) {
        // The digits need no decoding and hold no separator, so every other pair is the
        // last poll's. Its values are shared but for the id: a poll of a queue reads them.
        return {
          values: { ...values, last_event_id: readEventId(query.slice(from, to)) },
          ignored: this.ignored,
        };
      }
    }
    const parsed = parseParams<Record<string, unknown>>(EVENTS_SCHEMA, parseQueryValues(query));
    this.remember(query, parsed);
    return parsed;
  }

  /**
   * Keep a parsed query whose event id is plain digits under its own unescaped key, and
   * which polls a queue: one without a queue id registers a queue from the parameters.
   */
  private remember(query: string, parsed: PollParams): void {
    this.values = null;
    if (parsed.values.queue_id === undefined || parsed.values[ID_KEY] === undefined) return;
    // (A parsed query names the key once: a second would have been refused.)
    let from = ID_PAIR.length;
    if (!query.startsWith(ID_PAIR)) {
      const pair = query.indexOf(`&${ID_PAIR}`);
      if (pair < 0) return;
      from += pair + 1;
    }
    let to = query.indexOf('&', from);
    if (to < 0) to = query.length;
    if (to === from || !isIdText(query, from, to)) return;
    this.head = query.slice(0, from);
    this.tail = query.slice(to);
    this.values = parsed.values;
    this.ignored = parsed.ignored;
  }
}

/** Digits and minus signs only: text that decodes to itself and splits no pair. */
function isIdText(query: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = query.charCodeAt(i);
    if ((c < 0x30 || c > 0x39) && c !== 0x2d) return false;
  }
  return true;
}
