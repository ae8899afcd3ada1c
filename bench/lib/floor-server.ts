// The floor: a bare node:http server doing the least the same request needs (check a Basic
// credential, answer a canned body of Parley's size; for GET /events park the request and
// answer every parked one when POST /messages arrives). Started by servers.ts.
//
// With BENCH_FLOOR_HEARTBEAT_MS (figure 7's floor), a parked GET /events is answered with a
// heartbeat instead: each connection on its own phase of that period, spread as Parley
// spreads them (golden-ratio steps), the first within one period of its first poll and then
// one period after each poll, from a wheel of slots as Parley's (events/heartbeats.ts).
import { createServer, type ServerResponse } from 'node:http';
import './probe.ts';

const bodies: Record<string, string> = {
  me: '{"result":"success","msg":""}',
  event: '{"result":"success","msg":"","events":[]}',
  send: '{"result":"success","msg":"","id":1}',
};
let auth = '';
const parked = new Set<ServerResponse>();

process.on('message', (m: { op?: string; key?: string; body?: string; auth?: string }) => {
  if (m?.op === 'set' && m.key && typeof m.body === 'string') bodies[m.key] = m.body;
  if (m?.op === 'set' && typeof m.auth === 'string') auth = m.auth;
});
process.channel?.unref();

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

const heartbeatMs = Number(process.env.BENCH_FLOOR_HEARTBEAT_MS) || 0;
const TICK_MS = 125;
const GOLDEN_FRACTION = (Math.sqrt(5) - 1) / 2;
const wheel = new Map<number, Set<ServerResponse>>();
const phased = new WeakSet<object>();
let phase = 0;
let beats = 0;

function parkForHeartbeat(res: ServerResponse): void {
  let due = Date.now() + heartbeatMs;
  if (!phased.has(res.socket!)) {
    phased.add(res.socket!);
    phase = (phase + GOLDEN_FRACTION) % 1;
    due = Date.now() + phase * heartbeatMs;
  }
  const tick = Math.ceil(due / TICK_MS);
  let slot = wheel.get(tick);
  if (!slot) wheel.set(tick, (slot = new Set()));
  slot.add(res);
  res.on('close', () => slot.delete(res));
}

if (heartbeatMs > 0) {
  setInterval(() => {
    const now = Math.floor(Date.now() / TICK_MS);
    for (const tick of wheel.keys()) {
      if (tick > now) continue;
      const due = wheel.get(tick)!;
      wheel.delete(tick);
      for (const res of due) {
        send(
          res,
          200,
          `{"result":"success","msg":"","events":[{"type":"heartbeat","id":${beats++}}],"queue_id":"1764200000:1"}`,
        );
      }
    }
  }, TICK_MS);
}

const server = createServer((req, res) => {
  const url = req.url ?? '';
  if (url === '/ready') return send(res, 200, '{}');
  if (auth && req.headers.authorization !== auth) return send(res, 401, '{"result":"error"}');
  if (req.method === 'GET' && url.startsWith('/api/v1/users/me')) return send(res, 200, bodies.me);
  if (req.method === 'GET' && url.startsWith('/api/v1/events')) {
    if (heartbeatMs > 0) return parkForHeartbeat(res);
    parked.add(res);
    res.on('close', () => parked.delete(res));
    return;
  }
  if (req.method === 'POST' && url.startsWith('/api/v1/messages')) {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // Read the form like a server must, then answer every parked poll in one loop.
      new URLSearchParams(Buffer.concat(chunks).toString());
      const waiting = [...parked];
      parked.clear();
      for (const r of waiting) send(r, 200, bodies.event);
      send(res, 200, bodies.send);
    });
    return;
  }
  send(res, 404, '{"result":"error"}');
});
server.keepAliveTimeout = 600_000;
server.headersTimeout = 0;
server.requestTimeout = 0;
server.maxHeadersCount = 100;
// The backlog Parley listens with (PARLEY_LISTEN_BACKLOG's default): with Node's 511, the
// bench's 256 connections opening at a time overflowed it, and each dropped SYN waited a
// second to be sent again.
server.listen({ port: Number(process.env.BENCH_FLOOR_PORT), host: '127.0.0.1', backlog: 4096 });
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
});
