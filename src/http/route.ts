// The one way to declare an API route: its method and path, who may call it, and its
// parameters as a TypeBox schema. The helper authenticates, parses parameters with
// lib/params.ts, and wraps the handler's fields in {result, msg, ...}. The schemas also
// feed the OpenAPI document.
import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Static, TObject } from 'typebox';
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { parseParams, type JsonSchema } from '../lib/params.ts';
import type { RealmRow } from '../store/schema.ts';
import { authenticate, realmForRequest } from './auth.ts';
import type { RouteTable } from './errors.ts';
import type { RateLimiter } from './rate-limit.ts';
import { collectRawParams, type UploadedFile } from './request-params.ts';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
export type AuthMode = 'user' | 'none';

/** A reply that is not the usual JSON envelope (a file, a redirect). */
export interface RawReply {
  raw: true;
  status?: number;
  contentType: string;
  headers?: Record<string, string>;
  body: Buffer | string;
}

export type HandlerResult = Record<string, unknown> | RawReply;

export interface RouteInput<P, A extends AuthMode> {
  ctx: AppContext;
  params: P;
  path: Record<string, unknown>;
  actor: A extends 'user' ? Actor : null;
  /** The organization the request's host names (undefined on a root domain without one). */
  realm: RealmRow | undefined;
  files: UploadedFile[];
  /** The request's headers (a send names its client from the User-Agent). */
  headers: IncomingHttpHeaders;
  /** The response, for a route that answers later on its own (a parked GET /events). */
  res: ServerResponse;
  /** The request's parameters the route does not know, for a route that writes its own envelope. */
  ignored: readonly string[];
}

export interface RouteSpec<P extends TObject, A extends AuthMode> {
  method: HttpMethod;
  /** Path below /api/v1, with :name parameters. */
  url: string;
  summary: string;
  tags: string[];
  auth: A;
  params?: P;
  /** Schema of the :name path parameters. */
  path?: TObject;
  /** Largest uploaded file accepted (multipart routes). */
  maxFileBytes?: number;
  /**
   * The answer depends on nothing but the caller, the query string and database rows (no
   * clock, no headers, no process memory): a plain GET's answer is then kept per caller and
   * query while no table it read is written (http/direct-listener.ts, store/kept-values.ts).
   */
  keepsAnswer?: boolean;
  handler: (input: RouteInput<Static<P>, A>) => Promise<HandlerResult>;
}

// Erased form kept in a list of an area's routes.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute = RouteSpec<any, AuthMode>;

/** Declare a route; the identity function exists for type inference. */
export function defineRoute<P extends TObject, A extends AuthMode>(
  spec: RouteSpec<P, A>,
): RouteSpec<P, A> {
  return spec;
}

export const API_PREFIX = '/api/v1';
/** The largest request body read, form-encoded or JSON (src/app.ts, direct-listener.ts). */
export const BODY_LIMIT_BYTES = 1024 * 1024;
const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;

export const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * A JSON answer written on the raw response in one `writeHead` and one `end`; none to a
 * client already gone (a poll cancelled by its disconnect), where writing would only build
 * an error with its stack trace.
 */
export function writeJson(
  res: ServerResponse,
  status: number,
  headers: OutgoingHttpHeaders,
  text: string,
  /** The text's size in UTF-8 bytes, when the caller counted it as it wrote the text. */
  bytes = Buffer.byteLength(text),
): void {
  if (res.destroyed) return;
  headers['content-type'] = JSON_TYPE;
  headers['content-length'] = bytes;
  res.writeHead(status, headers);
  res.end(text);
}

/** The envelope of every successful answer. */
export function successBody(
  result: Record<string, unknown>,
  ignored: readonly string[],
): Record<string, unknown> {
  const body: Record<string, unknown> = { result: 'success', msg: '', ...result };
  if (ignored.length > 0) body.ignored_parameters_unsupported = ignored;
  return body;
}

export function isRaw(result: HandlerResult): result is RawReply {
  return (result as RawReply).raw === true;
}

/** A request's parameters read against its route's schema; without one, every key is ignored. */
export function parseRouteParams(
  spec: AnyRoute,
  values: Record<string, string>,
): { values: Record<string, unknown>; ignored: readonly string[] } {
  const schema = spec.params as unknown as JsonSchema | undefined;
  return schema
    ? parseParams<Record<string, unknown>>(schema, values)
    : { values: {}, ignored: Object.keys(values).sort() };
}

/** The JSON text of a successful answer. */
export function successText(result: Record<string, unknown>, ignored: readonly string[]): string {
  return JSON.stringify(successBody(result, ignored));
}

/** The start of every successful answer's envelope, up to its own fields. */
export const SUCCESS_OPEN = '{"result":"success","msg":""';

/**
 * The same envelope around fields already written as JSON (`"a":1,"b":2`): for answers
 * written by the thousand from text made once (GET /events, events/event-json.ts).
 */
export function successTextAround(fieldsJson: string, ignored: readonly string[]): string {
  let text = fieldsJson === '' ? SUCCESS_OPEN : `${SUCCESS_OPEN},${fieldsJson}`;
  if (ignored.length > 0) text += `,"ignored_parameters_unsupported":${JSON.stringify(ignored)}`;
  return `${text}}`;
}

export function registerRoutes(
  app: FastifyInstance,
  ctx: AppContext,
  table: RouteTable,
  routes: AnyRoute[],
  limiter: RateLimiter,
): void {
  for (const spec of routes) {
    const url = `${API_PREFIX}${spec.url}`;
    table.add(spec.method, url);
    const pathSchema = spec.path as unknown as JsonSchema | undefined;
    app.route({
      method: spec.method,
      url,
      schema: {
        summary: spec.summary,
        tags: spec.tags,
        ...(spec.path ? { params: spec.path } : {}),
        ...(spec.params
          ? spec.method === 'GET'
            ? { querystring: spec.params }
            : { body: spec.params }
          : {}),
        ...(spec.auth === 'user' ? { security: [{ basicAuth: [] }] } : { security: [] }),
      },
      handler: async (request, reply) => {
        const actor =
          spec.auth === 'user'
            ? await limiter.authenticate(request, reply, () => authenticate(ctx, request))
            : null;
        if (!actor) await limiter.admitAnonymous(request, reply);
        const realm = actor ? actor.realm : await realmForRequest(ctx, request);
        const raw = await collectRawParams(request, spec.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES);
        const path = pathSchema
          ? parseParams<Record<string, unknown>>(
              pathSchema,
              request.params as Record<string, string>,
            ).values
          : {};
        const parsed = parseRouteParams(spec, raw.values);
        const run = () =>
          spec.handler({
            ctx,
            params: parsed.values,
            path,
            actor: actor as never,
            realm,
            files: raw.files,
            headers: request.headers,
            res: reply.raw,
            ignored: parsed.ignored,
          });
        const result = actor ? await run() : await limiter.runAnonymous(request, reply, run);
        if (isRaw(result)) {
          reply.code(result.status ?? 200).type(result.contentType);
          for (const [k, v] of Object.entries(result.headers ?? {})) reply.header(k, v);
          return reply.send(result.body);
        }
        const text = successText(result, parsed.ignored);
        // One Buffer: Fastify would measure a string's UTF-8 length and then encode it again
        // to write it, a cost that shows on a register's 700 KB.
        return reply.type(JSON_TYPE).send(Buffer.from(text));
      },
    });
  }
}
