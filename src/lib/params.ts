// The one request-parameter parser. Every route declares its parameters as a TypeBox
// object schema; requests carry them as strings (form fields or query string), with
// arrays and objects as JSON text. This turns the strings into typed values and answers
// bad input with the reference server's codes and messages.
import { JsonableError } from './errors.ts';

/** The subset of JSON Schema that TypeBox produces and this parser understands. */
export interface JsonSchema {
  type?: string;
  anyOf?: JsonSchema[];
  const?: unknown;
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  default?: unknown;
  /** Other names the parameter is accepted under (legacy names such as `subject` for `topic`). */
  'x-aliases'?: string[];
  [key: string]: unknown;
}

/** Deepest JSON nesting accepted inside a parameter; deeper input is hostile, not useful. */
export const MAX_JSON_DEPTH = 32;

/**
 * The ignored keys of a request that has none, one list for all: a parked poll keeps its
 * list, and a new empty one for each was 32 bytes a poll (docs/performance.md, session 54).
 */
const NO_IGNORED: readonly string[] = Object.freeze([]);

export interface ParseResult<T> {
  values: T;
  /** Request keys no declared parameter consumed, sorted (for ignored_parameters_unsupported). */
  ignored: readonly string[];
}

interface PropertyPlan {
  name: string;
  propSchema: JsonSchema;
  /** The name and its aliases. */
  names: string[];
  required: boolean;
  /** Taken as it comes: the schema accepts strings alone. */
  onlyString: boolean;
  /** An integer with no other form, so plain decimal text can be read without JSON.parse. */
  plainInteger: boolean;
  /** A string with no other form: checked as one without walking the schema's keywords. */
  plainString: boolean;
}

const NONE: string[] = [];

interface SchemaPlan {
  properties: PropertyPlan[];
  /** Every name and alias of every property. */
  names: Set<string>;
  /** Plans for the sets of keys requests came with, by their keys joined (ShapePlan.keys). */
  shapes: Map<string, ShapePlan | null>;
  /** The plan the last request read through. */
  lastShape: ShapePlan | null;
}

/**
 * What a request with exactly these keys, in this order, needs: each property it gives or
 * that has a default, in the schema's order, and the keys it gives that no property takes.
 * Null when the general path must run, for the error it throws (a property given under two
 * names, or a required one missing).
 */
interface ShapePlan {
  keys: string[];
  steps: Array<{ property: PropertyPlan; key: string | undefined }>;
  ignored: readonly string[];
  /** Makes the values object from the steps' values, in their order (compileValuesMaker). */
  make: ValuesMaker | null;
}

type ValuesMaker = (values: unknown[]) => Record<string, unknown>;

/** A property name written as is in an object literal; `__proto__` would set the prototype. */
const LITERAL_NAME = /^[A-Za-z_$][\w$]*$/;

/**
 * A function that makes the values object of every request of a shape as one object literal
 * with the shape's property names. Stored name by name into `{}`, each property went through
 * V8's megamorphic keyed store, which looks for the map transition adding it: about 250
 * instructions each, eight per poll of GET /events, since its schema gives defaults to
 * register's parameters (docs/performance.md, figure 5, session 55). A literal gives every
 * request of the shape one hidden class and stores its fields through monomorphic code.
 * Compiled from the schema's names, never from a request's, and only when each is a plain
 * identifier; any other shape is built by name.
 */
function compileValuesMaker(names: string[]): ValuesMaker | null {
  if (names.some((n) => n === '__proto__' || !LITERAL_NAME.test(n))) return null;
  const fields = names.map((n, i) => `${n}: values[${i}]`).join(', ');
  return new Function('values', `'use strict'; return { ${fields} };`) as ValuesMaker;
}

/**
 * Request shapes kept per schema; past this many all are dropped and kept afresh, so that
 * requests with ever new keys cost the general path, never memory. A route's clients send a
 * few shapes: every poll of GET /events names queue_id and last_event_id.
 */
const MAX_SHAPES = 64;

/** Each schema's properties, worked out once: a route parses every request with it. */
const plans = new WeakMap<JsonSchema, SchemaPlan>();

function planOf(schema: JsonSchema): SchemaPlan {
  let plan = plans.get(schema);
  if (!plan) {
    const required = new Set(schema.required ?? []);
    const properties = Object.entries(schema.properties ?? {}).map(([name, propSchema]) => ({
      name,
      propSchema,
      names: [name, ...(propSchema['x-aliases'] ?? [])],
      required: required.has(name),
      onlyString: acceptsOnlyString(propSchema),
      plainInteger: isPlain(propSchema, 'integer'),
      plainString: isPlain(propSchema, 'string'),
    }));
    plan = {
      properties,
      names: new Set(properties.flatMap((p) => p.names)),
      shapes: new Map(),
      lastShape: null,
    };
    plans.set(schema, plan);
  }
  return plan;
}

function shapeOf(plan: SchemaPlan, keys: string[]): ShapePlan | null {
  // Most requests of a route come with the keys of the one before (every poll of GET /events).
  const last = plan.lastShape;
  if (last !== null && sameKeys(last.keys, keys)) return last;
  const signature = keys.join('\u0000');
  let shape = plan.shapes.get(signature);
  // Keys holding the separator could join alike: the plan is for the keys it names.
  if (shape === undefined || (shape !== null && !sameKeys(shape.keys, keys))) {
    shape = planShape(plan, keys);
    if (plan.shapes.size >= MAX_SHAPES) plan.shapes.clear();
    plan.shapes.set(signature, shape);
  }
  if (shape !== null) plan.lastShape = shape;
  return shape;
}

function sameKeys(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function planShape(plan: SchemaPlan, keys: string[]): ShapePlan | null {
  const given = new Set(keys);
  const steps: ShapePlan['steps'] = [];
  for (const property of plan.properties) {
    const present = property.names.filter((n) => given.has(n));
    if (present.length > 1) return null;
    if (present.length === 1) steps.push({ property, key: present[0] });
    else if (property.propSchema.default !== undefined) steps.push({ property, key: undefined });
    else if (property.required) return null;
  }
  return {
    keys: [...keys],
    steps,
    ignored: keys.filter((k) => !plan.names.has(k)).sort(),
    make: compileValuesMaker(steps.map((s) => s.property.name)),
  };
}

/**
 * Parse raw string parameters against an object schema.
 * `raw` holds each request key once; the HTTP layer rejects repeated keys before this.
 */
export function parseParams<T>(schema: JsonSchema, raw: Record<string, string>): ParseResult<T> {
  const plan = planOf(schema);
  const shape = shapeOf(plan, Object.keys(raw));
  if (shape === null) return parseEachProperty(schema, raw);
  // The same values in the same order as parseEachProperty gives, and its first error.
  const { steps, make } = shape;
  const parsed: unknown[] = new Array(steps.length);
  for (let i = 0; i < steps.length; i++) {
    const { property, key } = steps[i];
    parsed[i] =
      key === undefined
        ? defaultValue(property.propSchema.default)
        : parsePropertyValue(property, raw[key]);
  }
  // The shape's own list, kept with it: no request's list is changed by anyone.
  return { values: (make ? make(parsed) : byName(steps, parsed)) as T, ignored: shape.ignored };
}

/** A shape's values object for names no literal can hold. */
function byName(steps: ShapePlan['steps'], parsed: unknown[]): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (let i = 0; i < steps.length; i++) values[steps[i].property.name] = parsed[i];
  return values;
}

/**
 * Every property in turn: the path of a request that names one twice or misses one.
 * Exported for tests, which check that parseParams answers as this does.
 */
export function parseEachProperty<T>(
  schema: JsonSchema,
  raw: Record<string, string>,
): ParseResult<T> {
  const plan = planOf(schema);
  const values: Record<string, unknown> = {};
  let consumed = 0;
  for (const property of plan.properties) {
    const { name, propSchema, names, required } = property;
    const present =
      names.length === 1
        ? Object.hasOwn(raw, name)
          ? names
          : NONE
        : names.filter((n) => Object.hasOwn(raw, n));
    if (present.length > 1) {
      throw new JsonableError(
        `Can't decide between '${present[0]}' and '${present[1]}' arguments`,
        'REQUEST_CONFUSING_VAR',
        400,
        { var_name1: present[0], var_name2: present[1] },
      );
    }
    if (present.length === 0) {
      // TypeBox lists a property with a default as required; the default makes it optional.
      if (required && propSchema.default === undefined) {
        throw new JsonableError(`Missing '${name}' argument`, 'REQUEST_VARIABLE_MISSING', 400, {
          var_name: name,
        });
      }
      if (propSchema.default !== undefined) values[name] = defaultValue(propSchema.default);
      continue;
    }
    consumed++;
    values[name] = parsePropertyValue(property, raw[present[0]]);
  }
  // A key is consumed when it names a property (two names of one property were refused
  // above), so only a request with more keys than that has any to list.
  const keys = Object.keys(raw);
  const ignored =
    keys.length === consumed ? NO_IGNORED : keys.filter((k) => !plan.names.has(k)).sort();
  return { values: values as T, ignored };
}

/** A list or object default is copied: the handler may change the value it gets. */
function defaultValue(fallback: unknown): unknown {
  return typeof fallback !== 'object' || fallback === null
    ? fallback
    : Array.isArray(fallback) && fallback.length === 0
      ? []
      : structuredClone(fallback);
}

/** At most this many digits: any such decimal is a safe integer. */
const PLAIN_INTEGER_DIGITS = 15;

/**
 * The value of decimal text of a safe integer as JSON.parse reads it (no leading zero, no sign
 * but minus, at most 15 digits), other than "-0"; undefined for any other text. Read digit by
 * digit: a regular expression and Number() were two calls into V8's builtins in every poll
 * (docs/performance.md, figure 5, session 55).
 */
function plainIntegerValue(raw: string): number | undefined {
  const negative = raw.charCodeAt(0) === 0x2d;
  const from = negative ? 1 : 0;
  const digits = raw.length - from;
  if (digits < 1 || digits > PLAIN_INTEGER_DIGITS) return undefined;
  let value = 0;
  for (let i = from; i < raw.length; i++) {
    const digit = raw.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9 || (digit === 0 && i === from && digits > 1)) return undefined;
    value = value * 10 + digit;
  }
  if (negative && value === 0) return undefined;
  return negative ? -value : value;
}

function parsePropertyValue(property: PropertyPlan, raw: string): unknown {
  const { name, propSchema } = property;
  // What parseTypedValue gives such text, without JSON.parse and a trial check.
  if (property.plainInteger) {
    const value = plainIntegerValue(raw);
    if (value !== undefined) return checkRange(name, propSchema, value);
  }
  if (property.plainString) {
    checkString(name, propSchema, raw);
    if (raw.includes('\u0000')) throw typeError(`${name} must not contain null bytes`);
    return raw;
  }
  return parseParamValue(name, propSchema, raw, property.onlyString);
}

/**
 * Reads one property of the schema from its raw text as parseParams reads it in a request,
 * errors included: for a request that differs from one already parsed in this value alone
 * (http/poll-query.ts).
 */
export function propertyReader(schema: JsonSchema, name: string): (raw: string) => unknown {
  const property = planOf(schema).properties.find((p) => p.name === name);
  if (property === undefined) throw new Error(`The schema has no property ${name}`);
  return (raw) => parsePropertyValue(property, raw);
}

/** Turn one raw string into a value of the schema's type. */
export function parseParamValue(
  name: string,
  schema: JsonSchema,
  raw: string,
  onlyString = acceptsOnlyString(schema),
): unknown {
  const value = onlyString ? checkValue(name, schema, raw) : parseTypedValue(name, schema, raw);
  // No parameter has a use for NUL, and PostgreSQL text cannot hold it.
  if (containsNul(value)) throw typeError(`${name} must not contain null bytes`);
  return value;
}

function parseTypedValue(name: string, schema: JsonSchema, raw: string): unknown {
  const parsed = parseJsonText(raw);
  if (parsed.ok && jsonDepth(parsed.value) > MAX_JSON_DEPTH) {
    throw typeError(`${name} is nested too deeply`);
  }
  if (parsed.ok && matches(schema, parsed.value)) return checkValue(name, schema, parsed.value);
  // A union that also takes a plain string (a channel given by name or by id, say).
  if (acceptsString(schema) && matches(schema, raw)) return checkValue(name, schema, raw);
  if (!parsed.ok) {
    if (schema.type === 'integer') throw typeError(`${name} is not an integer`);
    if (schema.type === 'number') throw typeError(`${name} is not a float`);
    if (schema.type === 'boolean') throw typeError(`${name} is not a boolean`);
    throw typeError(`${name} is not valid JSON`);
  }
  return checkValue(name, schema, parsed.value);
}

/** Whether any string in the value (object keys included) holds U+0000, without recursion. */
function containsNul(value: unknown): boolean {
  // Most parameters are a string or a number: no stack for them.
  if (typeof value === 'string') return value.includes('\u0000');
  if (value === null || typeof value !== 'object') return false;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return true;
    } else if (v !== null && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        if (k.includes('\u0000')) return true;
        stack.push(child);
      }
    }
  }
  return false;
}

/**
 * Thrown instead of an error while matches() tries a union's branches: a branch that does
 * not fit is the common case (every `to` of a channel send tries the integer branch first),
 * and an Error's stack trace costs more than the rest of the parse.
 */
const NO_MATCH = new JsonableError('no match');
let probing = 0;

function typeError(msg: string): JsonableError {
  return probing > 0 ? NO_MATCH : new JsonableError(msg, 'BAD_REQUEST', 400);
}

function invalid(path: string): JsonableError {
  return typeError(`Invalid ${path}`);
}

/**
 * A value of the right type that the parameter's converter refuses (a time limit of 0,
 * say): the reference server's older REQUEST_VARIABLE_INVALID form, naming the value.
 */
export function badValue(name: string, value: unknown): JsonableError {
  const shown = typeof value === 'string' ? value : JSON.stringify(value);
  return new JsonableError(`Bad value for '${name}': ${shown}`, 'REQUEST_VARIABLE_INVALID', 400, {
    var_name: name,
    bad_value: value,
  });
}

type Parsed = { ok: true; value: unknown } | { ok: false };

function parseJsonText(raw: string): Parsed {
  try {
    return { ok: true, value: JSON.parse(raw) };
  } catch {
    return { ok: false };
  }
}

function acceptsOnlyString(schema: JsonSchema): boolean {
  if (schema.type === 'string') return true;
  if (schema.anyOf) return schema.anyOf.every(acceptsOnlyString);
  return (
    typeof schema.const === 'string' ||
    (Array.isArray(schema.enum) && schema.enum.every((e) => typeof e === 'string'))
  );
}

/** A schema of the type with no union, constant or list of values. */
function isPlain(schema: JsonSchema, type: string): boolean {
  return (
    schema.type === type &&
    schema.anyOf === undefined &&
    schema.const === undefined &&
    schema.enum === undefined
  );
}

function acceptsString(schema: JsonSchema): boolean {
  if (acceptsOnlyString(schema)) return true;
  return (schema.anyOf ?? []).some(acceptsString);
}

/** Depth of a JSON value, computed without recursion so hostile input cannot blow the stack. */
export function jsonDepth(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d + 1 > max) max = d + 1;
    if (max > MAX_JSON_DEPTH) return max;
    for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return max;
}

function matches(schema: JsonSchema, value: unknown): boolean {
  probing++;
  try {
    checkValue('', schema, value);
    return true;
  } catch {
    return false;
  } finally {
    probing--;
  }
}

const quoteKey = (k: string): string => `["${k}"]`;

/** Check a decoded value against the schema, naming the first problem as the reference server does. */
function checkValue(path: string, schema: JsonSchema, value: unknown): unknown {
  if (schema.anyOf) {
    for (const branch of schema.anyOf) {
      if (matches(branch, value)) return checkValue(path, branch, value);
    }
    throw invalid(path);
  }
  if (schema.const !== undefined) {
    if (value !== schema.const) throw invalid(path);
    return value;
  }
  if (schema.enum) {
    if (!schema.enum.includes(value as never)) throw invalid(path);
    return value;
  }
  switch (schema.type) {
    case 'string':
      if (typeof value !== 'string') throw typeError(`${path} is not a string`);
      return checkString(path, schema, value);
    case 'integer':
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
        throw typeError(`${path} is not an integer`);
      }
      return checkRange(path, schema, value);
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value))
        throw typeError(`${path} is not a float`);
      return checkRange(path, schema, value);
    case 'boolean':
      if (typeof value !== 'boolean') throw typeError(`${path} is not a boolean`);
      return value;
    case 'null':
      if (value !== null) throw invalid(path);
      return value;
    case 'array': {
      if (!Array.isArray(value)) throw typeError(`${path} is not a list`);
      if (schema.maxItems !== undefined && value.length > schema.maxItems) {
        throw typeError(`${path} has too many items (limit: ${schema.maxItems})`);
      }
      if (schema.minItems !== undefined && value.length < schema.minItems) {
        throw typeError(`${path} needs at least ${schema.minItems} items`);
      }
      return schema.items
        ? value.map((v, i) => checkValue(`${path}[${i}]`, schema.items!, v))
        : value;
    }
    case 'object': {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        throw typeError(`${path} is not a dict`);
      }
      return checkObject(path, schema, value as Record<string, unknown>);
    }
    default:
      return value;
  }
}

/** A string against a string schema's limits. */
function checkString(path: string, schema: JsonSchema, value: string): string {
  if (schema.maxLength !== undefined && tooLong(value, schema.maxLength)) {
    throw typeError(`${path} is too long (limit: ${schema.maxLength} characters)`);
  }
  if (schema.minLength !== undefined && tooShort(value, schema.minLength)) {
    throw typeError(schema.minLength === 1 ? `${path} cannot be blank` : `${path} is too short.`);
  }
  return value;
}

// Limits count characters (code points). A string has at least half as many of them as
// UTF-16 units and at most as many, so most strings are judged without counting.
function codePoints(value: string): number {
  let n = 0;
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    // A high surrogate followed by a low one is one character.
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < value.length) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

function tooLong(value: string, max: number): boolean {
  return value.length > max && codePoints(value) > max;
}

function tooShort(value: string, min: number): boolean {
  return value.length < min || (value.length < 2 * min && codePoints(value) < min);
}

function checkRange(path: string, schema: JsonSchema, value: number): number {
  if (schema.minimum !== undefined && value < schema.minimum)
    throw typeError(`${path} is too small`);
  if (schema.maximum !== undefined && value > schema.maximum)
    throw typeError(`${path} is too large`);
  return value;
}

function checkObject(path: string, schema: JsonSchema, value: Record<string, unknown>): unknown {
  const props = schema.properties ?? {};
  const out: Record<string, unknown> = {};
  for (const key of schema.required ?? []) {
    if (!Object.hasOwn(value, key)) throw typeError(`${path}${quoteKey(key)} field is missing`);
  }
  for (const [key, v] of Object.entries(value)) {
    // Assigning it would replace the result's prototype: no parameter has such a field.
    if (key === '__proto__') throw typeError(`Argument "${key}" at ${path} is unexpected`);
    // Own properties only: "constructor" or "toString" must not find Object.prototype's.
    const propSchema = Object.hasOwn(props, key) ? props[key] : undefined;
    if (propSchema) {
      out[key] = checkValue(`${path}${quoteKey(key)}`, propSchema, v);
    } else if (typeof schema.additionalProperties === 'object') {
      out[key] = checkValue(`${path}${quoteKey(key)}`, schema.additionalProperties, v);
    } else if (schema.additionalProperties === false || schema.properties) {
      throw typeError(`Argument "${key}" at ${path} is unexpected`);
    } else {
      out[key] = v;
    }
  }
  return out;
}
