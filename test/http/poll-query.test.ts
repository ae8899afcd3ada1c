// A connection's repeated polls (http/poll-query.ts) read as every poll is read in full
// (lib/params.ts over the one-pass query reader): the same parameters, the same unknown
// keys, or the same error, whatever the poll before on the connection was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseQueryValues } from '../../src/http/request-params.ts';
import { PollQuery } from '../../src/http/poll-query.ts';
import { GetEventsParamsSchema } from '../../src/http/routes/events.ts';
import { parseParams, type JsonSchema } from '../../src/lib/params.ts';
import { seededBelow } from '../support/seeded.ts';

type Outcome =
  | { values: Record<string, unknown>; ignored: readonly string[] }
  | { error: string; code: unknown };

function outcome(read: () => { values: Record<string, unknown>; ignored: readonly string[] }) {
  try {
    const { values, ignored } = read();
    return { values: { ...values }, ignored: [...ignored] } as Outcome;
  } catch (err) {
    return { error: (err as Error).message, code: (err as { code?: unknown }).code } as Outcome;
  }
}

const inFull = (query: string): Outcome =>
  outcome(() =>
    parseParams<Record<string, unknown>>(
      GetEventsParamsSchema as unknown as JsonSchema,
      parseQueryValues(query),
    ),
  );

/** Each query of the sequence read on one connection, checked against a read in full. */
function assertSequence(queries: string[]): Outcome[] {
  const connection = new PollQuery();
  return queries.map((query, i) => {
    const read = outcome(() => connection.read(query));
    assert.deepEqual(read, inFull(query), `poll ${i} of ${JSON.stringify(queries)}`);
    return read;
  });
}

const Q = 'queue_id=1764200000%3A12';
/** What every poll gives beside queue_id and last_event_id: its own default and register's. */
const DEFAULTS = {
  dont_block: false,
  apply_markdown: false,
  client_gravatar: true,
  slim_presence: false,
  narrow: [],
  include_subscribers: false,
};

test("the event id read again is the poll's own, and so is its error", () => {
  const reads = assertSequence([
    `${Q}&last_event_id=41`,
    `${Q}&last_event_id=42`,
    `${Q}&last_event_id=-1`,
    `${Q}&last_event_id=1234567`,
    `${Q}&last_event_id=007`,
    `${Q}&last_event_id=1-2`,
    `${Q}&last_event_id=-0`,
    `${Q}&last_event_id=8`,
  ]);
  const at = (id: number) => ({
    values: { queue_id: '1764200000:12', last_event_id: id, ...DEFAULTS },
    ignored: [],
  });
  assert.deepEqual(reads.slice(0, 4), [at(41), at(42), at(-1), at(1234567)]);
  const notInteger = { error: 'last_event_id is not an integer', code: 'BAD_REQUEST' };
  assert.deepEqual(reads.slice(4, 6), [notInteger, notInteger]);
  assert.deepEqual(reads[7], at(8));
});

test("other pairs around the id are the last poll's, or the poll is read in full", () => {
  const reads = assertSequence([
    `last_event_id=3&${Q}&dont_block=true&colour=red`,
    `last_event_id=4&${Q}&dont_block=true&colour=red`,
    // Text between that is more than an id: other pairs, a second id, escapes.
    `last_event_id=4&dont_block=false&${Q}&dont_block=true&colour=red`,
    `${Q}&last_event_id=5&colour=blue`,
    `${Q}&last_event_id=5&last_event_id=6&colour=blue`,
    `${Q}&last_event_id=%36&colour=blue`,
    `${Q}&last_event_id=7+&colour=blue`,
    `${Q}&last_event_id=&colour=blue`,
    `${Q}&last_event_id=8&colour=blue`,
    `${Q}&last_event_id=8&colour=blue&colour=red`,
    // A key spelled with an escape is read in full every time.
    `${Q}&last%5Fevent_id=9`,
    `${Q}&last%5Fevent_id=10`,
    // So is a poll without a queue id, which registers a queue from the parameters.
    'last_event_id=11&event_types=%5B%22message%22%5D',
    'last_event_id=12&event_types=%5B%22message%22%5D',
  ]);
  assert.deepEqual(reads[1], {
    values: { queue_id: '1764200000:12', last_event_id: 4, ...DEFAULTS, dont_block: true },
    ignored: ['colour'],
  });
  assert.deepEqual(reads[2], {
    error: "Parameter 'dont_block' was given more than once",
    code: 'BAD_REQUEST',
  });
  assert.deepEqual(reads[4], {
    error: "Parameter 'last_event_id' was given more than once",
    code: 'BAD_REQUEST',
  });
  assert.equal((reads[5] as { values: Record<string, unknown> }).values.last_event_id, 6);
  // '+' is a space, which JSON reads past.
  assert.equal((reads[6] as { values: Record<string, unknown> }).values.last_event_id, 7);
  assert.equal((reads[12] as { values: Record<string, unknown> }).values.queue_id, undefined);
});

test('random sequences of polls on one connection read as each read in full', () => {
  const random = seededBelow(63);
  const ids = [
    '0',
    '1',
    '41',
    '-1',
    '-',
    '--1',
    '007',
    '1-',
    '99999999999999999',
    '',
    '%31',
    '5&x',
  ];
  const around = [
    (id: string) => `${Q}&last_event_id=${id}`,
    (id: string) => `${Q}&last_event_id=${id}&dont_block=true`,
    (id: string) => `last_event_id=${id}&${Q}&x=1`,
    (id: string) => `${Q}&dont_block=maybe&last_event_id=${id}`,
    (id: string) => `queue_id=a&last_event_id=${id}`,
    (id: string) => `last_event_id=${id}`,
  ];
  for (let run = 0; run < 200; run++) {
    const queries = Array.from({ length: 6 }, () =>
      around[random(around.length)](ids[random(ids.length)]),
    );
    assertSequence(queries);
  }
});

test('a poll that differs from the last in its event id alone is not read in full', () => {
  const connection = new PollQuery();
  const first = connection.read(`${Q}&last_event_id=1`);
  const again = connection.read(`${Q}&last_event_id=2`);
  const other = connection.read(`${Q}&last_event_id=3&dont_block=true`);
  // A read in full makes the default list of narrow afresh; a kept read shares the last one's.
  assert.equal(again.values.narrow, first.values.narrow);
  assert.notEqual(other.values.narrow, again.values.narrow);
  assert.equal(again.values.last_event_id, 2);
});
