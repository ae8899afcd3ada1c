// One error handler: JsonableError, framework errors and unexpected exceptions all
// become {result: "error", msg, code}; unknown routes are JSON 404 and wrong methods 405.
import type {
  FastifyBaseLogger,
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
} from 'fastify';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { isStorageFull, JsonableError } from '../lib/errors.ts';
import { WWW_AUTHENTICATE } from './auth.ts';

/** Headers an error answer carries besides the rate-limit counts. */
export function errorHeaders(err: JsonableError): Record<string, string> {
  return err.httpStatus === 401 ? { 'www-authenticate': WWW_AUTHENTICATE } : {};
}

export function sendError(reply: FastifyReply, err: JsonableError): FastifyReply {
  return reply
    .headers(errorHeaders(err))
    .code(err.httpStatus)
    .type('application/json; charset=utf-8')
    .send(err.toJSON());
}

/** The error a client sees for anything a request threw; an unexpected one is logged. */
export function toClientError(err: unknown, log: Pick<FastifyBaseLogger, 'error'>): JsonableError {
  const known = err instanceof Error ? toJsonableError(err) : null;
  if (known) return known;
  if (isStorageFull(err)) {
    log.error({ err }, 'a change was refused: the disk or the database is full');
    return new JsonableError('The server has no room to store this change', 'STORAGE_FULL', 507);
  }
  log.error({ err }, 'unexpected error');
  return new JsonableError('Internal server error', 'INTERNAL_SERVER_ERROR', 500);
}

/** Map framework and parser errors to the error a client should see. */
export function toJsonableError(err: FastifyError | Error): JsonableError | null {
  if (err instanceof JsonableError) return err;
  const code = (err as FastifyError).code ?? '';
  const status = (err as FastifyError).statusCode ?? 500;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE' || status === 413) {
    return new JsonableError('Request body too large', 'REQUEST_TOO_LARGE', 413);
  }
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || status === 415) {
    return new JsonableError('Unsupported Content-Type', 'UNSUPPORTED_MEDIA_TYPE', 415);
  }
  if (
    code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ||
    code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
    err instanceof SyntaxError
  ) {
    return new JsonableError('Malformed JSON', 'INVALID_JSON', 400);
  }
  if (code === 'FST_ERR_BAD_URL') return new JsonableError('Malformed URL', 'BAD_REQUEST', 400);
  if (status >= 400 && status < 500)
    return new JsonableError(err.message || 'Bad request', 'BAD_REQUEST', status);
  return null;
}

/**
 * Errors Fastify raises before routing (a path that is not valid percent-encoding, say);
 * passed as the `frameworkErrors` option so they get the same JSON envelope.
 */
export function handleFrameworkError(
  err: FastifyError,
  _request: FastifyRequest,
  reply: FastifyReply,
): void {
  sendError(reply, toJsonableError(err) ?? new JsonableError('Bad request', 'BAD_REQUEST', 400));
}

/**
 * Requests Node's HTTP parser refuses before Fastify sees them: headers (the query string
 * among them) over its 16 KiB, a malformed request line, a request not received in time.
 * Passed as the `clientErrorHandler` option so they get the same JSON envelope; the
 * connection is closed after, since the parser cannot go on with it.
 */
export function handleClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  // A reset connection has nothing left to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const error =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? new JsonableError('Request headers too large', 'REQUEST_TOO_LARGE', 431)
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new JsonableError('Request timed out', 'BAD_REQUEST', 408)
        : new JsonableError('Malformed HTTP request', 'BAD_REQUEST', 400);
  // As Node's own answer: never into an answer already being written on this connection.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent: boolean } | null })
    ._httpMessage;
  if (!socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(error.toJSON());
  socket.end(
    `HTTP/1.1 ${error.httpStatus} ${STATUS_CODES[error.httpStatus]}\r\n` +
      'Connection: close\r\nContent-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    () => socket.destroy(),
  );
}

/** Route patterns by method, to tell "no such route" (404) from "wrong method" (405). */
export class RouteTable {
  private readonly patterns: Array<{ method: string; re: RegExp }> = [];

  add(method: string, url: string): void {
    const re = new RegExp(
      `^${url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z_]+/g, '[^/]+')}/?$`,
    );
    this.patterns.push({ method, re });
  }

  allowedMethods(path: string): string[] {
    return [...new Set(this.patterns.filter((p) => p.re.test(path)).map((p) => p.method))].filter(
      (m) => m !== 'HEAD',
    );
  }
}

export function installErrorHandling(app: FastifyInstance, routes: RouteTable): void {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) =>
    sendError(reply, toClientError(err, request.log)),
  );
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    const allowed = routes.allowedMethods(path);
    if (allowed.length > 0) {
      reply.header('Allow', allowed.join(', '));
      return sendError(
        reply,
        new JsonableError('Method Not Allowed', 'BAD_REQUEST', 405, { allowed_methods: allowed }),
      );
    }
    return sendError(reply, new JsonableError('Not Found', 'BAD_REQUEST', 404));
  });
}
