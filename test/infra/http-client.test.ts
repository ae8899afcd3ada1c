// The outgoing HTTP client: real requests to a receiver on loopback (allowed by
// configuration), and the address guard refusing private targets before any connection.
// Non-loopback targets are only ever handed to a recording connector that never dials.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { buildConnector } from 'undici';
import {
  addressPolicy,
  createHttpClient,
  HttpFailure,
  type HttpClientOptions,
} from '../../src/infra/http-client.ts';

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

async function receiver(
  respond: (req: IncomingMessage, res: ServerResponse, body: string) => void,
): Promise<{ server: Server; port: number; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      respond(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port, received };
}

const closeServer = (s: Server): Promise<void> =>
  new Promise((r) => {
    s.closeAllConnections();
    s.close(() => r());
  });

/** A connector that records what would be dialled and fails without opening a socket. */
function recordingDial(): { dial: buildConnector.connector; dialled: buildConnector.Options[] } {
  const dialled: buildConnector.Options[] = [];
  return {
    dialled,
    dial: (options, callback) => {
      dialled.push(options);
      callback(new Error('not dialled in tests'), null);
    },
  };
}

const post = { contentType: 'application/json', body: '{"a":1}', timeoutMs: 5000 };

async function failure(p: Promise<unknown>): Promise<HttpFailure> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof HttpFailure, `expected an HttpFailure, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the request to fail');
}

function client(opts: Partial<HttpClientOptions>) {
  return createHttpClient({ allow: [], userAgent: 'Parley/test', ...opts });
}

test('an allowed loopback receiver gets the body, content type and User-Agent', async () => {
  const r = await receiver((_req, res) => {
    res.writeHead(201, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  });
  const http = client({ allow: ['127.0.0.1/32'] });
  try {
    const res = await http.post(`http://127.0.0.1:${r.port}/hook?x=1`, post);
    assert.deepEqual(res, { status: 201, body: '{"ok":true}' });
    assert.equal(r.received.length, 1);
    const got = r.received[0];
    assert.equal(got.method, 'POST');
    assert.equal(got.url, '/hook?x=1');
    assert.equal(got.body, '{"a":1}');
    assert.equal(got.headers['user-agent'], 'Parley/test');
    assert.equal(got.headers['content-type'], 'application/json');
  } finally {
    await http.close();
    await closeServer(r.server);
  }
});

test('loopback is refused when not allowed, and the receiver sees nothing', async () => {
  const r = await receiver((_req, res) => res.end('{}'));
  const http = client({ allow: ['10.0.0.0/8'] });
  try {
    for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]', 'localhost']) {
      const err = await failure(http.post(`http://${host}:${r.port}/`, post));
      assert.equal(err.kind, 'refused', host);
      assert.match(err.message, /loopback/);
    }
    assert.equal(r.received.length, 0);
  } finally {
    await http.close();
    await closeServer(r.server);
  }
});

test('private, link-local, metadata and IPv6 local addresses are refused before dialling', async () => {
  const { dial, dialled } = recordingDial();
  const http = client({ dial });
  try {
    const cases: Array<[string, RegExp]> = [
      ['127.0.0.1', /127\.0\.0\.1 is a loopback address/],
      ['10.1.2.3', /10\.1\.2\.3 is a private address/],
      ['192.168.1.20', /private/],
      ['172.16.5.5', /private/],
      ['100.64.0.1', /carrierGradeNat/],
      ['169.254.169.254', /169\.254\.169\.254 is a linkLocal address/],
      ['0.0.0.0', /unspecified/],
      ['224.0.0.1', /multicast/],
      ['[::1]', /loopback/],
      ['[fe80::1]', /linkLocal/],
      ['[fd00::1]', /uniqueLocal/],
      ['[::ffff:127.0.0.1]', /loopback/],
      ['[::ffff:10.0.0.1]', /private/],
      ['[::]', /unspecified/],
    ];
    for (const [host, why] of cases) {
      const err = await failure(http.post(`http://${host}:8080/`, post));
      assert.equal(err.kind, 'refused', host);
      assert.match(err.message, why, host);
    }
    assert.deepEqual(dialled, []);
  } finally {
    await http.close();
  }
});

test('every resolved address is checked, and the checked address is the one dialled', async () => {
  const { dial, dialled } = recordingDial();
  const names: Record<string, string[]> = {
    'rebind.example': ['93.184.216.34', '10.0.0.5'],
    'six.example': ['2606:4700::1', 'fe80::2'],
    'public.example': ['93.184.216.34'],
  };
  const http = client({ dial, resolve: async (h) => names[h] ?? [] });
  try {
    for (const host of ['rebind.example', 'six.example']) {
      const err = await failure(http.post(`https://${host}/`, post));
      assert.equal(err.kind, 'refused', host);
    }
    assert.equal(dialled.length, 0);
    const err = await failure(http.post('https://public.example/hook', post));
    assert.equal(err.kind, 'connection');
    assert.equal(dialled.length, 1);
    assert.equal(dialled[0].hostname, '93.184.216.34');
    assert.equal(dialled[0].servername, 'public.example');
  } finally {
    await http.close();
  }
});

test('an allowed host name may resolve to a private address', async () => {
  const r = await receiver((_req, res) => res.end('yes'));
  const http = client({ allow: ['localhost'] });
  try {
    const res = await http.post(`http://localhost:${r.port}/`, post);
    assert.deepEqual(res, { status: 200, body: 'yes' });
    assert.equal(r.received.length, 1);
    // The name allows that host only, not loopback by address.
    const err = await failure(http.post(`http://127.0.0.1:${r.port}/`, post));
    assert.equal(err.kind, 'refused');
    assert.equal(r.received.length, 1);
  } finally {
    await http.close();
    await closeServer(r.server);
  }
});

test('a response over the size cap fails as too large', async () => {
  const r = await receiver((_req, res) => res.end('x'.repeat(5000)));
  const http = client({ allow: ['127.0.0.1'], maxResponseBytes: 1024 });
  try {
    const err = await failure(http.post(`http://127.0.0.1:${r.port}/`, post));
    assert.equal(err.kind, 'too_large');
    assert.equal(err.message, 'the response is larger than 1024 bytes');
  } finally {
    await http.close();
    await closeServer(r.server);
  }
});

test('no answer in time is a timeout; a closed port is a connection error', async () => {
  const r = await receiver(() => undefined);
  const closed = await receiver(() => undefined);
  const closedPort = closed.port;
  await closeServer(closed.server);
  const http = client({ allow: ['127.0.0.1/32'] });
  try {
    const slow = await failure(
      http.post(`http://127.0.0.1:${r.port}/`, { ...post, timeoutMs: 200 }),
    );
    assert.equal(slow.kind, 'timeout');
    assert.equal(slow.message, 'no response within 0.2 s');
    const refused = await failure(http.post(`http://127.0.0.1:${closedPort}/`, post));
    assert.equal(refused.kind, 'connection');
    assert.match(refused.message, /ECONNREFUSED/);
  } finally {
    await http.close();
    await closeServer(r.server);
  }
});

test('the allow list takes CIDR ranges and single addresses of both families', () => {
  const policy = addressPolicy(['192.168.0.0/16', '::1', 'fd00::/8', 'bots.internal']);
  assert.equal(policy.refusal('192.168.44.1'), null);
  assert.equal(policy.refusal('::1'), null);
  assert.equal(policy.refusal('fd12::5'), null);
  assert.equal(policy.refusal('::ffff:192.168.1.1'), null);
  assert.equal(policy.refusal('93.184.216.34'), null);
  assert.equal(policy.refusal('10.0.0.1'), '10.0.0.1 is a private address');
  assert.equal(policy.refusal('127.0.0.1'), '127.0.0.1 is a loopback address');
  assert.equal(policy.hostAllowed('BOTS.internal'), true);
  assert.equal(policy.hostAllowed('other.internal'), false);
});
