// Limits a hostile or careless client runs into, each with its exact error. Limits with a
// test of their own elsewhere (the form body limit and parameter nesting in
// test/http/conventions.test.ts, names and descriptions in the tests of their areas,
// content and topics cut on send in test/http/messages-send.test.ts) are not repeated here.
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { err, OK } from '../support/callers.ts';
import type { ApiResponse } from '../support/client.ts';
import { withServer } from '../support/live.ts';
import { sendToChannel } from '../support/messages.ts';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(async () => {
  await t.close();
});

const MiB = 1024 * 1024;
const TOO_LARGE = err('Request body too large', 'REQUEST_TOO_LARGE');

/** A JSON body as the member. */
async function postJson(url: string, payload: string): Promise<ApiResponse> {
  const res = await t.as(t.fx.member).inject({
    method: 'POST',
    url: `/api/v1${url}`,
    headers: { 'content-type': 'application/json' },
    payload,
  });
  return {
    status: res.statusCode,
    headers: res.headers,
    body: JSON.parse(res.body),
    text: res.body,
  };
}

const nestedList = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const nestedObject = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

describe('request body size', () => {
  test('a JSON body over 1 MiB is a 413', async () => {
    const res = await postJson('/messages/render', JSON.stringify({ content: 'x'.repeat(MiB) }));
    assert.deepEqual([res.status, res.body], [413, TOO_LARGE]);
  });

  test('a multipart field over 1 MiB is a 413, not a value cut short', async () => {
    const res = await t.as(t.fx.member).multipart('POST', '/messages/render', {
      content: 'x'.repeat(MiB + 1),
    });
    assert.deepEqual([res.status, res.body], [413, TOO_LARGE]);
  });

  test('multipart fields over 1 MiB together are a 413; a file part does not count', async () => {
    const half = 'x'.repeat(MiB / 2 + 1);
    const res = await t.as(t.fx.member).multipart('POST', '/messages/render', {
      content: half,
      other: half,
    });
    assert.deepEqual([res.status, res.body], [413, TOO_LARGE]);
    const withFile = await t
      .as(t.fx.member)
      .multipart('POST', '/messages/render', { content: 'hi' }, [
        {
          field: 'f',
          filename: 'a.bin',
          contentType: 'application/octet-stream',
          data: Buffer.alloc(MiB / 2),
        },
      ]);
    assert.deepEqual(withFile.body, { ...OK, rendered: '<p>hi</p>' });
  });
});

describe('JSON nesting in a JSON body', () => {
  test('a value nested deeper than 32 levels is refused by name, however deep', async () => {
    for (const value of [
      nestedList(33),
      nestedObject(33),
      nestedList(100000),
      nestedObject(100000),
    ]) {
      const res = await postJson(
        '/messages/flags',
        `{"messages":${value},"op":"add","flag":"read"}`,
      );
      assert.deepEqual(
        [res.status, res.body],
        [400, err('messages is nested too deeply')],
        value.slice(0, 10),
      );
    }
  });

  test('32 levels pass the nesting check and meet the type check', async () => {
    const res = await postJson(
      '/messages/flags',
      `{"messages":${nestedList(32)},"op":"add","flag":"read"}`,
    );
    assert.deepEqual([res.status, res.body], [400, err('messages[0] is not an integer')]);
  });

  test('a list in a JSON body is a value, not a repeated parameter', async () => {
    const id = await sendToChannel(t, t.fx.owner, t.fx.channels.general, 'limits', 'hi');
    const res = await postJson(
      '/messages/flags',
      JSON.stringify({ messages: [id], op: 'add', flag: 'starred' }),
    );
    assert.deepEqual(res.body, { ...OK, messages: [id] });
  });
});

describe('list lengths', () => {
  test('message flags take at most 5000 message ids', async () => {
    const messages = Array.from({ length: 5001 }, (_, i) => i + 1);
    const res = await t
      .as(t.fx.member)
      .post('/messages/flags', { messages, op: 'add', flag: 'read' });
    assert.deepEqual(
      [res.status, res.body],
      [400, err('messages has too many items (limit: 5000)')],
    );
  });

  test('a narrow has at most 100 terms', async () => {
    const narrow = Array.from({ length: 101 }, () => ({ operator: 'is', operand: 'starred' }));
    const res = await t.as(t.fx.member).get('/messages', {
      anchor: 'newest',
      num_before: 1,
      num_after: 0,
      narrow,
    });
    assert.deepEqual([res.status, res.body], [400, err('narrow has too many items (limit: 100)')]);
  });
});

describe('text lengths', () => {
  test('an edit cuts content beyond 10000 characters and a topic beyond 60, as a send does', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 'edit me', 'short');
    const content = await t
      .as(t.fx.member)
      .patch(`/messages/${id}`, { content: 'é'.repeat(10050) });
    assert.equal(content.status, 200, content.text);
    const topic = await t.as(t.fx.member).patch(`/messages/${id}`, { topic: 't'.repeat(70) });
    assert.equal(topic.status, 200, topic.text);
    const row = await t.ctx.db
      .selectFrom('messages')
      .select(['content', 'topic'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const marker = '\n[message truncated]';
    assert.deepEqual(row, {
      content: 'é'.repeat(10000 - marker.length) + marker,
      topic: 't'.repeat(57) + '...',
    });
  });

  test('draft content is at most 100000 characters', async () => {
    const draft = (content: string) => ({
      type: 'stream',
      to: [t.fx.channels.general.id],
      topic: 'draft',
      content,
      timestamp: 1700000000,
    });
    const res = await t.as(t.fx.member).post('/drafts', { drafts: [draft('x'.repeat(100001))] });
    assert.deepEqual(
      [res.status, res.body],
      [400, err('drafts[0]["content"] is too long (limit: 100000 characters)')],
    );
    const fits = await t.as(t.fx.member).post('/drafts', { drafts: [draft('x'.repeat(100000))] });
    assert.equal(fits.status, 200, fits.text);
  });
});

// What Node's HTTP parser refuses never reaches a route: a live server, raw bytes.
describe("requests the HTTP parser refuses: answered in the API's shape, the connection closed", () => {
  /** Everything the server sends on one connection for these bytes, until it closes. */
  function exchange(port: number, bytes: string): Promise<{ head: string; body: unknown }> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('error', reject);
      socket.on('close', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const end = text.indexOf('\r\n\r\n');
        resolve({ head: text.slice(0, end), body: JSON.parse(text.slice(end + 4)) });
      });
    });
  }
  const statusAndType = (head: string) => [
    head.split('\r\n')[0],
    /^content-type: (.*)$/im.exec(head)?.[1],
    /^connection: (.*)$/im.exec(head)?.[1],
  ];

  test('headers over 16 KiB (a long query string): 431, and the server goes on', () =>
    withServer(async (live) => {
      const { port } = live.t.app.server.address() as AddressInfo;
      const got = await exchange(
        port,
        `GET /api/v1/server_settings?x=${'a'.repeat(17 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`,
      );
      assert.deepEqual(statusAndType(got.head), [
        'HTTP/1.1 431 Request Header Fields Too Large',
        'application/json; charset=utf-8',
        'close',
      ]);
      assert.deepEqual(got.body, err('Request headers too large', 'REQUEST_TOO_LARGE'));
      const after = await live.raw({ method: 'GET', path: '/api/v1/server_settings' });
      assert.equal(after.status, 200);
    }));

  test('a request line that is not HTTP: 400', () =>
    withServer(async (live) => {
      const { port } = live.t.app.server.address() as AddressInfo;
      const got = await exchange(port, 'HELLO THERE\r\n\r\n');
      assert.deepEqual(statusAndType(got.head), [
        'HTTP/1.1 400 Bad Request',
        'application/json; charset=utf-8',
        'close',
      ]);
      assert.deepEqual(got.body, err('Malformed HTTP request'));
    }));
});
