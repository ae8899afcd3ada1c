// A test app listening on a real socket, for what `inject` cannot reach: long-polls that
// park, clients that disconnect, and plain GETs answered by http/direct-listener.ts before
// Fastify sees the request.
import { request as httpRequest, type Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildTestApp, type TestApp, type TestAppOptions } from './app.ts';
import { basicAuth, encodeParams } from './client.ts';
import type { FixtureUser } from './fixture.ts';

export interface RawRequest {
  method: string;
  /** Path and query, as sent on the request line. */
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** The agent whose connections to use (node's global one by default). */
  agent?: Agent;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  text: string;
}

export interface Live {
  t: TestApp;
  /** How many requests reached Fastify (its onRequest hook) so far. */
  fastifyRequests(): number;
  call(
    who: FixtureUser,
    method: string,
    path: string,
    params?: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<{ status: number; body: Record<string, unknown>; headers: Headers; text: string }>;
  /** One request exactly as given (node:http, so any Host header, method or body). */
  raw(req: RawRequest): Promise<RawResponse>;
}

export async function withServer(
  fn: (live: Live) => Promise<void>,
  opts: TestAppOptions = {},
): Promise<void> {
  let seen = 0;
  const t = await buildTestApp({
    ...opts,
    prepare: (app) => {
      app.addHook('onRequest', async () => {
        seen++;
      });
      opts.prepare?.(app);
    },
  });
  try {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    await fn({
      t,
      fastifyRequests: () => seen,
      async call(who, method, path, params = {}, signal) {
        const query = method === 'GET' ? `?${encodeParams(params)}` : '';
        const res = await fetch(`http://127.0.0.1:${port}/api/v1${path}${query}`, {
          method,
          signal,
          headers: {
            authorization: basicAuth(who.email, who.api_key),
            ...(method === 'GET' ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
          },
          ...(method === 'GET' ? {} : { body: encodeParams(params) }),
        });
        const text = await res.text();
        const body = JSON.parse(text) as Record<string, unknown>;
        return { status: res.status, body, headers: res.headers, text };
      },
      raw: (req) => rawRequest(port, req),
    });
  } finally {
    await t.close();
  }
}

/** One request exactly as given (node:http, so any Host header, method or body). */
export function rawRequest(port: number, req: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: req.method,
        path: req.path,
        agent: req.agent,
        // Node sends no length for a GET body by itself.
        headers: {
          ...req.headers,
          ...(req.body === undefined
            ? {}
            : { 'content-length': String(Buffer.byteLength(req.body)) }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(req.body);
  });
}

export async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!check()) throw new Error('condition not reached');
}
