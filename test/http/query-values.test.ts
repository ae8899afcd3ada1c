// The one-pass query reader of http/direct-listener.ts gives what the two-step path
// (node:querystring, then collectQueryValues) gives Fastify's routes: the same parameters,
// or the same error, for plain queries and odd ones alike.
import { parse as parseQuery } from 'node:querystring';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { collectQueryValues, parseQueryValues } from '../../src/http/request-params.ts';
import { seededBelow } from '../support/seeded.ts';

type Outcome = { values: Record<string, string> } | { error: string };

function outcome(read: () => Record<string, string>): Outcome {
  try {
    // A plain object with the same entries in the same order: deepEqual compares prototypes.
    return { values: Object.fromEntries(Object.entries(read())) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

const twoStep = (query: string): Outcome => outcome(() => collectQueryValues(parseQuery(query)));
const onePass = (query: string): Outcome => outcome(() => parseQueryValues(query));

test('plain and odd queries read as the two-step path reads them', () => {
  const cases: Array<[string, Outcome]> = [
    ['', { values: {} }],
    [
      'queue_id=1764200000%3A12&last_event_id=41',
      { values: { queue_id: '1764200000:12', last_event_id: '41' } },
    ],
    ['a+b=c+d%2B', { values: { 'a b': 'c d+' } }],
    ['&a=1&&b&=&', { values: { a: '1', b: '', '': '' } }],
    ['a=1=2', { values: { a: '1=2' } }],
    ['%61=%C3%A9', { values: { a: 'é' } }],
    // An own key named __proto__, as JSON.parse makes it (a literal would set the prototype).
    ['__proto__=1', { values: JSON.parse('{"__proto__":"1"}') as Record<string, string> }],
    // Text decodeURIComponent refuses is read by querystring's own unescaping.
    ['%ZZ=1&a=%E0%A4%A', { values: { '%ZZ': '1', a: '\ufffd%A' } }],
    ['a=1&a=2', { error: "Parameter 'a' was given more than once" }],
    // The first key in the query's order that repeats is named, whatever follows it.
    ['a=1&b=1&b=2&a=2', { error: "Parameter 'a' was given more than once" }],
    ['a=1&b=%ED%A0%80&a=2', { error: "Parameter 'a' was given more than once" }],
  ];
  for (const [query, expected] of cases) {
    assert.deepEqual(twoStep(query), expected, `two-step: ${query}`);
    assert.deepEqual(onePass(query), expected, `one pass: ${query}`);
  }
  // querystring reads 1,000 pairs and drops the rest; so does the one-pass reader.
  const many = Array.from({ length: 1200 }, (_, i) => `k${i}=${i}`).join('&');
  const read = onePass(many);
  assert.deepEqual(read, twoStep(many));
  assert.equal(Object.keys((read as { values: object }).values).length, 1000);
});

test('random queries of awkward pieces read the same both ways', () => {
  const pieces = ['a', 'b', 'id', '=', '&', '&&', '+', '%', '%2', '%3A', '%2B', '%C3%A9', '%ZZ'];
  pieces.push(
    '%ED%A0%80',
    '%E0%A4',
    'é',
    '1',
    '-1',
    '[1]',
    '__proto__',
    'constructor',
    '&a=',
    '&b=',
    // Surrogates as text, alone and paired, not escaped.
    '\uD800',
    '\uDC00',
    '\uD83D\uDE00',
  );
  const next = seededBelow(47);
  let errors = 0;
  for (let i = 0; i < 5000; i++) {
    let query = '';
    for (let n = next(12); n >= 0; n--) query += pieces[next(pieces.length)];
    const expected = twoStep(query);
    if ('error' in expected) errors++;
    assert.deepEqual(onePass(query), expected, query);
  }
  // Both outcomes were exercised.
  assert.ok(errors > 150 && errors < 4500, `${errors} errors`);
});
