// Form-encoded POSTs over a real socket (a send, above all) are answered by
// http/direct-listener.ts without Fastify: the same status, body and headers as Fastify's
// route gives the same request (reached here through inject), every error included; a body of
// another kind, or too large, or chunked, goes to Fastify and gets its answer.
import { connect } from 'node:net';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { basicAuth, encodeParams, type Params } from '../support/client.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { withServer, type Live, type RawResponse } from '../support/live.ts';
import type { TestAppOptions } from '../support/app.ts';

const HOST = 'parley.test';
const FORM = 'application/x-www-form-urlencoded';
// Enough failed authentications per address (max / 20) for every 401 case on both paths.
const RATE_LIMITED: TestAppOptions = { config: { rateLimit: { max: 2000, windowSeconds: 60 } } };

/** The headers both paths must agree on (Date and Connection differ by nature). */
const COMPARED_HEADERS = ['content-type', 'content-length', 'www-authenticate'];

interface Case {
  name: string;
  who: FixtureUser | null;
  /** Below /api/v1, with any query. */
  path: string;
  body: string;
  key?: string;
  contentType?: string | null;
}

function headersOf(c: Case): Record<string, string> {
  const headers: Record<string, string> = { host: HOST };
  if (c.contentType !== null) headers['content-type'] = c.contentType ?? FORM;
  if (c.who) headers.authorization = basicAuth(c.who.email, c.key ?? c.who.api_key);
  return headers;
}

/** The same POST on the socket (listener) and through inject (Fastify). */
async function both(live: Live, c: Case): Promise<{ socket: RawResponse; fastify: RawResponse }> {
  const path = `/api/v1${c.path}`;
  const before = live.fastifyRequests();
  const socket = await live.raw({ method: 'POST', path, headers: headersOf(c), body: c.body });
  assert.equal(live.fastifyRequests(), before, `${c.name}: the socket request reached Fastify`);
  const injected = await live.t.app.inject({
    method: 'POST',
    url: path,
    headers: headersOf(c),
    payload: c.body,
  });
  const fastify = { status: injected.statusCode, headers: injected.headers, text: injected.body };
  assert.equal(socket.status, fastify.status, c.name);
  assert.deepEqual(JSON.parse(socket.text), JSON.parse(fastify.text), c.name);
  for (const h of COMPARED_HEADERS) assert.equal(socket.headers[h], fastify.headers[h], c.name);
  return { socket, fastify };
}

const form = (params: Params) => encodeParams(params);

test('form POSTs on a socket get what Fastify answers, errors included, without reaching it', () =>
  withServer(async (live) => {
    const { member, deactivated } = live.t.fx;
    const send = { type: 'stream', to: 'general', topic: 'here', content: 'hi' };
    const cases: Case[] = [
      { name: 'render', who: member, path: '/messages/render', body: form({ content: '**hi**' }) },
      {
        name: 'render, unknown parameter',
        who: member,
        path: '/messages/render',
        body: form({ content: 'hi', colour: 'red' }),
      },
      { name: 'render, in the query', who: member, path: '/messages/render?content=hi', body: '' },
      {
        name: 'render, query alone, no content type',
        who: member,
        path: '/messages/render?content=hi',
        body: '',
        contentType: null,
      },
      {
        name: 'render, in the query and the body',
        who: member,
        path: '/messages/render?content=a',
        body: form({ content: 'b' }),
      },
      {
        name: 'render, twice in the body',
        who: member,
        path: '/messages/render',
        body: 'content=a&content=b',
      },
      { name: 'render, missing', who: member, path: '/messages/render', body: '' },
      {
        name: 'render, bytes that are not UTF-8',
        who: member,
        path: '/messages/render',
        body: 'content=%ED%A0%80',
      },
      {
        name: 'send, unknown channel',
        who: member,
        path: '/messages',
        body: form({ ...send, to: 'nowhere' }),
      },
      {
        name: 'send, no topic',
        who: member,
        path: '/messages',
        body: form({ type: 'stream', to: 'general', content: 'hi' }),
      },
      {
        name: 'send, bad type',
        who: member,
        path: '/messages',
        body: form({ ...send, type: 'x' }),
      },
      { name: 'send, no credentials', who: null, path: '/messages', body: form(send) },
      {
        name: 'send, wrong key',
        who: member,
        key: 'x'.repeat(32),
        path: '/messages',
        body: form(send),
      },
      { name: 'send, deactivated', who: deactivated, path: '/messages', body: form(send) },
    ];
    const answers: RawResponse[] = [];
    for (const c of cases) answers.push((await both(live, c)).socket);
    // And the answers are the right ones, not merely equal.
    const text = (i: number) => JSON.parse(answers[i].text) as Record<string, unknown>;
    assert.deepEqual(text(0), {
      result: 'success',
      msg: '',
      rendered: '<p><strong>hi</strong></p>',
    });
    assert.deepEqual(text(1), {
      result: 'success',
      msg: '',
      rendered: '<p>hi</p>',
      ignored_parameters_unsupported: ['colour'],
    });
    assert.deepEqual(text(2), text(3));
    assert.deepEqual(text(2), { result: 'success', msg: '', rendered: '<p>hi</p>' });
    const twice = { result: 'error', msg: "Parameter 'content' was given more than once" };
    assert.deepEqual(text(4), { ...twice, code: 'BAD_REQUEST' });
    assert.deepEqual(text(5), { ...twice, code: 'BAD_REQUEST' });
    assert.deepEqual([answers[6].status, text(6).code], [400, 'REQUEST_VARIABLE_MISSING']);
    // Read as node:querystring reads them: each byte a replacement character.
    assert.deepEqual(text(7), {
      result: 'success',
      msg: '',
      rendered: '<p>\uFFFD\uFFFD\uFFFD</p>',
    });
    assert.deepEqual([answers[8].status, text(8).code], [400, 'STREAM_DOES_NOT_EXIST']);
    assert.deepEqual(text(9), { result: 'error', msg: 'Missing topic', code: 'BAD_REQUEST' });
    assert.equal(answers[12].status, 401);
    assert.equal(answers[12].headers['www-authenticate'], 'Basic realm="parley"');
    assert.deepEqual(text(13), {
      result: 'error',
      msg: 'Account is deactivated',
      code: 'UNAUTHORIZED',
    });
  }, RATE_LIMITED));

test('a send on a socket is stored, answered and delivered as through Fastify', () =>
  withServer(async (live) => {
    const { member, admin } = live.t.fx;
    const before = live.fastifyRequests();
    const registered = await live.call(member, 'POST', '/register', { event_types: ['message'] });
    assert.equal(registered.status, 200, registered.text);
    const queueId = registered.body.queue_id as string;
    const params = {
      type: 'stream',
      to: 'general',
      topic: 'socket',
      content: 'on the socket',
      queue_id: queueId,
      local_id: '7.5',
    };
    const sent = await live.call(member, 'POST', '/messages', params);
    assert.equal(live.fastifyRequests(), before);
    assert.equal(sent.status, 200, sent.text);
    assert.deepEqual(Object.keys(sent.body), ['result', 'msg', 'id']);
    // The sending queue has the message, with its local id echoed.
    const polled = await live.call(member, 'GET', '/events', {
      queue_id: queueId,
      last_event_id: -1,
      dont_block: true,
    });
    const events = polled.body.events as Array<Record<string, unknown>>;
    assert.deepEqual(
      events.map((e) => [e.type, (e.message as { id: number }).id, e.local_message_id]),
      [['message', sent.body.id, '7.5']],
    );
    const read = await live.call(admin, 'GET', `/messages/${String(sent.body.id)}`);
    assert.equal(read.status, 200, read.text);
    const message = read.body.message as Record<string, unknown>;
    assert.deepEqual(
      [message.content, message.subject, message.sender_id],
      ['<p>on the socket</p>', 'socket', member.id],
    );
  }));

/** Write a request on a socket of its own in pieces, a pause between each; its answer. */
async function inPieces(live: Live, pieces: string[]): Promise<{ status: number; body: unknown }> {
  const { port } = live.t.app.server.address() as { port: number };
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  const ended = new Promise((resolve) => socket.on('end', resolve));
  for (const piece of pieces) {
    socket.write(piece);
    await new Promise((r) => setTimeout(r, 20));
  }
  socket.end();
  await ended;
  const text = Buffer.concat(chunks).toString();
  const [head, body] = text.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), body: body === '' ? null : JSON.parse(body) };
}

function head(who: FixtureUser, extra: string): string {
  return (
    `POST /api/v1/messages/render HTTP/1.1\r\nHost: ${HOST}\r\nConnection: close\r\n` +
    `Authorization: ${basicAuth(who.email, who.api_key)}\r\n${extra}\r\n`
  );
}

test('a body that comes in pieces is read whole before the route runs', () =>
  withServer(async (live) => {
    const { member } = live.t.fx;
    const body = form({ content: '**in pieces**' });
    const before = live.fastifyRequests();
    const answer = await inPieces(live, [
      head(member, `Content-Type: ${FORM}\r\nContent-Length: ${body.length}\r\n`),
      body.slice(0, 10),
      body.slice(10),
    ]);
    assert.equal(live.fastifyRequests(), before);
    assert.deepEqual(answer, {
      status: 200,
      body: { result: 'success', msg: '', rendered: '<p><strong>in pieces</strong></p>' },
    });
  }));

test('POSTs the listener does not take go to Fastify and get its answer', () =>
  withServer(async (live) => {
    const { member } = live.t.fx;
    const auth = basicAuth(member.email, member.api_key);
    const rendered = { result: 'success', msg: '', rendered: '<p>hi</p>' };
    const viaFastify = async (send: () => Promise<{ status: number; body: unknown }>) => {
      const before = live.fastifyRequests();
      const answer = await send();
      assert.equal(live.fastifyRequests(), before + 1);
      return answer;
    };
    const raw = (headers: Record<string, string>, body: string, path = '/messages/render') =>
      viaFastify(async () => {
        const res = await live.raw({
          method: 'POST',
          path: `/api/v1${path}`,
          headers: { host: HOST, authorization: auth, ...headers },
          body,
        });
        return { status: res.status, body: JSON.parse(res.text) as unknown };
      });
    // A content type with parameters, and JSON: Fastify's parsers read them.
    assert.deepEqual(await raw({ 'content-type': `${FORM}; charset=utf-8` }, 'content=hi'), {
      status: 200,
      body: rendered,
    });
    assert.deepEqual(
      await raw({ 'content-type': 'application/json' }, JSON.stringify({ content: 'hi' })),
      { status: 200, body: rendered },
    );
    // A body without a content type: refused as before.
    assert.deepEqual(await raw({}, 'content=hi'), {
      status: 415,
      body: { result: 'error', msg: 'Unsupported Content-Type', code: 'UNSUPPORTED_MEDIA_TYPE' },
    });
    // Over the body limit: Fastify refuses it without reading it.
    const large = await raw({ 'content-type': FORM }, `content=${'a'.repeat(1024 * 1024)}`);
    assert.equal(large.status, 413);
    assert.equal((large.body as { result: string }).result, 'error');
    // A trailing slash: the router ignores it.
    assert.deepEqual(await raw({ 'content-type': FORM }, 'content=hi', '/messages/render/'), {
      status: 200,
      body: rendered,
    });
    // A chunked body.
    const chunked = await viaFastify(() =>
      inPieces(live, [
        head(member, `Content-Type: ${FORM}\r\nTransfer-Encoding: chunked\r\n`),
        'a\r\ncontent=hi\r\n0\r\n\r\n',
      ]),
    );
    assert.deepEqual(chunked, { status: 200, body: rendered });
  }));
