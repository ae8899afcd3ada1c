// parseParams reads a request through a plan kept for its set of keys; it must answer as
// reading each property in turn does (parseEachProperty): the same values in the same order,
// the same ignored keys, or the same first error. Plain decimal integers skip JSON.parse and
// must read as parseParamValue reads them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from 'typebox';
import {
  parseEachProperty,
  parseParams,
  parseParamValue,
  type JsonSchema,
} from '../../src/lib/params.ts';
import { seededBelow } from '../support/seeded.ts';

const schema = Type.Object({
  queue_id: Type.Optional(Type.String({ maxLength: 5 })),
  last_event_id: Type.Optional(Type.Integer({ minimum: -3, maximum: 1000 })),
  dont_block: Type.Optional(Type.Boolean({ default: false })),
  to: Type.Union([Type.Integer(), Type.String()]),
  topic: Type.Optional(Type.String({ 'x-aliases': ['subject'] })),
  narrow: Type.Optional(Type.Array(Type.String(), { default: [] })),
  options: Type.Optional(Type.Object({ a: Type.Integer() }, { default: { a: 1 } })),
  mode: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Literal('mobile')])),
}) as unknown as JsonSchema;

type Outcome = { values: [string, unknown][]; ignored: readonly string[] } | { error: unknown };

function outcome(
  read: () => { values: Record<string, unknown>; ignored: readonly string[] },
): Outcome {
  try {
    const { values, ignored } = read();
    return { values: Object.entries(values), ignored };
  } catch (err) {
    return { error: (err as { toJSON?: () => unknown }).toJSON?.() ?? String(err) };
  }
}

/** A record as the HTTP layer gives it: every key an own property, no prototype. */
function record(entries: Array<[string, string]>): Record<string, string> {
  const raw: Record<string, string> = Object.create(null);
  for (const [k, v] of entries) raw[k] = v;
  return raw;
}

const integerTexts = ['0', '-0', '7', '-3', '-4', '1000', '1001', '007', '1e3', ' 5', '5 ', '+5'];
const texts = [...integerTexts, '', 'abc', 'abcdef', 'true', 'false', '[]', '["x"]', '[1]'];
texts.push(
  '{"a":2}',
  '{"a":"x"}',
  '{}',
  'mobile',
  '"mobile"',
  'null',
  '9007199254740993',
  'a\u0000',
);
const keys = ['queue_id', 'last_event_id', 'dont_block', 'to', 'topic', 'subject', 'narrow'];
keys.push('options', 'mode', 'extra', 'constructor', '__proto__', 'a\u0000b', 'a', 'b');

test('random requests read as reading each property in turn reads them', () => {
  const next = seededBelow(48);
  let errors = 0;
  for (let i = 0; i < 4000; i++) {
    const entries: Array<[string, string]> = [];
    // Few keys often, so that most shapes come again and are read through their kept plan.
    const count = next(4) === 0 ? next(8) : 1 + next(3);
    for (let k = 0; k < count; k++) {
      const key = keys[next(keys.length)];
      if (!entries.some(([e]) => e === key)) entries.push([key, texts[next(texts.length)]]);
    }
    if (next(3) > 0 && !entries.some(([e]) => e === 'to')) entries.push(['to', texts[next(8)]]);
    const expected = outcome(() => parseEachProperty(schema, record(entries)));
    if ('error' in expected) errors++;
    assert.deepEqual(
      outcome(() => parseParams(schema, record(entries))),
      expected,
      `${i}`,
    );
  }
  // Both kinds of answer were compared many times.
  assert.ok(errors > 500 && errors < 3500, `${errors} errors`);
});

test('keys that join alike are not taken for one another', () => {
  const joined = record([
    ['a\u0000b', '1'],
    ['to', '1'],
  ]);
  const apart = record([
    ['a', '1'],
    ['b', '1'],
    ['to', '1'],
  ]);
  assert.deepEqual(parseParams(schema, joined).ignored, ['a\u0000b']);
  assert.deepEqual(parseParams(schema, apart).ignored, ['a', 'b']);
  assert.deepEqual(parseParams(schema, joined).ignored, ['a\u0000b']);
});

/** A request of one parameter reads through its shape's plan as parseParamValue reads it. */
function assertReadsAsParamValue(
  schema: JsonSchema,
  name: string,
  property: JsonSchema,
  text: string,
): void {
  const expected = outcome(() => ({
    values: { [name]: parseParamValue(name, property, text) },
    ignored: [],
  }));
  assert.deepEqual(
    outcome(() => parseParams(schema, record([[name, text]]))),
    expected,
    JSON.stringify(text),
  );
}

test('plain decimal integers read as JSON text reads them', () => {
  const integer = { type: 'integer', minimum: -3, maximum: 1000 } as JsonSchema;
  const alone = Type.Object({
    n: Type.Integer({ minimum: -3, maximum: 1000 }),
  }) as unknown as JsonSchema;
  for (const text of [
    ...integerTexts,
    '123456789012345',
    '-123456789012345',
    '12345678901234567',
  ]) {
    assertReadsAsParamValue(alone, 'n', integer, text);
  }
  // -0 reads as JSON.parse reads it.
  assert.ok(Object.is(parseParams<{ n: number }>(alone, record([['n', '-0']])).values.n, -0));
});

test('a default list or object is a fresh copy each time', () => {
  const first = parseParams<{ narrow: string[]; options: object }>(schema, record([['to', '1']]));
  first.values.narrow.push('x');
  const second = parseParams<{ narrow: string[]; options: object }>(schema, record([['to', '1']]));
  assert.deepEqual(second.values.narrow, []);
  assert.notEqual(first.values.options, second.values.options);
});

test('names an object literal cannot hold read as each property in turn reads them', () => {
  // Built by name (no literal): a dash, a leading digit, and a default among them.
  const odd = Type.Object({
    'a-b': Type.Optional(Type.String()),
    '1x': Type.Optional(Type.Integer()),
    ok: Type.Optional(Type.Boolean({ default: true })),
  }) as unknown as JsonSchema;
  const requests: Array<Array<[string, string]>> = [
    [['a-b', 'x']],
    [
      ['1x', '7'],
      ['a-b', 'y'],
    ],
    [['1x', 'seven']],
    [],
  ];
  for (const entries of requests) {
    for (let round = 0; round < 2; round++) {
      assert.deepEqual(
        outcome(() => parseParams(odd, record(entries))),
        outcome(() => parseEachProperty(odd, record(entries))),
        JSON.stringify(entries),
      );
    }
  }
  assert.deepEqual(
    Object.entries(parseParams<Record<string, unknown>>(odd, record([['1x', '7']])).values),
    [
      ['1x', 7],
      ['ok', true],
    ],
  );
});

test('plain strings read as parseParamValue reads them, errors in its order', () => {
  const text = { type: 'string', minLength: 2, maxLength: 5 } as JsonSchema;
  const alone = Type.Object({
    s: Type.String({ minLength: 2, maxLength: 5 }),
  }) as unknown as JsonSchema;
  // Too long and holding NUL: the length is named first; too short likewise.
  for (const value of [
    'ab',
    'abcde',
    'abcdef',
    'a',
    '',
    'a\u0000',
    'abcdef\u0000',
    '\u0000',
    '😀😀',
  ]) {
    assertReadsAsParamValue(alone, 's', text, value);
  }
});
