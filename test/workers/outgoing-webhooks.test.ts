// Outgoing-webhook bots end to end: messages sent through HTTP, a real receiver on
// loopback (allowed by configuration), the worker driven step by step on a test clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PARLEY_VERSION } from '../../src/version.ts';
import { createOutgoingWebhookWorker } from '../../src/workers/outgoing-webhooks.ts';
import { buildTestApp, type TestApp } from '../support/app.ts';
import type { FixtureUser } from '../support/fixture.ts';
import {
  channelRecipientId,
  expectedMessage,
  gravatar,
  messageRecipientId,
  sendDirect,
  sendToChannel,
  T0,
  useClock,
} from '../support/messages.ts';

type Respond = (req: IncomingMessage, res: ServerResponse, n: number) => void;

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
}

interface Receiver {
  server: Server;
  url: string;
  received: Received[];
  respond: Respond;
}

async function startReceiver(respond: Respond): Promise<Receiver> {
  const r: Receiver = { server: null as never, url: '', received: [], respond };
  r.server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      r.received.push({ headers: req.headers, body });
      r.respond(req, res, r.received.length);
    });
  });
  await new Promise<void>((ok) => r.server.listen(0, '127.0.0.1', ok));
  r.url = `http://127.0.0.1:${(r.server.address() as AddressInfo).port}/hook`;
  return r;
}

const stopReceiver = (r: Receiver): Promise<void> =>
  new Promise((ok) => {
    r.server.closeAllConnections();
    r.server.close(() => ok());
  });

const json =
  (body: unknown, status = 200): Respond =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };

interface Bot extends FixtureUser {
  token: string;
}

interface Setup {
  t: TestApp;
  r: Receiver;
  bot: Bot;
  setTime: (s: number) => void;
  run: () => Promise<number>;
  close: () => Promise<void>;
}

async function createOutgoingBot(
  t: TestApp,
  url: string,
  interfaceType = 1,
  shortName = 'echo',
  fullName = 'Echo Bot',
): Promise<Bot> {
  const res = await t.as(t.fx.member).post('/bots', {
    full_name: fullName,
    short_name: shortName,
    bot_type: 3,
    payload_url: url,
    interface_type: interfaceType,
  });
  assert.equal(res.status, 200, res.text);
  const list = await t.as(t.fx.member).get('/bots');
  const bot = (list.body.bots as Array<Record<string, unknown>>).find(
    (b) => b.user_id === res.body.user_id,
  )!;
  const services = bot.services as Array<{ base_url: string; token: string }>;
  assert.equal(services[0].base_url, url);
  return {
    id: bot.user_id as number,
    email: bot.email as string,
    delivery_email: bot.email as string,
    full_name: fullName,
    api_key: res.body.api_key as string,
    token: services[0].token,
  } as Bot;
}

async function setup(
  respond: Respond,
  opts: { allow?: string[]; interfaceType?: number; timeoutMs?: number } = {},
): Promise<Setup> {
  const r = await startReceiver(respond);
  const t = await buildTestApp({
    config: {
      outgoingWebhookAllow: opts.allow ?? ['127.0.0.1/32'],
      outgoingWebhookTimeoutMs: opts.timeoutMs ?? 300,
    },
  });
  const setTime = useClock(t);
  const bot = await createOutgoingBot(t, r.url, opts.interfaceType);
  const worker = createOutgoingWebhookWorker(t.ctx, { concurrency: 2 });
  return {
    t,
    r,
    bot,
    setTime,
    run: () => worker.runOnce(),
    async close() {
      await worker.stop();
      await t.close();
      await stopReceiver(r);
    },
  };
}

async function pending(t: TestApp): Promise<Array<Record<string, unknown>>> {
  return t.ctx.db
    .selectFrom('outgoing_webhook_deliveries')
    .select(['bot_id', 'message_id', 'trigger', 'attempts', 'next_attempt_at'])
    .orderBy('id')
    .execute();
}

/** The messages stored after this one: who sent what where. */
async function messagesAfter(t: TestApp, id: number): Promise<Array<Record<string, unknown>>> {
  return t.ctx.db
    .selectFrom('messages')
    .select(['sender_id', 'recipient_id', 'topic', 'content'])
    .where('id', '>', id)
    .orderBy('id')
    .execute();
}

async function directRecipientOf(t: TestApp, a: number, b: number): Promise<number> {
  const rows = await t.ctx.db
    .selectFrom('direct_participants')
    .select(['recipient_id', 'user_id'])
    .execute();
  const byRecipient = new Map<number, number[]>();
  for (const row of rows) {
    byRecipient.set(row.recipient_id, [...(byRecipient.get(row.recipient_id) ?? []), row.user_id]);
  }
  const found = [...byRecipient].find(
    ([, users]) => users.length === 2 && users.includes(a) && users.includes(b),
  );
  assert.ok(found, 'no direct conversation between them');
  return found[0];
}

const ownerNotice = (messageId: number, cause: string): string =>
  `[A message](http://parley.test/#narrow/id/${messageId}) to your bot @_**Echo Bot** ` +
  `triggered an outgoing webhook, and the request failed: ${cause}`;

test('a mention posts the exact payload and headers; the reply lands in the same topic', async () => {
  const s = await setup(json({ content: 'pong' }));
  const { t, bot } = s;
  try {
    const content = 'hello @**Echo Bot**';
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 'greetings', content);
    // The send did not wait for the bot: the delivery is stored, nothing was sent yet.
    assert.deepEqual(await pending(t), [
      { bot_id: bot.id, message_id: id, trigger: 'mention', attempts: 0, next_attempt_at: T0 },
    ]);
    assert.equal(s.r.received.length, 0);

    assert.equal(await s.run(), 1);
    assert.equal(s.r.received.length, 1);
    const got = s.r.received[0];
    assert.equal(got.headers['user-agent'], `Parley/${PARLEY_VERSION}`);
    assert.equal(got.headers['content-type'], 'application/json');
    const html = `<p>hello <span class="user-mention" data-user-id="${bot.id}">@Echo Bot</span></p>`;
    const { flags: _flags, ...listed } = expectedMessage({
      id,
      sender: t.fx.member,
      html,
      channel: {
        ...t.fx.channels.general,
        recipientId: await channelRecipientId(t, t.fx.channels.general.id),
      },
      topic: 'greetings',
    });
    assert.deepEqual(JSON.parse(got.body), {
      bot_email: bot.email,
      bot_full_name: 'Echo Bot',
      data: content,
      trigger: 'mention',
      token: bot.token,
      message: {
        ...listed,
        content,
        content_type: 'text/x-markdown',
        rendered_content: html,
        avatar_url: gravatar(t.fx.member.delivery_email),
      },
    });
    assert.deepEqual(await messagesAfter(t, id), [
      {
        sender_id: bot.id,
        recipient_id: await channelRecipientId(t, t.fx.channels.general.id),
        topic: 'greetings',
        content: 'pong',
      },
    ]);
    // Delivered once; the bot's own reply triggers nothing.
    assert.deepEqual(await pending(t), []);
    assert.equal(await s.run(), 0);
    assert.equal(s.r.received.length, 1);
  } finally {
    await s.close();
  }
});

test('a direct message posts trigger direct_message; the reply goes to the same conversation', async () => {
  const s = await setup(json({ content: 'hi back' }));
  const { t, bot } = s;
  try {
    const id = await sendDirect(t, t.fx.member, [bot], 'hi there');
    assert.equal(await s.run(), 1);
    const got = s.r.received[0];
    assert.equal(got.headers['user-agent'], `Parley/${PARLEY_VERSION}`);
    const recipientId = await messageRecipientId(t, id);
    const { flags: _flags, ...listed } = expectedMessage({
      id,
      sender: t.fx.member,
      html: '<p>hi there</p>',
      direct: { recipientId, users: [t.fx.member, bot] },
    });
    assert.deepEqual(JSON.parse(got.body), {
      bot_email: bot.email,
      bot_full_name: 'Echo Bot',
      data: 'hi there',
      trigger: 'direct_message',
      token: bot.token,
      message: {
        ...listed,
        content: 'hi there',
        content_type: 'text/x-markdown',
        rendered_content: '<p>hi there</p>',
        avatar_url: gravatar(t.fx.member.delivery_email),
      },
    });
    assert.deepEqual(await messagesAfter(t, id), [
      { sender_id: bot.id, recipient_id: recipientId, topic: '', content: 'hi back' },
    ]);

    // A group conversation: the reply reaches the whole group.
    const group = await sendDirect(t, t.fx.member, [t.fx.member2, bot], 'all of us');
    assert.equal(await s.run(), 1);
    assert.equal(JSON.parse(s.r.received[1].body).trigger, 'direct_message');
    assert.deepEqual(await messagesAfter(t, group), [
      {
        sender_id: bot.id,
        recipient_id: await messageRecipientId(t, group),
        topic: '',
        content: 'hi back',
      },
    ]);
  } finally {
    await s.close();
  }
});

test('bots, code, silent mentions and other users do not trigger', async () => {
  const s = await setup(json({ content: 'never' }));
  const { t, bot } = s;
  try {
    const general = t.fx.channels.general;
    // The fixture's generic bot (owned by member) may post in general.
    await sendToChannel(t, t.fx.bot, general, 't', 'hey @**Echo Bot**');
    await sendDirect(t, t.fx.bot, [bot], 'bot to bot');
    await sendToChannel(t, t.fx.member, general, 't', 'inline `@**Echo Bot**` code');
    await sendToChannel(t, t.fx.member, general, 't', '```\n@**Echo Bot**\n```');
    await sendToChannel(t, t.fx.member, general, 't', 'silent @_**Echo Bot**');
    await sendToChannel(t, t.fx.member, general, 't', 'no mention at all');
    await sendToChannel(t, t.fx.member, general, 't', 'a generic bot @**Helper Bot**');
    await sendDirect(t, t.fx.member, [t.fx.member2], 'people only');
    assert.deepEqual(await pending(t), []);
    assert.equal(await s.run(), 0);
    assert.equal(s.r.received.length, 0);
  } finally {
    await s.close();
  }
});

test('each response shape: a reply, no reply, or an invalid-response failure', async () => {
  let body = '';
  const s = await setup((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  });
  const { t, bot } = s;
  const topicRecipient = await channelRecipientId(t, t.fx.channels.general.id);
  try {
    const cases: Array<[string, string | null, string | null]> = [
      ['{"content":"plain reply"}', 'plain reply', null],
      ['{"response_string":"legacy reply"}', 'legacy reply', null],
      ['{"content":"**md**","widget_content":"x"}', '**md**', null],
      ['{"response_not_required":true,"content":"ignored"}', null, null],
      ['{"content":"   "}', null, null],
      ['{}', null, null],
      ['', null, null],
      ['""', null, null],
      ['not json', 'Failure! The bot sent an invalid response.', 'the response is not valid JSON.'],
      ['[1,2]', 'Failure! The bot sent an invalid response.', 'the response is not a JSON object.'],
      ['{"content":5}', 'Failure! The bot sent an invalid response.', '"content" is not a string.'],
      [
        '{"content":"nul \\u0000 byte"}',
        'Failure! The bot sent an invalid response.',
        'the reply could not be posted (Message must not contain null bytes).',
      ],
    ];
    for (const [response, inTopic, cause] of cases) {
      body = response;
      const id = await sendToChannel(
        t,
        t.fx.member,
        t.fx.channels.general,
        'shapes',
        '@**Echo Bot** go',
      );
      assert.equal(await s.run(), 1, response);
      const expected: Array<Record<string, unknown>> = [];
      if (inTopic !== null) {
        expected.push({
          sender_id: bot.id,
          recipient_id: topicRecipient,
          topic: 'shapes',
          content: inTopic,
        });
      }
      if (cause !== null) {
        expected.push({
          sender_id: bot.id,
          recipient_id: await directRecipientOf(t, bot.id, t.fx.member.id),
          topic: '',
          content: ownerNotice(id, cause),
        });
      }
      assert.deepEqual(await messagesAfter(t, id), expected, response);
      assert.deepEqual(await pending(t), [], response);
    }
  } finally {
    await s.close();
  }
});

test('a non-2xx status: a failure notice in the topic and the owner told status and body', async () => {
  const s = await setup(json('boom ``` fence', 503));
  const { t, bot } = s;
  try {
    const id = await sendToChannel(
      t,
      t.fx.member,
      t.fx.channels.general,
      'down',
      '@**Echo Bot** hi',
    );
    assert.equal(await s.run(), 1);
    assert.equal(s.r.received.length, 1, 'no retry after an answer');
    assert.deepEqual(await messagesAfter(t, id), [
      {
        sender_id: bot.id,
        recipient_id: await channelRecipientId(t, t.fx.channels.general.id),
        topic: 'down',
        content: 'Failure! Third party responded with 503',
      },
      {
        sender_id: bot.id,
        recipient_id: await directRecipientOf(t, bot.id, t.fx.member.id),
        topic: '',
        content: ownerNotice(
          id,
          "the bot's server responded with status 503 and this body:\n````\nboom ``` fence\n````",
        ),
      },
    ]);
    assert.deepEqual(await pending(t), []);
  } finally {
    await s.close();
  }
});

test('timeouts are retried with backoff; a later success replies once', async () => {
  const s = await setup((_req, res, n) => {
    if (n === 1) return; // no answer: the first attempt times out
    json({ content: 'finally' })(_req, res, n);
  });
  const { t, bot } = s;
  try {
    const id = await sendToChannel(
      t,
      t.fx.member,
      t.fx.channels.general,
      'slow',
      '@**Echo Bot** hi',
    );
    assert.equal(await s.run(), 1);
    assert.deepEqual(await pending(t), [
      { bot_id: bot.id, message_id: id, trigger: 'mention', attempts: 1, next_attempt_at: T0 + 1 },
    ]);
    assert.deepEqual(await messagesAfter(t, id), []);
    // Not due yet.
    assert.equal(await s.run(), 0);
    s.setTime(T0 + 1);
    assert.equal(await s.run(), 1);
    assert.equal(s.r.received.length, 2);
    assert.equal(s.r.received[1].body, s.r.received[0].body);
    assert.deepEqual(await messagesAfter(t, id), [
      {
        sender_id: bot.id,
        recipient_id: await channelRecipientId(t, t.fx.channels.general.id),
        topic: 'slow',
        content: 'finally',
      },
    ]);
    assert.deepEqual(await pending(t), []);
  } finally {
    await s.close();
  }
});

/** Three failing attempts rescheduled at 1, 2 and 4 s, then a last one that gives up. */
async function runThroughRetries(s: Setup, id: number): Promise<void> {
  let now = T0;
  for (const [attempts, wait] of [
    [1, 1],
    [2, 2],
    [3, 4],
  ]) {
    assert.equal(await s.run(), 1);
    now += wait;
    assert.deepEqual(await pending(s.t), [
      { bot_id: s.bot.id, message_id: id, trigger: 'mention', attempts, next_attempt_at: now },
    ]);
    s.setTime(now);
  }
  assert.equal(await s.run(), 1);
  assert.deepEqual(await pending(s.t), []);
}

test('connection errors: three retries at 1, 2 and 4 s, then unavailable and the owner told', async () => {
  const s = await setup(json({ content: 'unreachable' }));
  const { t, bot } = s;
  try {
    await stopReceiver(s.r);
    const id = await sendToChannel(
      t,
      t.fx.member,
      t.fx.channels.general,
      'gone',
      '@**Echo Bot** hi',
    );
    await runThroughRetries(s, id);
    assert.deepEqual(await messagesAfter(t, id), [
      {
        sender_id: bot.id,
        recipient_id: await channelRecipientId(t, t.fx.channels.general.id),
        topic: 'gone',
        content: 'Failure! Bot is unavailable',
      },
      {
        sender_id: bot.id,
        recipient_id: await directRecipientOf(t, bot.id, t.fx.member.id),
        topic: '',
        content: ownerNotice(
          id,
          'connection error: connection failed (ECONNREFUSED), after 3 retries.',
        ),
      },
    ]);
  } finally {
    await s.close();
  }
});

test('a pending delivery survives a restart and is sent by the next process', async () => {
  const s = await setup(json({ content: 'after restart' }));
  const { t, bot } = s;
  try {
    const id = await sendToChannel(
      t,
      t.fx.member,
      t.fx.channels.general,
      'restart',
      '@**Echo Bot** hi',
    );
    assert.equal((await pending(t)).length, 1);
    // A new process on the same database, with its own context, HTTP client and worker.
    const next = await buildTestApp({
      shareStoreWith: t,
      config: { outgoingWebhookAllow: ['127.0.0.1/32'], outgoingWebhookTimeoutMs: 300 },
    });
    try {
      useClock(next);
      const worker = createOutgoingWebhookWorker(next.ctx);
      assert.equal(await worker.runOnce(), 1);
      await worker.stop();
    } finally {
      await next.close();
    }
    assert.equal(s.r.received.length, 1);
    assert.equal(JSON.parse(s.r.received[0].body).message.id, id);
    assert.deepEqual(await messagesAfter(t, id), [
      {
        sender_id: bot.id,
        recipient_id: await channelRecipientId(t, t.fx.channels.general.id),
        topic: 'restart',
        content: 'after restart',
      },
    ]);
    assert.deepEqual(await pending(t), []);
  } finally {
    await s.close();
  }
});

test('the worker started and stopped as the server does delivers on its own', async () => {
  const s = await setup(json({ content: 'polled' }));
  const { t, bot } = s;
  const worker = createOutgoingWebhookWorker(t.ctx, { pollMs: 10 });
  try {
    const id = await sendToChannel(
      t,
      t.fx.member,
      t.fx.channels.general,
      'poll',
      '@**Echo Bot** hi',
    );
    worker.start();
    for (let i = 0; i < 500 && (await pending(t)).length > 0; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    await worker.stop();
    assert.deepEqual(await messagesAfter(t, id), [
      {
        sender_id: bot.id,
        recipient_id: await channelRecipientId(t, t.fx.channels.general.id),
        topic: 'poll',
        content: 'polled',
      },
    ]);
  } finally {
    await worker.stop();
    await s.close();
  }
});

test('loopback not allowed: refused before connecting, no retry, the owner told why', async () => {
  const s = await setup(json({ content: 'never' }), { allow: [] });
  const { t, bot } = s;
  try {
    const id = await sendToChannel(
      t,
      t.fx.member,
      t.fx.channels.general,
      'guard',
      '@**Echo Bot** hi',
    );
    assert.equal(await s.run(), 1);
    assert.equal(s.r.received.length, 0);
    assert.deepEqual(await pending(t), []);
    assert.deepEqual(await messagesAfter(t, id), [
      {
        sender_id: bot.id,
        recipient_id: await channelRecipientId(t, t.fx.channels.general.id),
        topic: 'guard',
        content: 'Failure! Bot is unavailable',
      },
      {
        sender_id: bot.id,
        recipient_id: await directRecipientOf(t, bot.id, t.fx.member.id),
        topic: '',
        content: ownerNotice(
          id,
          'the URL configured for the bot is on a private or disallowed network (127.0.0.1: 127.0.0.1 is a loopback address, which is not allowed).',
        ),
      },
    ]);
  } finally {
    await s.close();
  }
});

test('Slack-compatible interface: form fields, reply from text, direct messages refused', async () => {
  const s = await setup(json({ text: 'slack says hi' }), { interfaceType: 2 });
  const { t, bot } = s;
  try {
    const general = t.fx.channels.general;
    const id = await sendToChannel(t, t.fx.member, general, 'slack', '@**Echo Bot** status');
    assert.equal(await s.run(), 1);
    const got = s.r.received[0];
    assert.equal(got.headers['content-type'], 'application/x-www-form-urlencoded');
    assert.equal(got.headers['user-agent'], `Parley/${PARLEY_VERSION}`);
    const service = await t.ctx.db
      .selectFrom('bot_services')
      .select('id')
      .where('bot_id', '=', bot.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(Object.fromEntries(new URLSearchParams(got.body)), {
      token: bot.token,
      team_id: `T${t.fx.realm.id}`,
      team_domain: 'parley.test',
      channel_id: `C${general.id}`,
      channel_name: general.name,
      timestamp: String(T0),
      user_id: `U${t.fx.member.id}`,
      user_name: t.fx.member.full_name,
      text: '@**Echo Bot** status',
      trigger_word: 'mention',
      service_id: String(service.id),
    });
    assert.deepEqual(await messagesAfter(t, id), [
      {
        sender_id: bot.id,
        recipient_id: await channelRecipientId(t, general.id),
        topic: 'slack',
        content: 'slack says hi',
      },
    ]);

    const dm = await sendDirect(t, t.fx.member, [bot], 'hello');
    assert.equal(await s.run(), 1);
    assert.equal(s.r.received.length, 1, 'direct messages are not sent to Slack receivers');
    assert.deepEqual(await messagesAfter(t, dm), [
      {
        sender_id: bot.id,
        recipient_id: await messageRecipientId(t, dm),
        topic: '',
        content: 'Failure! Slack-compatible outgoing webhooks do not support direct messages.',
      },
    ]);
  } finally {
    await s.close();
  }
});

test('the owner changes the URL with PATCH /bots/{id}; the next delivery goes there', async () => {
  const s = await setup(json({ content: 'old' }));
  const other = await startReceiver(json({ content: 'new' }));
  const { t, bot } = s;
  try {
    const res = await t
      .as(t.fx.member)
      .patch(`/bots/${bot.id}`, { service_payload_url: other.url.replace('/hook', '/v2') });
    assert.equal(res.status, 200, res.text);
    const id = await sendToChannel(
      t,
      t.fx.member,
      t.fx.channels.general,
      'moved',
      '@**Echo Bot** hi',
    );
    assert.equal(await s.run(), 1);
    assert.equal(s.r.received.length, 0);
    assert.equal(other.received.length, 1);
    assert.equal((await messagesAfter(t, id))[0].content, 'new');
  } finally {
    await stopReceiver(other);
    await s.close();
  }
});

test('the worker keeps at most its concurrency of requests in flight', async () => {
  let inFlight = 0;
  let maxInFlight = 0;
  const held: Array<() => void> = [];
  const s = await setup((req, res, n) => {
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    held.push(() => {
      inFlight -= 1;
      json({ content: `reply ${n}` })(req, res, n);
    });
    // Held a moment so that every request the worker allows gets here before any answer.
    if (held.length === 1) setTimeout(() => held.splice(0).forEach((release) => release()), 150);
  });
  const { t } = s;
  try {
    await createOutgoingBot(t, s.r.url, 1, 'echo2', 'Echo Two');
    await createOutgoingBot(t, s.r.url, 1, 'echo3', 'Echo Three');
    const id = await sendToChannel(
      t,
      t.fx.member,
      t.fx.channels.general,
      'many',
      '@**Echo Bot** @**Echo Two** @**Echo Three**',
    );
    assert.equal((await pending(t)).length, 3);
    assert.equal(await s.run(), 3);
    assert.equal(s.r.received.length, 3);
    assert.equal(maxInFlight, 2);
    const replies = (await messagesAfter(t, id)).map((m) => m.content).sort();
    assert.deepEqual(replies, ['reply 1', 'reply 2', 'reply 3']);
  } finally {
    await s.close();
  }
});

test('an unexpected failure is retried like a timeout, then dropped: never forever', async () => {
  const s = await setup(json({ content: 'never reached' }));
  const { t } = s;
  try {
    // Not an HTTP failure: a bug or a broken dependency inside the attempt.
    t.ctx.http.post = async () => {
      throw new Error('unexpected');
    };
    const id = await sendToChannel(
      t,
      t.fx.member,
      t.fx.channels.general,
      'bug',
      '@**Echo Bot** hi',
    );
    await runThroughRetries(s, id);
    assert.equal(await s.run(), 0);
    assert.deepEqual(s.r.received, []);
  } finally {
    await s.close();
  }
});

/**
 * A setup whose receiver, before it answers, makes a change of its own through the API
 * (as a user would while the bot's server works); `meanwhile` gets the setup and the
 * message the request is about.
 */
async function setupWithChangeMeanwhile(
  meanwhile: (s: Setup, messageId: number) => Promise<{ status: number; text: string }>,
  reply: string,
): Promise<{ s: Setup; send: (topic: string) => Promise<number> }> {
  const made = { s: null as unknown as Setup, messageId: 0 };
  const s = await setup(
    (req, res) => {
      void meanwhile(made.s, made.messageId).then((done) => {
        assert.equal(done.status, 200, done.text);
        json({ content: reply })(req, res, 1);
      });
    },
    // The receiver waits for a request of its own: time enough on a busy machine.
    { timeoutMs: 10_000 },
  );
  made.s = s;
  const send = async (topic: string): Promise<number> => {
    const t = s.t;
    made.messageId = await sendToChannel(
      t,
      t.fx.member,
      t.fx.channels.general,
      topic,
      '@**Echo Bot**',
    );
    return made.messageId;
  };
  return { s, send };
}

test('the bot deactivated while its request is out: no reply, the delivery gone', async () => {
  const { s, send } = await setupWithChangeMeanwhile(
    (m) => m.t.as(m.t.fx.member).delete(`/bots/${m.bot.id}`),
    'too late',
  );
  try {
    const id = await send('late');
    assert.equal(await s.run(), 1);
    assert.equal(s.r.received.length, 1);
    assert.deepEqual(await messagesAfter(s.t, id), []);
    assert.deepEqual(await pending(s.t), []);
  } finally {
    await s.close();
  }
});

test('the message moved while the request is out: the reply follows it to its new topic', async () => {
  const { s, send } = await setupWithChangeMeanwhile(
    (m, messageId) =>
      m.t
        .as(m.t.fx.member)
        .patch(`/messages/${messageId}`, { topic: 'moved', propagate_mode: 'change_one' }),
    'here',
  );
  try {
    const messageId = await send('first');
    assert.equal(await s.run(), 1);
    assert.deepEqual(await messagesAfter(s.t, messageId), [
      {
        sender_id: s.bot.id,
        recipient_id: await channelRecipientId(s.t, s.t.fx.channels.general.id),
        topic: 'moved',
        content: 'here',
      },
    ]);
  } finally {
    await s.close();
  }
});
