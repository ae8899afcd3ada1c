// Outgoing HTTP for webhooks. Bots' URLs are chosen by users, so the client refuses to dial
// private, loopback, link-local, multicast and other non-public addresses unless the
// operator allowed them (PARLEY_OUTGOING_WEBHOOK_ALLOW). The check runs on every address
// the host name resolves to, and the connection goes to the address that was checked, so a
// name that resolves differently between check and connect (DNS rebinding) cannot slip by.
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, buildConnector, errors as undiciErrors, request } from 'undici';

export type HttpFailureKind = 'refused' | 'timeout' | 'connection' | 'too_large';

/** Why a request produced no usable response. timeout and connection may be retried. */
export class HttpFailure extends Error {
  constructor(
    readonly kind: HttpFailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'HttpFailure';
  }
}

export interface HttpPost {
  contentType: string;
  body: string;
  timeoutMs: number;
}

export interface HttpResponse {
  status: number;
  body: string;
}

export interface HttpClient {
  /** POST; a response of any status resolves, anything else rejects with an HttpFailure. */
  post(url: string, req: HttpPost): Promise<HttpResponse>;
  close(): Promise<void>;
}

export interface HttpClientOptions {
  /** Host names and CIDR ranges (or single addresses) that may be dialled although private. */
  allow: string[];
  userAgent: string;
  maxResponseBytes?: number;
  /** Name resolution (tests fake it); all addresses of the name. */
  resolve?: (hostname: string) => Promise<string[]>;
  /** The socket-level connector (tests record what would be dialled). */
  dial?: buildConnector.connector;
}

export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

export interface AddressPolicy {
  hostAllowed(hostname: string): boolean;
  /** Null when the address may be dialled, else why not. */
  refusal(address: string): string | null;
}

export function addressPolicy(allow: string[]): AddressPolicy {
  const hosts = new Set<string>();
  const ranges: Range[] = [];
  for (const entry of allow) {
    const text = entry.trim().toLowerCase();
    if (text === '') continue;
    if (text.includes('/')) {
      ranges.push(ipaddr.parseCIDR(text));
    } else if (ipaddr.isValid(text)) {
      const addr = ipaddr.parse(text);
      ranges.push([addr, addr.kind() === 'ipv4' ? 32 : 128]);
    } else {
      hosts.add(text);
    }
  }
  return {
    hostAllowed: (hostname) => hosts.has(hostname.toLowerCase()),
    refusal(address) {
      if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
      // IPv4-mapped IPv6 (::ffff:127.0.0.1) is judged as the IPv4 address it carries.
      const addr = ipaddr.process(address);
      for (const [net, bits] of ranges) {
        if (addr.kind() === net.kind() && addr.match(net as never, bits)) return null;
      }
      const range = addr.range();
      return range === 'unicast' ? null : `${address} is a ${range} address`;
    },
  };
}

async function systemResolve(hostname: string): Promise<string[]> {
  const found = await dnsLookup(hostname, { all: true, verbatim: true });
  return found.map((a) => a.address);
}

const unbracket = (host: string): string =>
  host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;

/** A connector that resolves, checks every address, then dials the first one. */
function guardedConnector(
  policy: AddressPolicy,
  resolve: (hostname: string) => Promise<string[]>,
  dial: buildConnector.connector,
): buildConnector.connector {
  return (options, callback) => {
    const hostname = unbracket(options.hostname);
    const pick = async (): Promise<string> => {
      const addresses = isIP(hostname) ? [hostname] : await resolve(hostname);
      if (addresses.length === 0) throw new HttpFailure('connection', `${hostname} has no address`);
      if (policy.hostAllowed(hostname)) return addresses[0];
      for (const a of addresses) {
        const why = policy.refusal(a);
        if (why) throw new HttpFailure('refused', `${hostname}: ${why}, which is not allowed`);
      }
      return addresses[0];
    };
    pick().then(
      (address) =>
        dial(
          {
            ...options,
            hostname: address,
            servername: isIP(hostname) ? options.servername : hostname,
          },
          callback,
        ),
      (err: unknown) =>
        callback(
          err instanceof HttpFailure
            ? err
            : new HttpFailure('connection', `cannot resolve ${hostname}: ${describe(err)}`),
          null,
        ),
    );
  };
}

function describe(err: unknown): string {
  const e = err as { code?: string; message?: string };
  return e?.code || e?.message || String(err);
}

/** Walk the cause chain: undici wraps the connector's error. */
function findFailure(err: unknown): HttpFailure | null {
  let e: unknown = err;
  for (let i = 0; i < 5 && e; i++) {
    if (e instanceof HttpFailure) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}

function classify(err: unknown, timeoutMs: number): HttpFailure {
  const found = findFailure(err);
  if (found) return found;
  const e = err as { name?: string; code?: string };
  if (
    e?.name === 'TimeoutError' ||
    err instanceof undiciErrors.HeadersTimeoutError ||
    err instanceof undiciErrors.BodyTimeoutError ||
    err instanceof undiciErrors.ConnectTimeoutError
  ) {
    return new HttpFailure('timeout', `no response within ${timeoutMs / 1000} s`);
  }
  return new HttpFailure('connection', `connection failed (${describe(err)})`);
}

export function createHttpClient(opts: HttpClientOptions): HttpClient {
  const policy = addressPolicy(opts.allow);
  const maxBytes = opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const agent = new Agent({
    connect: guardedConnector(
      policy,
      opts.resolve ?? systemResolve,
      opts.dial ?? buildConnector({}),
    ),
  });
  return {
    async post(url, req) {
      const signal = AbortSignal.timeout(req.timeoutMs);
      let res: Awaited<ReturnType<typeof request>>;
      try {
        res = await request(url, {
          method: 'POST',
          dispatcher: agent,
          signal,
          headers: { 'content-type': req.contentType, 'user-agent': opts.userAgent },
          body: req.body,
        });
      } catch (err) {
        throw classify(err, req.timeoutMs);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      try {
        for await (const chunk of res.body) {
          size += (chunk as Buffer).length;
          if (size > maxBytes) {
            res.body.destroy();
            throw new HttpFailure('too_large', `the response is larger than ${maxBytes} bytes`);
          }
          chunks.push(chunk as Buffer);
        }
      } catch (err) {
        throw err instanceof HttpFailure ? err : classify(err, req.timeoutMs);
      }
      return { status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') };
    },
    async close() {
      await agent.close();
    },
  };
}
