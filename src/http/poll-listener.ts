// GET /api/v1/events answered on node:http's own request and response, before Fastify sees
// the request. A poll is the request a server answers most (every client polls again after
// each batch of events and each heartbeat), and a parked poll lives for up to a minute:
// Fastify's request, reply, hooks and promise chain per poll were about a seventh of the CPU
// per delivered event, and all of it stayed alive, in the old generation, while the poll
// waited (docs/performance.md, figure 5).
//
// The steps are http/route.ts's, through the same helpers: authentication within the rate
// limits, the query parsed by lib/params.ts against the route's own schema, the route's
// handler, the same envelope and the same errors. Whatever this path does not expect (a
// body, HEAD, another spelling of the path, an unusual Host header, a closing server) goes
// to Fastify unchanged, which answers it as before. `inject` never reaches this listener:
// its tests use real sockets (test/http/poll-listener.test.ts, test/events/longpoll.test.ts).
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerOptions,
  type ServerResponse,
} from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { stringifyBody } from '../lib/json-text.ts';
import { parseParams, type JsonSchema } from '../lib/params.ts';
import { authenticateBasic } from './auth.ts';
import { errorHeaders, toClientError } from './errors.ts';
import type { HeaderSink, LimitedRequest, RateLimiter } from './rate-limit.ts';
import { collectQueryValues } from './request-params.ts';
import { API_PREFIX, successBody, writeJson } from './route.ts';
import { GetEventsParamsSchema, PollAnswer } from './routes/events.ts';

const EVENTS_PATH = `${API_PREFIX}/events`;
/** A host name or IPv4 address with an optional port: what Fastify's `hostname` reads plainly. */
const PLAIN_HOST = /^[A-Za-z0-9.-]+(?::\d{1,5})?$/;
const EVENTS_SCHEMA = GetEventsParamsSchema as unknown as JsonSchema;

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
  readonly all: OutgoingHttpHeaders = {};

  header(name: string, value: string): void {
    this.all[name.toLowerCase()] = value;
  }
}

export class PollListener {
  private open = true;

  constructor(
    private readonly ctx: AppContext,
    private readonly limiter: RateLimiter,
  ) {}

  /** From now on every request goes to Fastify, which refuses new ones while the server closes. */
  close(): void {
    this.open = false;
  }

  /** Take the request if it is a plain GET /events; false leaves it to Fastify. */
  take(req: IncomingMessage, res: ServerResponse): boolean {
    if (!this.open || req.method !== 'GET') return false;
    const url = req.url ?? '';
    const mark = url.indexOf('?');
    if ((mark < 0 ? url : url.slice(0, mark)) !== EVENTS_PATH) return false;
    const host = req.headers.host;
    if (host === undefined || !PLAIN_HOST.test(host)) return false;
    const length = req.headers['content-length'];
    if (req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0'))
      return false;
    void this.answer(req, res, host.split(':', 1)[0], mark < 0 ? '' : url.slice(mark + 1));
    return true;
  }

  private answer(req: IncomingMessage, res: ServerResponse, hostname: string, query: string): void {
    const headers = new HeaderBag();
    let actor: Actor | Promise<Actor>;
    try {
      actor = this.limiter.authenticate(new PollRequest(req), headers, () =>
        authenticateBasic(this.ctx, req.headers.authorization, hostname),
      );
    } catch (err) {
      return this.fail(res, headers, err);
    }
    // A known client's actor comes at once: no promise, no turn of the microtask queue.
    if (!(actor instanceof Promise)) return this.poll(actor, res, headers, query);
    actor.then(
      (known) => this.poll(known, res, headers, query),
      (err: unknown) => this.fail(res, headers, err),
    );
  }

  private poll(actor: Actor, res: ServerResponse, headers: HeaderBag, query: string): void {
    try {
      const parsed = parseParams<Record<string, unknown>>(
        EVENTS_SCHEMA,
        collectQueryValues(parseQuery(query)),
      );
      const poll = new ListenerPoll(res, this, headers, parsed.ignored);
      const fields = poll.start(this.ctx, actor, parsed.values);
      // A parked poll waits on its ListenerPoll alone: this function's frame is gone by then.
      if (fields) writeSuccess(res, headers, fields, parsed.ignored);
    } catch (err) {
      this.fail(res, headers, err);
    }
  }

  fail(res: ServerResponse, headers: HeaderBag, err: unknown): void {
    const known = toClientError(err, this.ctx.log);
    if (res.headersSent) return;
    Object.assign(headers.all, errorHeaders(known));
    writeJson(res, known.httpStatus, headers.all, JSON.stringify(known.toJSON()));
  }
}

/** A parked poll's answer, written when its queue answers; only what that needs stays alive. */
class ListenerPoll extends PollAnswer {
  constructor(
    res: ServerResponse,
    private readonly listener: PollListener,
    private readonly headers: HeaderBag,
    private readonly ignored: string[],
  ) {
    super(res);
  }

  protected send(fields: Record<string, unknown>): void {
    writeSuccess(this.res, this.headers, fields, this.ignored);
  }

  protected refuse(err: Error): void {
    this.listener.fail(this.res, this.headers, err);
  }
}

function writeSuccess(
  res: ServerResponse,
  headers: HeaderBag,
  fields: Record<string, unknown>,
  ignored: string[],
): void {
  writeJson(res, 200, headers.all, stringifyBody(successBody(fields, ignored)));
}

/**
 * The HTTP server for Fastify's `serverFactory`: polls go to the listener, every other
 * request to Fastify. The timeouts are the ones Fastify sets on a server it creates.
 */
export function createPollingServer(
  polls: PollListener,
  fastify: (req: IncomingMessage, res: ServerResponse) => void,
  options: {
    http?: ServerOptions;
    keepAliveTimeout?: number;
    requestTimeout?: number;
    connectionTimeout?: number;
    maxRequestsPerSocket?: number;
  },
): Server {
  const server = createServer(options.http ?? {}, (req, res) => {
    if (!polls.take(req, res)) fastify(req, res);
  });
  if (options.keepAliveTimeout !== undefined) server.keepAliveTimeout = options.keepAliveTimeout;
  if (options.requestTimeout !== undefined) server.requestTimeout = options.requestTimeout;
  server.setTimeout(options.connectionTimeout ?? 0);
  if ((options.maxRequestsPerSocket ?? 0) > 0)
    server.maxRequestsPerSocket = options.maxRequestsPerSocket ?? 0;
  return server;
}
