// Keep-alive over real sockets (http/idle-connections.ts, closeIdleConnections): a connection
// with nothing in flight is closed once it has been quiet for the keep-alive time, a parked
// long-poll keeps its connection however long it waits, and a request that stops halfway
// is closed like an idle one.
import { once } from 'node:events';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestAppOptions } from '../support/app.ts';
import { basicAuth } from '../support/client.ts';
import { waitFor, withServer, type Live } from '../support/live.ts';

/** The quiet time before a close is this plus node:http's margin of a second. */
const QUICK_KEEP_ALIVE: TestAppOptions = { config: { keepAliveMs: 200 } };
/** Longer than a connection's whole quiet time: what must not close it. */
const PAST_KEEP_ALIVE_MS = 1800;

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One client connection that sends requests by hand and reads Content-Length answers. */
class Connection {
  private data = Buffer.alloc(0);
  private wanted: ((answer: Answer) => void) | null = null;
  /** Settles when the server closes the connection, with what it sent that no answer took. */
  readonly closed: Promise<string>;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.data = Buffer.concat([this.data, chunk]);
      this.deliver();
    });
    this.closed = new Promise((resolve) => {
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(this.data.toString('latin1')));
    });
  }

  static async open(port: number): Promise<Connection> {
    const socket = connect({ port, host: '127.0.0.1' });
    await once(socket, 'connect');
    return new Connection(socket);
  }

  send(text: string): void {
    this.socket.write(text);
  }

  /** The next complete answer on this connection. */
  answer(): Promise<Answer> {
    return new Promise((resolve, reject) => {
      this.wanted = resolve;
      this.closed.then(() => reject(new Error('closed before an answer')), reject);
      this.deliver();
    });
  }

  destroy(): void {
    this.socket.destroy();
  }

  private deliver(): void {
    const end = this.data.indexOf('\r\n\r\n');
    if (!this.wanted || end < 0) return;
    const [statusLine, ...lines] = this.data.subarray(0, end).toString('latin1').split('\r\n');
    const headers = Object.fromEntries(
      lines.map((l) => [
        l.slice(0, l.indexOf(':')).toLowerCase(),
        l.slice(l.indexOf(':') + 1).trim(),
      ]),
    );
    const length = Number(headers['content-length']);
    if (this.data.length < end + 4 + length) return;
    const body = this.data.subarray(end + 4, end + 4 + length).toString('utf8');
    this.data = this.data.subarray(end + 4 + length);
    const wanted = this.wanted;
    this.wanted = null;
    wanted({ status: Number(statusLine.split(' ')[1]), headers, body });
  }
}

/** A test app with a quick keep-alive, and one raw connection to it. */
function withConnection(fn: (live: Live, conn: Connection) => Promise<void>): Promise<void> {
  return withServer(async (live) => {
    const conn = await Connection.open((live.t.app.server.address() as AddressInfo).port);
    try {
      await fn(live, conn);
    } finally {
      conn.destroy();
    }
  }, QUICK_KEEP_ALIVE);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('a connection with nothing in flight is closed once quiet for the keep-alive time', () =>
  withConnection(async (_live, conn) => {
    conn.send('GET /api/v1/server_settings HTTP/1.1\r\nHost: parley.test\r\n\r\n');
    const first = await conn.answer();
    assert.equal(first.status, 200);
    assert.equal(first.headers.connection, 'keep-alive');
    // A request within the keep-alive time is answered on the same connection.
    await sleep(100);
    conn.send('GET /api/v1/server_settings HTTP/1.1\r\nHost: parley.test\r\n\r\n');
    assert.equal((await conn.answer()).status, 200);
    // Then nothing: the server closes it, with nothing more sent.
    assert.equal(await conn.closed, '');
  }));

test('a parked long-poll keeps its connection past the keep-alive time', () =>
  withConnection(async (live, conn) => {
    const { member } = live.t.fx;
    const registered = await live.call(member, 'POST', '/register', {
      event_types: ['user_settings'],
    });
    assert.equal(registered.status, 200);
    const queueId = String(registered.body.queue_id);
    conn.send(
      `GET /api/v1/events?queue_id=${encodeURIComponent(queueId)}&last_event_id=-1 HTTP/1.1\r\n` +
        `Host: parley.test\r\nAuthorization: ${basicAuth(member.email, member.api_key)}\r\n\r\n`,
    );
    await waitFor(() => live.t.ctx.queues.inspect(queueId)?.parked === true);
    const answered = conn.answer();
    await sleep(PAST_KEEP_ALIVE_MS);
    const change = await live.call(member, 'PATCH', '/settings', { enter_sends: true });
    assert.equal(change.status, 200);
    const answer = await answered;
    assert.equal(answer.status, 200);
    assert.deepEqual(JSON.parse(answer.body), {
      result: 'success',
      msg: '',
      events: [
        { type: 'user_settings', op: 'update', property: 'enter_sends', value: true, id: 0 },
      ],
      queue_id: queueId,
    });
    // Answered, the connection has nothing in flight and closes when quiet.
    assert.equal(await conn.closed, '');
  }));

test('a request that stops halfway is closed once quiet for the keep-alive time', () =>
  withConnection(async (live, conn) => {
    const { member } = live.t.fx;
    conn.send(
      'POST /api/v1/messages HTTP/1.1\r\nHost: parley.test\r\n' +
        `Authorization: ${basicAuth(member.email, member.api_key)}\r\n` +
        'Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\ntype=strea',
    );
    // Closed without an answer: nothing was sent back.
    assert.equal(await conn.closed, '');
  }));

test('a connection that keeps talking stays open past the keep-alive time', () =>
  withConnection(async (_live, conn) => {
    let closed = false;
    void conn.closed.then(() => (closed = true));
    // Quiet gaps of 700 ms, each under the 1,200 ms quiet time, for 2.8 s in all: long enough
    // for several of the server's looks at its connections.
    for (let i = 0; i < 5; i++) {
      if (i > 0) await sleep(700);
      conn.send('GET /api/v1/server_settings HTTP/1.1\r\nHost: parley.test\r\n\r\n');
      assert.equal((await conn.answer()).status, 200);
      assert.equal(closed, false);
    }
    assert.equal(await conn.closed, '');
  }));
