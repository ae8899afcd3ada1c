// A lean HTTP/1.1 keep-alive client on raw sockets, for holding thousands of parked long
// polls from one process without the per-request weight of a general client. It reads
// Content-Length framed responses only (what Parley and the floor send).
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';

export interface Resp {
  status: number;
  body: Buffer;
  /** performance.now() when the last byte arrived. */
  at: number;
}

const HEADER_END = Buffer.from('\r\n\r\n');

export class HttpConn {
  private buf: Buffer = Buffer.alloc(0);
  private chunks: Buffer[] = [];
  private received = 0;
  /** Where the current response's body starts, once its head is complete; -1 before. */
  private bodyStart = -1;
  private bodyLength = 0;
  private status = 0;
  private waiting: { resolve(r: Resp): void; reject(e: Error): void } | null = null;
  closed = false;

  private constructor(
    private readonly socket: Socket,
    private readonly host: string,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (d: Buffer) => this.onData(d));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.closed = true;
      this.waiting?.reject(new Error('connection closed'));
      this.waiting = null;
    });
  }

  /**
   * A connection from a local port the kernel picks, or from the next of localPorts. A port
   * already connected to this server (from a figure's other connections, or in TIME_WAIT
   * from a run a moment ago that had a server on the same port) is passed over; after a
   * whole pool of them, the kernel picks.
   */
  static open(port: number, localPorts?: LocalPorts): Promise<HttpConn> {
    return new Promise((resolve, reject) => {
      const attempt = (tries: number) => {
        const localPort = tries < LocalPorts.SIZE ? localPorts?.next() : undefined;
        const socket = connect({
          port,
          host: '127.0.0.1',
          ...(localPort ? { localAddress: '127.0.0.1', localPort } : {}),
        });
        const failed = (err: NodeJS.ErrnoException) => {
          const taken = err.code === 'EADDRINUSE' || err.code === 'EADDRNOTAVAIL';
          if (localPort && taken) attempt(tries + 1);
          else reject(err);
        };
        socket.once('error', failed);
        socket.once('connect', () => {
          socket.off('error', failed);
          resolve(new HttpConn(socket, `127.0.0.1:${port}`));
        });
      };
      attempt(0);
    });
  }

  /** Send one request; one at a time per connection. */
  request(method: string, path: string, auth: string, body?: string): Promise<Resp> {
    if (this.closed) return Promise.reject(new Error('connection closed'));
    if (this.waiting) return Promise.reject(new Error('request already in flight'));
    const lines = [`${method} ${path} HTTP/1.1`, `Host: ${this.host}`];
    if (auth) lines.push(`Authorization: ${auth}`);
    if (body !== undefined) {
      lines.push('Content-Type: application/x-www-form-urlencoded');
      lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
    }
    const p = new Promise<Resp>((resolve, reject) => (this.waiting = { resolve, reject }));
    // A round that fails before it reads its answers (its probe did not start, say) closes
    // its connections, and their requests reject with nobody waiting yet: that must fail the
    // figure, not end the whole run on an unhandled rejection. Whoever awaits p still sees it.
    p.catch(() => undefined);
    this.socket.write(`${lines.join('\r\n')}\r\n\r\n${body ?? ''}`);
    return p;
  }

  close(): void {
    this.socket.destroy();
  }

  private onData(d: Buffer): void {
    // A large body arrives in many chunks: they are kept apart and joined once complete,
    // since joining at every chunk made the client's own time grow with the square of the
    // size (a 700 KB register is ~11 chunks) and counted it as the server's latency.
    this.chunks.push(d);
    this.received += d.length;
    if (this.bodyStart < 0) {
      this.buf = this.chunks.length === 1 ? d : Buffer.concat(this.chunks, this.received);
      this.chunks = [this.buf];
      const end = this.buf.indexOf(HEADER_END);
      if (end < 0) return;
      const head = this.buf.subarray(0, end).toString('latin1');
      const m = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      this.status = Number(head.slice(9, 12));
      this.bodyStart = end + 4;
      this.bodyLength = m ? Number(m[1]) : 0;
    }
    if (this.received < this.bodyStart + this.bodyLength) return;
    const all =
      this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.received);
    const body = Buffer.from(all.subarray(this.bodyStart, this.bodyStart + this.bodyLength));
    const rest = all.subarray(this.bodyStart + this.bodyLength);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.received = rest.length;
    this.bodyStart = -1;
    const w = this.waiting;
    this.waiting = null;
    w?.resolve({ status: this.status, body, at: performance.now() });
  }
}

/**
 * Local ports for the bench's many connections, taken in turn from the top 20,000 of the
 * kernel's ephemeral range. Left to the kernel, a connection's port costs more the more of
 * the range is in use: Linux tries even ports first, and once they are taken (about 14,000
 * connections to one server) every further connect walks through them. Figure 7's 19,000
 * connections took 16 s to open that way on a slow machine, and 1.3 s from ports named in
 * turn. A port named this way and then closed stays in TIME_WAIT, where a server could not
 * listen on it for a minute: the servers' ports come from below the pool (freePort).
 */
export class LocalPorts {
  static readonly SIZE = 20_000;
  private cursor: number;

  private constructor(
    readonly low: number,
    private readonly high: number,
  ) {
    this.cursor = low;
  }

  /** The pool, or null where the range cannot be read or leaves too few ports below it. */
  static ephemeral(): LocalPorts | null {
    try {
      const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'latin1')
        .trim()
        .split(/\s+/)
        .map(Number);
      if (!(low > 0 && high - low >= LocalPorts.SIZE + 5000)) return null;
      return new LocalPorts(high - LocalPorts.SIZE + 1, high);
    } catch {
      return null;
    }
  }

  next(): number {
    if (this.cursor > this.high) this.cursor = this.low;
    return this.cursor++;
  }
}

export const localPorts = LocalPorts.ephemeral() ?? undefined;

/** Open n connections, at most 256 connecting at a time. */
export async function openMany(port: number, n: number): Promise<HttpConn[]> {
  const out: HttpConn[] = [];
  for (let i = 0; i < n; i += 256) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(256, n - i) }, () => HttpConn.open(port, localPorts)),
    );
    out.push(...batch);
  }
  return out;
}

export function closeAll(conns: HttpConn[]): void {
  for (const c of conns) c.close();
}

export const basicAuth = (email: string, key: string): string =>
  `Basic ${Buffer.from(`${email}:${key}`).toString('base64')}`;
