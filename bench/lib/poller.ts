// A lean HTTP/1.1 keep-alive client on raw sockets, for holding thousands of parked long
// polls from one process without the per-request weight of a general client. It reads
// Content-Length framed responses only (what Parley and the floor send).
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

  static open(port: number): Promise<HttpConn> {
    return new Promise((resolve, reject) => {
      const socket = connect({ port, host: '127.0.0.1' });
      socket.once('connect', () => resolve(new HttpConn(socket, `127.0.0.1:${port}`)));
      socket.once('error', reject);
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
    this.socket.write(`${lines.join('\r\n')}\r\n\r\n${body ?? ''}`);
    return p;
  }

  close(): void {
    this.socket.destroy();
  }

  private onData(d: Buffer): void {
    this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
    const end = this.buf.indexOf(HEADER_END);
    if (end < 0) return;
    const head = this.buf.subarray(0, end).toString('latin1');
    const m = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    const length = m ? Number(m[1]) : 0;
    if (this.buf.length < end + 4 + length) return;
    const status = Number(head.slice(9, 12));
    const body = Buffer.from(this.buf.subarray(end + 4, end + 4 + length));
    this.buf = this.buf.subarray(end + 4 + length);
    const w = this.waiting;
    this.waiting = null;
    w?.resolve({ status, body, at: performance.now() });
  }
}

/** Open n connections, at most 256 connecting at a time. */
export async function openMany(port: number, n: number): Promise<HttpConn[]> {
  const out: HttpConn[] = [];
  for (let i = 0; i < n; i += 256) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(256, n - i) }, () => HttpConn.open(port)),
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
