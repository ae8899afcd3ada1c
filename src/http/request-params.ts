// Collects a request's raw parameters: the query string and the body (form-encoded,
// multipart or JSON), each key once, every value a string. Uploaded files are kept aside.
import type { FastifyRequest } from 'fastify';
import { parse as parseQuery } from 'node:querystring';
import { badRequest, JsonableError } from '../lib/errors.ts';
import { jsonDepth, MAX_JSON_DEPTH } from '../lib/params.ts';

export interface UploadedFile {
  fieldname: string;
  filename: string;
  mimetype: string;
  data: Buffer;
}

export interface RawParams {
  values: Record<string, string>;
  files: UploadedFile[];
}

/** Form fields of a multipart body, together, are held to the limit of any other body (src/app.ts). */
const MAX_MULTIPART_FIELD_BYTES = 1024 * 1024;

function tooLarge(): JsonableError {
  return new JsonableError('Request body too large', 'REQUEST_TOO_LARGE', 413);
}

function addValue(
  out: Record<string, string>,
  key: string,
  value: unknown,
  fromJson = false,
): void {
  if (Object.hasOwn(out, key)) throw badRequest(`Parameter '${key}' was given more than once`);
  // The form and query parsers make a list of a repeated key; in a JSON body a list is a value.
  if (Array.isArray(value) && !fromJson) {
    throw badRequest(`Parameter '${key}' was given more than once`);
  }
  if (typeof value === 'string') out[key] = checkText(key, value);
  else if (value === undefined) return;
  // A JSON body's value is turned back into text for lib/params.ts; too deep a value
  // would overflow the stack of JSON.stringify, so it is refused here with the same message.
  else if (jsonDepth(value) > MAX_JSON_DEPTH) throw badRequest(`${key} is nested too deeply`);
  else out[key] = checkText(key, JSON.stringify(value));
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const SURROGATE = /[\uD800-\uDFFF]/;

/** Values must be well-formed text (lib/params.ts refuses NUL in the parameters it reads). */
function checkText(key: string, value: string): string {
  if (LONE_SURROGATE.test(value)) throw badRequest(`Parameter '${key}' is not valid UTF-8`);
  return value;
}

/**
 * An empty record of parameters: any key is an own property, `__proto__` and `constructor`
 * among them, as with Object.create(null), since its prototype has none and no prototype of
 * its own. V8 keeps an object made by Object.create(null) as a hash table (dictionary mode),
 * where every `in`, Object.hasOwn and Object.keys took the slow path: about half of a poll's
 * parameter work (docs/performance.md, figure 5, session 48). An object made by this
 * constructor starts with fast properties.
 */
const ParamRecord = function ParamRecord() {} as unknown as new () => Record<string, string>;
ParamRecord.prototype = Object.create(null) as object;

/** The parameters of a parsed query string (node:querystring's, as Fastify is set up to use). */
export function collectQueryValues(query: Record<string, unknown>): Record<string, string> {
  const values = new ParamRecord();
  // Every poll comes through here: no entry arrays. The parsed query has no prototype.
  for (const k of Object.keys(query)) addValue(values, k, query[k]);
  return values;
}

/** More pairs than node:querystring reads (its maxKeys): such a query takes the slow path. */
const MAX_QUICK_PAIRS = 1000;

/**
 * A query string's parameters, as collectQueryValues(querystring.parse(query)) gives them,
 * in one pass over the text. Every GET /events comes through here (http/direct-listener.ts):
 * the parse, then the copy into a record, was a third of the poll's parameter work and an
 * object and an array per poll. Anything unusual (a repeated key, text decodeURIComponent
 * refuses, a refused value, very many pairs) is read again by the two-step path, so its
 * answer and its error are that path's exactly.
 */
export function parseQueryValues(query: string): Record<string, string> {
  const values = new ParamRecord();
  // decodeURIComponent never makes a lone surrogate (it refuses their UTF-8), so only a
  // query holding surrogates itself can give a value one; one from HTTP never does.
  const surrogates = SURROGATE.test(query);
  let pairs = 0;
  for (let start = 0; start < query.length;) {
    let end = query.indexOf('&', start);
    if (end < 0) end = query.length;
    // querystring skips empty pairs ("a=1&&b=2"); "=" alone is the empty key.
    if (end > start) {
      const eq = query.indexOf('=', start);
      const split = eq >= 0 && eq < end ? eq : end;
      const key = recentKey(query, start, split) ?? decodeQueryPart(query, start, split);
      const value = split < end ? decodeQueryPart(query, split + 1, end) : '';
      if (
        ++pairs > MAX_QUICK_PAIRS ||
        key === undefined ||
        value === undefined ||
        key in values ||
        (surrogates && LONE_SURROGATE.test(value))
      )
        return collectQueryValues(parseQuery(query));
      values[key] = value;
    }
    start = end + 1;
  }
  return values;
}

/**
 * Keys of recent queries that needed no decoding, in the order they came. A key text met
 * again is given as the string kept, which V8 has interned already: a new string for it was
 * hashed and looked up in V8's string table at its first use as a property name, in every
 * poll (figure 5, session 48).
 */
const recentKeys: string[] = [];
const RECENT_KEYS = 16;
let nextRecentKey = 0;

/** The query's text from..to as a key, the kept string when one is that text. */
function recentKey(query: string, from: number, to: number): string | undefined {
  const length = to - from;
  for (let i = 0; i < recentKeys.length; i++) {
    const key = recentKeys[i];
    if (key.length === length && query.startsWith(key, from)) return key;
  }
  const key = query.slice(from, to);
  // Text with an escape or a '+' is not the key it reads as.
  if (key.includes('%') || key.includes('+')) return undefined;
  recentKeys[nextRecentKey] = key;
  nextRecentKey = (nextRecentKey + 1) % RECENT_KEYS;
  return key;
}

/** One key or value of a query string, decoded as querystring does; undefined if it falls back. */
function decodeQueryPart(query: string, from: number, to: number): string | undefined {
  let part = query.slice(from, to);
  if (part.includes('+')) part = part.replaceAll('+', ' ');
  if (!part.includes('%')) return part;
  const ascii = decodeAsciiEscapes(part);
  if (ascii !== undefined) return ascii;
  try {
    return decodeURIComponent(part);
  } catch {
    return undefined;
  }
}

/**
 * The text with its escapes decoded, when each is of an ASCII character (%00-%7F), as
 * decodeURIComponent would decode them; undefined for any other escape. A queue id's colon
 * comes as %3A in every poll, and decodeURIComponent, a call into V8's runtime, took about a
 * quarter of the poll's query reading (docs/performance.md, figure 5, session 48).
 */
function decodeAsciiEscapes(part: string): string | undefined {
  let out = '';
  let from = 0;
  for (let at = part.indexOf('%'); at >= 0; at = part.indexOf('%', from)) {
    const high = hexDigit(part.charCodeAt(at + 1));
    const low = hexDigit(part.charCodeAt(at + 2));
    if (high < 0 || high > 7 || low < 0) return undefined;
    out += part.slice(from, at) + String.fromCharCode(high * 16 + low);
    from = at + 3;
  }
  return out + part.slice(from);
}

/** The value of a hexadecimal digit's character code, -1 for any other (NaN included). */
function hexDigit(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 65 && code <= 70) return code - 55;
  if (code >= 97 && code <= 102) return code - 87;
  return -1;
}

export async function collectRawParams(
  request: FastifyRequest,
  maxFileBytes: number,
): Promise<RawParams> {
  const values = collectQueryValues((request.query ?? {}) as Record<string, unknown>);
  const files: UploadedFile[] = [];

  if (request.isMultipart()) {
    let fieldBytes = 0;
    try {
      for await (const part of request.parts({
        limits: { fileSize: maxFileBytes, files: 4, fields: 200 },
      })) {
        if (part.type === 'file') {
          const data = await part.toBuffer();
          files.push({
            fieldname: part.fieldname,
            filename: part.filename,
            mimetype: part.mimetype,
            data,
          });
        } else {
          // Busboy cuts a field at fieldSize and says so: refuse rather than keep part of a value.
          fieldBytes += Buffer.byteLength(String(part.value));
          if (part.valueTruncated || fieldBytes > MAX_MULTIPART_FIELD_BYTES) throw tooLarge();
          addValue(
            values,
            part.fieldname,
            typeof part.value === 'string' ? part.value : String(part.value),
          );
        }
      }
    } catch (err) {
      if (err instanceof JsonableError) throw err;
      const code = (err as { code?: string }).code ?? '';
      if (code === 'FST_REQ_FILE_TOO_LARGE') {
        throw new JsonableError(
          `Uploaded file is larger than the allowed limit of ${Math.floor(maxFileBytes / 1024 / 1024)} MiB`,
          'BAD_REQUEST',
          413,
        );
      }
      throw badRequest('Malformed multipart body');
    }
  } else if (request.body !== undefined && request.body !== null && request.body !== '') {
    const body = request.body;
    // Fastify's built-in text/plain parser hands over a string: not a parameter format.
    if (typeof body === 'string' && !/json/i.test(request.headers['content-type'] ?? ''))
      throw new JsonableError('Unsupported Content-Type', 'UNSUPPORTED_MEDIA_TYPE', 415);
    if (typeof body !== 'object' || Array.isArray(body))
      throw badRequest('The request body must hold named parameters');
    addBodyValues(
      values,
      body as Record<string, unknown>,
      /json/i.test(request.headers['content-type'] ?? ''),
    );
  }
  return { values, files };
}

/** A parsed body's parameters added to the query's: a key in both is given more than once. */
function addBodyValues(
  values: Record<string, string>,
  body: Record<string, unknown>,
  fromJson: boolean,
): void {
  for (const [k, v] of Object.entries(body)) addValue(values, k, v, fromJson);
}

/**
 * A form-encoded request's parameters, its query's and its body's, as collectRawParams reads
 * them through Fastify and @fastify/formbody (both with node:querystring, src/app.ts).
 */
export function collectFormValues(query: string, body: string): Record<string, string> {
  const values = collectQueryValues(parseQuery(query));
  addBodyValues(values, parseQuery(body), false);
  return values;
}
