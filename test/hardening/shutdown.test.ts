// Graceful shutdown, beyond test/cli/serve.test.ts (which covers a clean SIGTERM, a parked
// long-poll, saving the queues and the second signal with fake signals): a request in
// flight when the stop begins is finished and stored; one that never finishes holds the
// stop until a second SIGTERM or the deadline forces the exit, leaving a sound database.
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { keepForLife } from '../../src/store/sqlite-lifetime.ts';
import { runCli } from '../../src/cli/program.ts';
import { STOP_DEADLINE_MS } from '../../src/cli/signals.ts';
import { setFaultHook } from '../../src/actions/transaction.ts';
import { captureIo, tempDir, waitFor } from '../cli/io.ts';
import {
  basic,
  call,
  ownerOf,
  startServerProcess,
  type Account,
  type ServerProcess,
} from './server-process.ts';

afterEach(() => setFaultHook(null));

/** The messages stored with this content, and how many user rows each has. */
function storedMessages(dir: string, content: string): Array<{ id: number; rows: number }> {
  const db = keepForLife(new SQLite(join(dir, 'parley.sqlite3'), { readonly: true }));
  try {
    assert.deepEqual(keepForLife(db.prepare('PRAGMA integrity_check')).all(), [
      { integrity_check: 'ok' },
    ]);
    return keepForLife(
      db.prepare(
        `SELECT m.id AS id, (SELECT COUNT(*) FROM user_messages u WHERE u.message_id = m.id) AS rows
         FROM messages m WHERE m.content = ? ORDER BY m.id`,
      ),
    ).all(content) as Array<{ id: number; rows: number }>;
  } finally {
    db.close();
  }
}

test('a stop signal in the middle of a send lets it commit and answer', async () => {
  const dir = tempDir();
  const cap = captureIo({ PARLEY_PORT: '0', PARLEY_LOG_LEVEL: 'silent', PARLEY_DATA_DIR: dir });
  const done = runCli(['serve', '--json'], cap.io);
  await waitFor('the serve banner', () => cap.stdout().includes('\n'));
  const banner = JSON.parse(cap.stdout()) as Record<string, string>;
  const owner: Account = {
    id: Number(banner.user_id),
    email: banner.email,
    apiKey: banner.api_key,
  };

  let signalled = false;
  setFaultHook((point) => {
    if (point !== 'message-inserted' || signalled) return;
    signalled = true;
    // The transaction is open and the message row written: the stop begins right here.
    cap.signal('SIGTERM');
  });
  const res = await call(banner.url, owner, 'POST', '/messages', {
    type: 'direct',
    to: [owner.id],
    content: 'sent while stopping',
  });
  assert.ok(signalled);
  assert.deepEqual(res, { status: 200, body: { result: 'success', msg: '', id: res.body.id } });
  assert.equal(await done, 0, cap.stderr());
  assert.deepEqual(cap.exits, []);
  assert.deepEqual(storedMessages(dir, 'sent while stopping'), [
    { id: res.body.id as number, rows: 1 },
  ]);
  await assert.rejects(fetch(`${banner.url}/api/v1/server_settings`));
});

/**
 * A POST /messages whose body arrives in two parts: the server holds the request open
 * until finish() sends the rest.
 */
function slowSend(server: ServerProcess, owner: Account, content: string) {
  const body = new URLSearchParams({
    type: 'direct',
    to: JSON.stringify([owner.id]),
    content,
  }).toString();
  const cut = Math.floor(body.length / 2);
  const { hostname, port } = new URL(server.url);
  let wrote!: () => void;
  const started = new Promise<void>((resolve) => (wrote = resolve));
  const req = httpRequest({
    host: hostname,
    port,
    method: 'POST',
    path: '/api/v1/messages',
    headers: {
      authorization: basic(owner.email, owner.apiKey),
      'content-type': 'application/x-www-form-urlencoded',
      'content-length': Buffer.byteLength(body),
    },
  });
  const response = new Promise<{ status: number; body: Record<string, unknown> }>(
    (resolve, reject) => {
      req.on('error', reject);
      req.on('response', (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      });
    },
  );
  // An unanswered request must not fail the test by itself; the callers await it.
  response.catch(() => undefined);
  req.write(body.slice(0, cut), () => wrote());
  // Resolves once the server has read the request's headers: a request on another
  // connection, made after these bytes were sent, has been answered.
  const inFlight = started.then(async () => {
    const later = await fetch(`${server.url}/api/v1/server_settings`);
    assert.equal(later.status, 200);
  });
  return { inFlight, response, finish: () => req.end(body.slice(cut)) };
}

/** SIGTERM, then wait until the server has begun stopping and refuses new connections. */
async function beginStop(server: ServerProcess): Promise<void> {
  server.child.kill('SIGTERM');
  await waitFor('the stop to begin', () => server.stderr().includes('"msg":"stopping'));
  for (let i = 0; ; i++) {
    const refused = await fetch(`${server.url}/api/v1/server_settings`).then(
      () => false,
      () => true,
    );
    if (refused) return;
    assert.ok(i < 100, 'the server still accepts connections while stopping');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('stopping a real server with a request in flight', { timeout: 120_000 }, () => {
  const start = async () => {
    const dir = tempDir();
    const server = await startServerProcess({ PARLEY_DATA_DIR: dir, PARLEY_LOG_LEVEL: 'info' });
    return { dir, server, owner: ownerOf(server) };
  };

  test('a request still uploading is finished, answered and stored; exit 0', async () => {
    const { dir, server, owner } = await start();
    const send = slowSend(server, owner, 'finished during the stop');
    await send.inFlight;
    await beginStop(server);
    assert.equal(server.status(), null, 'the server exited with a request in flight');
    send.finish();
    const res = await send.response;
    assert.deepEqual(res, { status: 200, body: { result: 'success', msg: '', id: res.body.id } });
    assert.deepEqual(await server.exit(), { code: 0, signal: null }, server.stderr());
    assert.match(server.stderr(), /"msg":"Parley stopped"/);
    assert.deepEqual(storedMessages(dir, 'finished during the stop'), [
      { id: res.body.id as number, rows: 1 },
    ]);
  });

  test('a second SIGTERM exits at once with code 1; the database stays sound', async () => {
    const { dir, server, owner } = await start();
    const send = slowSend(server, owner, 'never finished');
    await send.inFlight;
    await beginStop(server);
    server.child.kill('SIGTERM');
    assert.deepEqual(await server.exit(), { code: 1, signal: null }, server.stderr());
    assert.match(server.stderr(), /"msg":"second stop signal: exiting without finishing"/);
    assert.doesNotMatch(server.stderr(), /"msg":"Parley stopped"/);
    await assert.rejects(send.response);
    assert.deepEqual(storedMessages(dir, 'never finished'), []);
  });

  test('a stop held past the deadline exits with code 1', async () => {
    const { dir, server, owner } = await start();
    const send = slowSend(server, owner, 'held too long');
    await send.inFlight;
    await beginStop(server);
    const status = await server.exit(STOP_DEADLINE_MS + 30_000);
    assert.deepEqual(status, { code: 1, signal: null }, server.stderr());
    assert.match(
      server.stderr(),
      new RegExp(`"deadlineMs":${STOP_DEADLINE_MS},"msg":"stop did not finish in time: exiting"`),
    );
    await assert.rejects(send.response);
    assert.deepEqual(storedMessages(dir, 'held too long'), []);
  });
});
