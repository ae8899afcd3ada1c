// The idle sweep (http/idle-connections.ts) on a bare node:http server with raw connections,
// its pass cut into chunks of two so that one pass spans several macrotasks: every quiet
// connection is closed, a talking one and one whose request awaits its answer are not.
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeIdleConnections } from '../../src/http/idle-connections.ts';

const IDLE_MS = 300;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Client {
  socket: Socket;
  /** Everything the server sent. */
  received: () => string;
  closedAt: Promise<number>;
}

async function open(port: number): Promise<Client> {
  const socket = connect({ port, host: '127.0.0.1' });
  await once(socket, 'connect');
  let data = '';
  socket.on('data', (chunk: Buffer) => (data += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  const closedAt = new Promise<number>((resolve) =>
    socket.on('close', () => resolve(performance.now())),
  );
  return { socket, received: () => data, closedAt };
}

/** The promise's value, or a failure once ms have passed. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not settled within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
/** Long enough for a close due at 1.25 idle times on a slow machine. */
const CLOSE_WITHIN_MS = 10 * IDLE_MS;

const request = (path: string) => `GET ${path} HTTP/1.1\r\nHost: idle.test\r\n\r\n`;

test('a sweep in chunks closes every quiet connection and keeps the talking and the waiting', async () => {
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    if (req.url === '/hold') held.push(res);
    else res.end('ok');
  });
  closeIdleConnections(server, IDLE_MS, 2);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  try {
    const quiet = await Promise.all(Array.from({ length: 5 }, () => open(port)));
    const talking = await open(port);
    const waiting = await open(port);
    const start = performance.now();
    for (const c of quiet) c.socket.write(request('/'));
    waiting.socket.write(request('/hold'));
    // Talk every 100 ms for three idle times.
    for (let i = 0; i < 9; i++) {
      talking.socket.write(request('/'));
      await sleep(100);
    }
    const closedAt = await within(Promise.all(quiet.map((c) => c.closedAt)), CLOSE_WITHIN_MS);
    for (const [i, at] of closedAt.entries()) {
      // Answered, then closed no sooner than the idle time after it.
      assert.match(quiet[i].received(), /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nok$/);
      assert.ok(at - start >= IDLE_MS, `closed after ${at - start} ms`);
    }
    assert.equal(talking.socket.destroyed, false);
    assert.equal(talking.received().match(/\r\n\r\nok/g)?.length, 9);
    assert.equal(waiting.socket.destroyed, false);
    assert.equal(waiting.received(), '');
    // Answered, the waiting connection goes quiet and closes like any other.
    held[0].end('late');
    await within(waiting.closedAt, CLOSE_WITHIN_MS);
    assert.match(waiting.received(), /\r\n\r\nlate$/);
    talking.socket.destroy();
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test('a sweep forgets connections that closed, whichever side closed them', async () => {
  const server = createServer((req, res) => res.end('ok'));
  const sweep = closeIdleConnections(server, IDLE_MS, 2);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  try {
    const clients = await Promise.all(Array.from({ length: 5 }, () => open(port)));
    // Each is watched once the server has accepted it, maybe after the client saw it connect.
    const accepted = (async () => {
      while (sweep.watched < 5) await sleep(5);
    })();
    await within(accepted, CLOSE_WITHIN_MS);
    assert.equal(sweep.watched, 5);
    // Closed by the client; the server's sockets close when they read the end.
    for (const c of clients.slice(0, 3)) c.socket.end();
    await within(Promise.all(clients.slice(0, 3).map((c) => c.closedAt)), CLOSE_WITHIN_MS);
    // A pass starts every quarter of the idle time; two of them have gone by.
    await sleep(IDLE_MS / 2 + 50);
    assert.equal(sweep.watched, 2);
    // Quiet past the idle time, the other two are closed by the server and forgotten next.
    await within(Promise.all(clients.slice(3).map((c) => c.closedAt)), CLOSE_WITHIN_MS);
    await sleep(IDLE_MS / 2 + 50);
    assert.equal(sweep.watched, 0);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
