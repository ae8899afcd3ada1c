// Plain authenticated GET requests answered on node:http's own request and response, before
// Fastify sees them. Fastify's request, reply, hooks and promise chain cost more than the work
// of a light route: GET /users/me took ~110 µs of CPU through Fastify against ~30 µs for a
// poll here (docs/performance.md, figure 1). Polls matter most: every client polls again
// after each batch of events and each heartbeat, and a parked poll lives for up to a minute,
// so everything Fastify keeps per request stayed alive, in the old generation, while it
// waited (figure 5).
//
// The steps are http/route.ts's, through the same helpers: authentication within the rate
// limits, the query parsed by lib/params.ts against the route's own schema, the route's
// handler, the same envelope and the same errors. Only routes of authenticated users whose
// path has no :parameters are taken: GET without a body, and POST with a form-encoded body
// within the body limit. A send is a POST: through Fastify, the 0.4-0.6 ms from its request
// to its handler were a tenth of what a message to a channel of 1,000 took before its first
// receiver was answered (docs/performance.md, item 4, session 56). Whatever this path does not
// expect (another content type, a chunked or too large body, HEAD, another spelling of the
// path, an unusual Host header, a closing server) goes to Fastify unchanged, which answers it
// as before. `inject` never reaches this listener: its tests use real sockets
// (test/http/direct-listener.test.ts, test/events/longpoll.test.ts).
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerOptions,
  type ServerResponse,
} from 'node:http';
import type { Socket } from 'node:net';
import type { JsonText } from '../events/event-json.ts';
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { KeptValues } from '../store/kept-values.ts';
import { ConnectionActor } from './auth.ts';
import { errorHeaders, toClientError } from './errors.ts';
import type { HeaderSink, LimitedRequest, RateLimiter } from './rate-limit.ts';
import { collectFormValues, parseQueryValues } from './request-params.ts';
import {
  API_PREFIX,
  BODY_LIMIT_BYTES,
  isRaw,
  parseRouteParams,
  successText,
  writeJson,
  type AnyRoute,
  type RawReply,
} from './route.ts';
import { closeIdleConnections } from './idle-connections.ts';
import { PollQuery } from './poll-query.ts';
import { PollAnswer } from './routes/events.ts';

const EVENTS_PATH = `${API_PREFIX}/events`;
/** A host name or IPv4 address with an optional port: what Fastify's `hostname` reads plainly. */
const PLAIN_HOST = /^[A-Za-z0-9.-]+(?::\d{1,5})?$/;

/** The request as the rate limiter reads it; the peer address is looked up only if it asks. */
class PollRequest implements LimitedRequest {
  constructor(private readonly req: IncomingMessage) {}

  get ip(): string {
    return this.req.socket.remoteAddress ?? '';
  }

  get headers(): IncomingHttpHeaders {
    return this.req.headers;
  }
}

/** Headers gathered for an answer (the rate-limit counts), in the shape `writeHead` takes. */
class HeaderBag implements HeaderSink {
  /**
   * Made when the first header comes: with no rate limits a parked poll has none to keep
   * until it is answered, and an empty object for each was 56 bytes a poll
   * (docs/performance.md, session 54).
   */
  gathered: OutgoingHttpHeaders | null = null;

  get all(): OutgoingHttpHeaders {
    return (this.gathered ??= {});
  }

  header(name: string, value: string): void {
    this.all[name.toLowerCase()] = value;
  }
}

/**
 * A connection's last plain Host header, its host name, and the actor it authenticated as;
 * one object, since a parked poll keeps its connection's.
 */
class ConnectionState extends ConnectionActor {
  host = '';
  hostname = '';
  /** Made at the connection's first poll. */
  pollQuery: PollQuery | null = null;
  private keyUserId = -1;
  private keyQuery = '';
  private key = '';

  /**
   * The key of a user's kept answers for a query. The same user asks the same query again
   * on a connection: that gives the string made last time, whose hash V8 has kept.
   */
  answerKey(userId: number, query: string): string {
    if (userId !== this.keyUserId || query !== this.keyQuery) {
      this.keyUserId = userId;
      this.keyQuery = query;
      this.key = `${userId}?${query}`;
    }
    return this.key;
  }
}

/** Kept answers per route (a few hundred bytes each for GET /users/me), at most. */
const KEPT_ANSWERS_LIMITS = {
  entries: 10_000,
  weight: 16 * 1024 * 1024,
  weigh: (key: string, answer: Answer): number =>
    key.length + (typeof answer === 'string' ? answer.length : 0),
};

type Answer = string | RawReply;

export class DirectListener {
  private open = true;
  /** What each connection's last request here sent and authenticated as. */
  private readonly connections = new WeakMap<Socket, ConnectionState>();
  /**
   * The Host header last read and its host name. Connections with the same Host share these
   * strings: two of their own were 64 bytes a connection (docs/performance.md, session 54).
   */
  private lastHost = '';
  private lastHostname = '';
  /** The GET routes taken here besides GET /events, by full path. */
  private readonly routes = new Map<string, AnyRoute>();
  /** The POST routes taken here, by full path. */
  private readonly formRoutes = new Map<string, AnyRoute>();
  /** Answers of the routes that keep them, by caller and query string. */
  private readonly keptAnswers = new Map<AnyRoute, KeptValues<string, Answer>>();

  constructor(
    private readonly ctx: AppContext,
    private readonly limiter: RateLimiter,
    routes: AnyRoute[],
  ) {
    for (const spec of routes) {
      const path = `${API_PREFIX}${spec.url}`;
      if (spec.auth !== 'user' || spec.url.includes(':')) continue;
      if (spec.method === 'POST') this.formRoutes.set(path, spec);
      if (spec.method !== 'GET' || path === EVENTS_PATH) continue;
      this.routes.set(path, spec);
      // The caller's users and realms rows were read by authentication, before the work.
      if (spec.keepsAnswer)
        this.keptAnswers.set(spec, new KeptValues(['users', 'realms'], KEPT_ANSWERS_LIMITS));
    }
  }

  /**
   * The connection's state for a request with this Host header, or null when the header is
   * not a plain one. A client sends the same Host with every request on a connection: the
   * regular expression runs once per connection, not per request.
   */
  private connectionOf(socket: Socket, host: string): ConnectionState | null {
    let conn = this.connections.get(socket);
    if (conn?.host === host) return conn;
    if (!PLAIN_HOST.test(host)) return null;
    if (!conn) this.connections.set(socket, (conn = new ConnectionState()));
    if (host !== this.lastHost) {
      const colon = host.indexOf(':');
      this.lastHost = host;
      this.lastHostname = colon < 0 ? host : host.slice(0, colon);
    }
    conn.host = this.lastHost;
    conn.hostname = this.lastHostname;
    return conn;
  }

  /** From now on every request goes to Fastify, which refuses new ones while the server closes. */
  close(): void {
    this.open = false;
  }

  /** Take the request if it is a plain one of a route taken here; false leaves it to Fastify. */
  take(req: IncomingMessage, res: ServerResponse): boolean {
    if (!this.open) return false;
    const method = req.method;
    if (method !== 'GET' && method !== 'POST') return false;
    const url = req.url ?? '';
    const mark = url.indexOf('?');
    // Told apart without cutting the path out: a cut of 13 characters or more is a sliced
    // string, which V8 compares in its runtime (docs/performance.md, figure 5, session 55).
    const spec =
      method === 'POST'
        ? this.formRoutes.get(mark < 0 ? url : url.slice(0, mark))
        : (mark < 0 ? url.length : mark) === EVENTS_PATH.length && url.startsWith(EVENTS_PATH)
          ? null
          : this.routes.get(mark < 0 ? url : url.slice(0, mark));
    if (spec === undefined) return false;
    const host = req.headers.host;
    if (host === undefined) return false;
    const conn = this.connectionOf(req.socket, host);
    if (conn === null) return false;
    const length = req.headers['content-length'];
    const body = length !== undefined && length !== '0';
    if (req.headers['transfer-encoding'] !== undefined) return false;
    const query = mark < 0 ? '' : url.slice(mark + 1);
    if (method === 'GET') {
      if (body) return false;
      this.serve(spec, conn, req, res, query, null);
      return true;
    }
    // (A POST's route is never GET /events.)
    if (spec === null || !isPlainForm(req.headers['content-type'], body, length)) return false;
    if (body) this.readForm(spec, conn, req, res, query);
    else this.serve(spec, conn, req, res, query, '');
    return true;
  }

  /** Serve a form POST once its body has come whole (node's parser ends it at its length). */
  private readForm(
    spec: AnyRoute,
    conn: ConnectionState,
    req: IncomingMessage,
    res: ServerResponse,
    query: string,
  ): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => this.serve(spec, conn, req, res, query, Buffer.concat(chunks).toString()));
    // A client gone in the middle of its body is answered by nobody, as Fastify answers it.
    req.on('error', () => undefined);
  }

  /**
   * Authenticate and answer: GET /events (spec null) or another route, its parameters from
   * the query and, for a POST, the form-encoded body (null for a GET).
   */
  private serve(
    spec: AnyRoute | null,
    conn: ConnectionState,
    req: IncomingMessage,
    res: ServerResponse,
    query: string,
    form: string | null,
  ): void {
    const headers = new HeaderBag();
    let actor: Actor | Promise<Actor>;
    try {
      actor = this.limiter.authenticate(new PollRequest(req), headers, () =>
        conn.authenticate(this.ctx, req.headers.authorization, conn.hostname),
      );
    } catch (err) {
      this.fail(res, headers.gathered, err);
      return;
    }
    // A known client's actor comes at once: no promise, no turn of the microtask queue.
    if (!(actor instanceof Promise)) {
      if (spec) this.run(spec, actor, conn, req, res, headers, query, form);
      else this.poll(actor, conn, res, headers, query);
      return;
    }
    actor.then(
      (known) =>
        spec
          ? this.run(spec, known, conn, req, res, headers, query, form)
          : this.poll(known, conn, res, headers, query),
      (err: unknown) => this.fail(res, headers.gathered, err),
    );
  }

  private poll(
    actor: Actor,
    conn: ConnectionState,
    res: ServerResponse,
    headers: HeaderBag,
    query: string,
  ): void {
    try {
      const parsed = (conn.pollQuery ??= new PollQuery()).read(query);
      const poll = new ListenerPoll(res, this, headers.gathered, parsed.ignored);
      const answer = poll.start(this.ctx, actor, parsed.values);
      // A parked poll waits on its ListenerPoll alone: this function's frame is gone by then.
      if (answer) writeJson(res, 200, headers.all, answer.text, answer.bytes);
    } catch (err) {
      this.fail(res, headers.gathered, err);
    }
  }

  /** Any other route: its handler with the parsed query, answered as route.ts would. */
  private run(
    spec: AnyRoute,
    actor: Actor,
    conn: ConnectionState,
    req: IncomingMessage,
    res: ServerResponse,
    headers: HeaderBag,
    query: string,
    form: string | null,
  ): void {
    const kept = this.keptAnswers.get(spec);
    const key = kept ? conn.answerKey(actor.user.id, query) : '';
    const known = kept?.get(this.ctx.db, key);
    if (known !== undefined) return this.answer(res, headers, known);
    let answer: Promise<Answer>;
    try {
      const parsed = parseRouteParams(
        spec,
        form === null ? parseQueryValues(query) : collectFormValues(query, form),
      );
      const work = async (): Promise<Answer> => {
        const result = await spec.handler({
          ctx: this.ctx,
          params: parsed.values,
          path: {},
          actor,
          realm: actor.realm,
          files: [],
          headers: req.headers,
          res,
          ignored: parsed.ignored,
        });
        return isRaw(result) ? result : successText(result, parsed.ignored);
      };
      answer = kept ? kept.work(this.ctx.db, key, work, isText) : work();
    } catch (err) {
      return this.fail(res, headers.gathered, err);
    }
    answer.then(
      (result) => this.answer(res, headers, result),
      (err: unknown) => this.fail(res, headers.gathered, err),
    );
  }

  private answer(res: ServerResponse, headers: HeaderBag, answer: Answer): void {
    if (typeof answer === 'string') return writeJson(res, 200, headers.all, answer);
    if (res.destroyed) return;
    res.writeHead(answer.status ?? 200, {
      ...headers.all,
      ...answer.headers,
      'content-type': answer.contentType,
      'content-length': Buffer.byteLength(answer.body),
    });
    res.end(answer.body);
  }

  fail(res: ServerResponse, headers: OutgoingHttpHeaders | null, err: unknown): void {
    const known = toClientError(err, this.ctx.log);
    if (res.headersSent) return;
    const all = Object.assign(headers ?? {}, errorHeaders(known));
    writeJson(res, known.httpStatus, all, JSON.stringify(known.toJSON()));
  }
}

function isText(answer: Answer): answer is string {
  return typeof answer === 'string';
}

/** A parked poll's answer, written when its queue answers; only what that needs stays alive. */
class ListenerPoll extends PollAnswer {
  constructor(
    res: ServerResponse,
    private readonly listener: DirectListener,
    /** The rate limits' headers, if any: the bag that gathered them is not kept. */
    private readonly headers: OutgoingHttpHeaders | null,
    ignored: readonly string[],
  ) {
    super(res, ignored);
  }

  protected send(answer: JsonText): void {
    writeJson(this.res, 200, this.headers ?? {}, answer.text, answer.bytes);
  }

  protected refuse(err: Error): void {
    this.listener.fail(this.res, this.headers, err);
  }
}

/**
 * A POST taken here: a form-encoded body of a known length within the body limit, or no body
 * and no content type. Fastify reads anything else (JSON, multipart, a content type with
 * parameters) and refuses what it must (413, 415) as it always has.
 */
function isPlainForm(
  contentType: string | undefined,
  hasBody: boolean,
  length: string | undefined,
): boolean {
  if (contentType === undefined) return !hasBody;
  if (contentType !== FORM_TYPE) return false;
  return !hasBody || (/^\d{1,7}$/.test(length!) && Number(length) <= BODY_LIMIT_BYTES);
}

const FORM_TYPE = 'application/x-www-form-urlencoded';

/**
 * The HTTP server for Fastify's `serverFactory`: what the listener takes goes there, every
 * other request to Fastify. requestTimeout and maxRequestsPerSocket are set as Fastify sets
 * them on a server it creates; keep-alive is closeIdleConnections' (http/idle-connections.ts).
 */
export function createDirectServer(
  direct: DirectListener,
  fastify: (req: IncomingMessage, res: ServerResponse) => void,
  options: {
    http?: ServerOptions;
    keepAliveTimeout?: number;
    requestTimeout?: number;
    maxRequestsPerSocket?: number;
  },
): Server {
  const server = createServer(options.http ?? {}, (req, res) => {
    if (!direct.take(req, res)) fastify(req, res);
  });
  closeIdleConnections(
    server,
    (options.keepAliveTimeout ?? DEFAULT_KEEP_ALIVE_MS) + KEEP_ALIVE_MARGIN_MS,
  );
  if (options.requestTimeout !== undefined) server.requestTimeout = options.requestTimeout;
  if ((options.maxRequestsPerSocket ?? 0) > 0)
    server.maxRequestsPerSocket = options.maxRequestsPerSocket ?? 0;
  return server;
}

/** Fastify's default keep-alive timeout. */
const DEFAULT_KEEP_ALIVE_MS = 72_000;
/** Added to the keep-alive time, so a client's late request meets no close. */
const KEEP_ALIVE_MARGIN_MS = 1000;
