// Generated hostile requests for property-based tests: the routes and their parameter
// schemas come from the app's own OpenAPI document; fast-check builds requests from them
// that are wrong in every way a client (or an attacker) can be wrong: wrong types, missing
// and unknown parameters, repeated ones, broken or deeply nested JSON, huge strings, NUL
// and invalid UTF-8, out-of-range integers, ids of things that do not exist or belong to
// someone else, and bodies of the wrong content type.
import fc from 'fast-check';
import type { JsonSchema } from '../../src/lib/params.ts';

export interface ParamSpec {
  name: string;
  schema: JsonSchema;
  required: boolean;
}

export interface Operation {
  method: string;
  /** OpenAPI path, with {name} placeholders. */
  path: string;
  pathParams: ParamSpec[];
  params: ParamSpec[];
}

interface OpenApiOperation {
  parameters?: Array<{ in: string; name: string; required?: boolean; schema: JsonSchema }>;
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
}

/** Every operation of the document, in document order. */
export function listOperations(doc: {
  paths: Record<string, Record<string, OpenApiOperation>>;
}): Operation[] {
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const pathParams: ParamSpec[] = [];
      const params: ParamSpec[] = [];
      for (const p of op.parameters ?? []) {
        const spec = { name: p.name, schema: p.schema, required: p.required === true };
        (p.in === 'path' ? pathParams : params).push(spec);
      }
      for (const media of Object.values(op.requestBody?.content ?? {})) {
        const required = new Set(media.schema.required ?? []);
        for (const [name, schema] of Object.entries(media.schema.properties ?? {})) {
          params.push({ name, schema, required: required.has(name) });
        }
      }
      ops.push({ method: method.toUpperCase(), path, pathParams, params });
    }
  }
  return ops;
}

/**
 * Values no parameter should choke on; also walked parameter by parameter in
 * test/http/conventions.test.ts.
 */
export const HOSTILE_VALUES = [
  '',
  ' ',
  'null',
  'true',
  '0',
  '-1',
  '1e309',
  '9007199254740993',
  '[]',
  '{}',
  '[{}]',
  '{"new":null}',
  '{"new":{"direct_members":[1e999],"direct_subgroups":[]}}',
  '{"__proto__":{"x":1}}',
  // What every object inherits: a lookup in a plain table must not find it.
  'constructor',
  '__proto__',
  '{"constructor":{"x":1}}',
  '"\u0000"',
  '\u0000',
  '\ud800',
  'x'.repeat(5000),
  '%',
  '\u202e\u0301',
  '../../etc/passwd',
  "' OR 1=1 --",
];

/** Path segments (already percent-encoded) that no route should choke on. */
export const HOSTILE_SEGMENTS = [
  '%00',
  '..%2F..%2F',
  '%F0%9F%98%80',
  'a'.repeat(400),
  '-1',
  '1.5',
  '0x10',
  'user1%40parley.test',
];

/** More of the same for the generator: numbers at and past every edge, JSON oddities. */
const MORE_HOSTILE = [
  'false',
  '-0',
  '1.5',
  '-1e309',
  'NaN',
  'Infinity',
  '2147483647',
  '2147483648',
  '-2147483649',
  '99999999999999999999',
  '0x10',
  '1_000',
  '[null]',
  '[[]]',
  '[-1,0,2147483648]',
  '[1,1,1]',
  '{"constructor":{"prototype":{"x":1}}}',
  '{"\u0000":1}',
  '["\u0000"]',
  '"x"',
  '\udc00x',
  '%00',
  '%FF',
  'me',
  '*',
  'owner@other.test',
  'member@parley.test',
  'general',
  '<script>alert(1)</script>',
  '${7*7}',
  '\r\nX-Injected: 1',
];

/** A value as it travels: text (UTF-8 on the wire) or raw bytes that are not valid UTF-8. */
export type WireValue = { text: string } | { bytes: Buffer };

const INVALID_UTF8 = [
  [0xff],
  [0xfe, 0xff],
  [0xc3],
  [0xc0, 0x80],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0x61, 0x00, 0xff],
].map((b) => Buffer.from(b));

/** Ids to try where a parameter wants one: everything stored, and ids nothing has. */
export interface IdPool {
  ids: number[];
}

const EDGE_INTEGERS = [0, -1, -2147483648, 2147483647, 2147483648, 2 ** 53, 999999];

function integerArb(schema: JsonSchema, pool: IdPool): fc.Arbitrary<number> {
  const min = schema.minimum ?? -(2 ** 31);
  const max = schema.maximum ?? 2 ** 31;
  const inRange = [...pool.ids, ...EDGE_INTEGERS].filter((n) => n >= min && n <= max);
  return fc.oneof(
    { arbitrary: fc.constantFrom(...(inRange.length > 0 ? inRange : [min])), weight: 3 },
    {
      arbitrary: fc.integer({ min: Math.max(min, -(2 ** 31)), max: Math.min(max, 2 ** 31) }),
      weight: 1,
    },
  );
}

/** A value the parameter's schema accepts, so a request also gets past type checks. */
export function validValue(schema: JsonSchema, pool: IdPool, depth = 0): fc.Arbitrary<unknown> {
  if (schema.anyOf && schema.anyOf.length > 0) {
    return fc.oneof(...schema.anyOf.map((s) => validValue(s, pool, depth)));
  }
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return fc.constantFrom(...schema.enum);
  switch (schema.type) {
    case 'string': {
      const minLength = schema.minLength ?? 0;
      const maxLength = Math.max(minLength, Math.min(schema.maxLength ?? 40, 40));
      return fc.oneof(
        fc.string({ minLength, maxLength }),
        fc.constantFrom('general', 'member@parley.test', 'owner@other.test', 'UTC', 'smile'),
      );
    }
    case 'integer':
      return integerArb(schema, pool);
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      if (depth > 3) return fc.constant([]);
      return fc.array(schema.items ? validValue(schema.items, pool, depth + 1) : fc.jsonValue(), {
        maxLength: Math.min(schema.maxItems ?? 4, 4),
      });
    case 'object': {
      if (depth > 3) return fc.constant({});
      const props = Object.entries(schema.properties ?? {});
      if (props.length === 0) {
        const values =
          typeof schema.additionalProperties === 'object'
            ? validValue(schema.additionalProperties, pool, depth + 1)
            : fc.jsonValue({ maxDepth: 2 });
        return fc.dictionary(fc.string({ maxLength: 10 }), values, { maxKeys: 3 });
      }
      return fc.record(
        Object.fromEntries(props.map(([k, s]) => [k, validValue(s, pool, depth + 1)])),
        { requiredKeys: (schema.required ?? []).filter((k) => schema.properties?.[k]) },
      );
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** A value of some other type than the schema wants. */
function wrongTypeText(schema: JsonSchema): fc.Arbitrary<string> {
  const byType: Record<string, string[]> = {
    integer: ['abc', '1.5', 'true', '[1]', '{"a":1}', '"1"', '1e3'],
    number: ['abc', 'true', '[1]', '"1"'],
    boolean: ['yes', '1', 'True', '"true"', '[true]'],
    array: ['{}', '"x"', '1', '[', 'null', '[1,'],
    object: ['[]', '"x"', '1', '{', 'null', '{"a":'],
    string: ['[]', '{}', '1'],
  };
  return fc.constantFrom(...(byType[schema.type ?? ''] ?? ['[', '{', 'abc', '1', '[]']));
}

const deepJsonText = fc
  .tuple(fc.integer({ min: 33, max: 100000 }), fc.constantFrom('[', '{"a":'))
  .map(([n, open]) =>
    open === '[' ? '['.repeat(n) + ']'.repeat(n) : open.repeat(n) + '1' + '}'.repeat(n),
  );

/** Strings past any limit, up to 1 MB (the request body limit is 1 MiB). */
const hugeText = fc
  .tuple(fc.integer({ min: 1001, max: 1_000_000 }), fc.constantFrom('x', 'é', '😀', ' '))
  .map(([n, ch]) => ch.repeat(Math.ceil(n / Buffer.byteLength(ch))));

const invalidUtf8 = fc
  .tuple(fc.constantFrom(...INVALID_UTF8), fc.string({ maxLength: 8 }))
  .map(([bad, text]): WireValue => ({ bytes: Buffer.concat([Buffer.from(text), bad]) }));

/** A hostile value for one parameter. */
export function hostileValue(schema: JsonSchema, pool: IdPool): fc.Arbitrary<WireValue> {
  const text = (arb: fc.Arbitrary<string>) => arb.map((t): WireValue => ({ text: t }));
  return fc.oneof(
    { arbitrary: text(fc.constantFrom(...HOSTILE_VALUES, ...MORE_HOSTILE)), weight: 6 },
    { arbitrary: text(wrongTypeText(schema)), weight: 4 },
    {
      arbitrary: text(fc.constantFrom(...pool.ids.map(String), ...EDGE_INTEGERS.map(String))),
      weight: 3,
    },
    {
      arbitrary: text(
        fc.array(integerArb({}, pool), { maxLength: 3 }).map((a) => JSON.stringify(a)),
      ),
      weight: 2,
    },
    { arbitrary: text(fc.string({ unit: 'binary', maxLength: 30 })), weight: 2 },
    { arbitrary: text(fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v))), weight: 2 },
    { arbitrary: text(deepJsonText), weight: 1 },
    { arbitrary: text(hugeText), weight: 1 },
    { arbitrary: invalidUtf8, weight: 2 },
  );
}

const asWire = (value: unknown): WireValue => ({
  text: typeof value === 'string' ? value : JSON.stringify(value),
});

export type Encoding =
  'query' | 'form' | 'json' | 'multipart' | 'wrong-content-type' | 'invalid-json' | 'deep-json';

export interface HostileRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: Buffer;
  /** What was generated, for failure messages. */
  describe: string;
}

const UNKNOWN_NAMES = [
  'zzz_unknown',
  '__proto__',
  'constructor',
  'hasOwnProperty',
  'a[b]',
  'x\u0000y',
  '',
  'x'.repeat(300),
];

function percentEncode(value: WireValue): string {
  const bytes = 'bytes' in value ? value.bytes : Buffer.from(value.text, 'utf8');
  let out = '';
  for (const b of bytes) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9\-_.~]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function formEncode(entries: Array<[string, WireValue]>): string {
  return entries.map(([k, v]) => `${percentEncode({ text: k })}=${percentEncode(v)}`).join('&');
}

function isJsonText(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** A JSON object body; byte values go in raw (invalid UTF-8 inside a JSON string). */
function jsonBody(entries: Array<[string, WireValue]>, typed: boolean): Buffer {
  const parts: Buffer[] = [Buffer.from('{')];
  entries.forEach(([k, v], i) => {
    parts.push(Buffer.from(`${i > 0 ? ',' : ''}${JSON.stringify(k)}:`));
    if ('bytes' in v) {
      parts.push(Buffer.from('"'), v.bytes, Buffer.from('"'));
      return;
    }
    // Typed: JSON text goes in as itself (a number, a list, a deep nest), anything else as a string.
    parts.push(Buffer.from(typed && isJsonText(v.text) ? v.text : JSON.stringify(v.text)));
  });
  parts.push(Buffer.from('}'));
  return Buffer.concat(parts);
}

function multipartBody(entries: Array<[string, WireValue]>, boundary: string): Buffer {
  const parts: Buffer[] = [];
  for (const [k, v] of entries) {
    parts.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n`),
      'bytes' in v ? v.bytes : Buffer.from(v.text),
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(parts);
}

function showValue(v: WireValue): string {
  const s = 'bytes' in v ? `bytes:${v.bytes.toString('hex')}` : JSON.stringify(v.text);
  return s.length > 80 ? `${s.slice(0, 60)}…(${s.length} chars)` : s;
}

/** Arbitrary hostile requests for one operation; `headers` carry the caller's credentials. */
export function hostileRequests(
  op: Operation,
  pool: IdPool,
  headers: Record<string, string>,
): fc.Arbitrary<HostileRequest> {
  const validOrNone = (p: ParamSpec) =>
    fc.option(validValue(p.schema, pool).map(asWire), { freq: 3 });
  // Either every parameter is left out, valid or hostile independently, or all are valid
  // (or left out) but one, so that a hostile value also reaches the code past the checks.
  const independent = fc.tuple(
    ...op.params.map((p) =>
      fc.oneof(
        { arbitrary: fc.constant(null), weight: 3 },
        { arbitrary: validValue(p.schema, pool).map(asWire), weight: 4 },
        { arbitrary: hostileValue(p.schema, pool), weight: 4 },
      ),
    ),
  );
  const oneHostile =
    op.params.length === 0
      ? independent
      : fc
          .nat(op.params.length - 1)
          .chain((k) =>
            fc.tuple(
              ...op.params.map((p, i) => (i === k ? hostileValue(p.schema, pool) : validOrNone(p))),
            ),
          );
  const pathArbs = op.pathParams.map((p) =>
    fc.oneof(
      { arbitrary: validValue(p.schema, pool).map((v) => percentEncode(asWire(v))), weight: 3 },
      { arbitrary: fc.constantFrom(...HOSTILE_SEGMENTS), weight: 2 },
      {
        arbitrary: fc.constantFrom(
          ...[...pool.ids, ...EDGE_INTEGERS].map(String),
          '%FF',
          '%ED%A0%80',
          'me',
          '',
        ),
        weight: 3,
      },
    ),
  );
  const encodings: Encoding[] =
    op.method === 'GET'
      ? ['query', 'query', 'query', 'form', 'wrong-content-type']
      : ['form', 'json', 'multipart', 'query', 'wrong-content-type', 'invalid-json', 'deep-json'];
  return fc
    .record({
      values: fc.oneof(independent, oneHostile),
      path: fc.tuple(...pathArbs),
      unknown: fc.array(fc.tuple(fc.constantFrom(...UNKNOWN_NAMES), hostileValue({}, pool)), {
        maxLength: 2,
      }),
      repeat: fc.option(fc.nat(), { freq: 4 }),
      encoding: fc.constantFrom(...encodings),
      typed: fc.boolean(),
      depth: fc.integer({ min: 33, max: 5000 }),
      contentType: fc.constantFrom(
        'text/plain',
        'application/xml',
        'application/octet-stream',
        'multipart/form-data',
        'application/json; charset=utf-16',
        'image/png',
      ),
      invalidJson: fc.constantFrom('{"a":', '{', '[1]', '"x"', 'null', '{"a":1}}', '\u0000'),
    })
    .map((g) => {
      const entries: Array<[string, WireValue]> = [];
      op.params.forEach((p, i) => {
        const v = g.values[i];
        if (v !== null) entries.push([p.name, v]);
      });
      entries.push(...g.unknown);
      if (g.repeat !== null && entries.length > 0) {
        entries.push(entries[g.repeat % entries.length]);
      }
      let path = op.path;
      op.pathParams.forEach((p, i) => {
        path = path.replace(`{${p.name}}`, g.path[i]);
      });
      const req: HostileRequest = {
        method: op.method,
        url: path,
        headers: { ...headers },
        describe: '',
      };
      const shown = entries.map(([k, v]) => `${k}=${showValue(v)}`).join(' ');
      switch (g.encoding) {
        case 'query':
          if (entries.length > 0) req.url += `?${formEncode(entries)}`;
          break;
        case 'form':
          req.headers['content-type'] = 'application/x-www-form-urlencoded';
          req.payload = Buffer.from(formEncode(entries));
          break;
        case 'json':
          req.headers['content-type'] = 'application/json';
          req.payload = jsonBody(entries, g.typed);
          break;
        case 'multipart': {
          const boundary = 'fuzzboundary7MA4YWxkTrZu0gW';
          req.headers['content-type'] = `multipart/form-data; boundary=${boundary}`;
          req.payload = multipartBody(entries, boundary);
          break;
        }
        case 'wrong-content-type':
          req.headers['content-type'] = g.contentType;
          req.payload = Buffer.from(formEncode(entries));
          break;
        case 'invalid-json':
          req.headers['content-type'] = 'application/json';
          req.payload = Buffer.from(g.invalidJson);
          break;
        case 'deep-json': {
          const depth = g.depth;
          req.headers['content-type'] = 'application/json';
          const key = entries[0]?.[0] ?? 'x';
          req.payload = Buffer.from(
            `{${JSON.stringify(key)}:${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`,
          );
          break;
        }
      }
      req.describe = `${op.method} ${req.url.length > 200 ? `${req.url.slice(0, 200)}…` : req.url} [${g.encoding}${g.encoding === 'wrong-content-type' ? ` ${g.contentType}` : ''}] ${shown}`;
      return req;
    });
}
