// SMTP delivery against a real SMTP server on loopback, written here: the envelope, headers
// and body it receives, AUTH, the refusal to send without STARTTLS when it is required, and
// failures that are logged (never with the password or the body) instead of failing the
// invitation that caused them. STARTTLS itself is not exercised: it needs a certificate,
// and node cannot make one without a dependency.
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import pino from 'pino';
import type { SmtpConfig } from '../../src/config.ts';
import { runCli } from '../../src/cli/program.ts';
import { smtpMailer, type SmtpMailer, type SmtpTimeouts } from '../../src/infra/mailer.ts';
import { closeContext, createContext } from '../../src/server.ts';
import { buildTestApp, testConfig, testPasswords, type TestApp } from '../support/app.ts';
import { OK } from '../support/callers.ts';
import { captureIo, tempDir, waitFor } from '../cli/io.ts';

interface Received {
  from: string;
  to: string[];
  /** Headers unfolded, by lower-case name. */
  headers: Record<string, string>;
  /** The body as the server got it, dot-stuffing undone. */
  body: string;
}

interface ServerOptions {
  /** Advertise AUTH PLAIN LOGIN and accept exactly these credentials. */
  auth?: { user: string; pass: string };
  /** Answer RCPT TO for these addresses with 550. */
  rejectRecipients?: string[];
  /** Accept connections and never send the greeting. */
  silent?: boolean;
  /** Greet only after this long, so a message is still on its way when a test acts. */
  greetingDelayMs?: number;
}

interface SmtpServer {
  port: number;
  received: Received[];
  /** Every command line from every client, AUTH secrets included, in order. */
  commands: string[];
  /** Credentials the client presented, decoded. */
  logins: Array<{ user: string; pass: string }>;
  close(): Promise<void>;
}

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (s: string): string => Buffer.from(s, 'base64').toString('utf8');

/** Enough of RFC 5321 for nodemailer: EHLO, AUTH PLAIN/LOGIN, MAIL, RCPT, DATA, RSET, QUIT. */
async function startSmtpServer(options: ServerOptions = {}): Promise<SmtpServer> {
  const received: Received[] = [];
  const commands: string[] = [];
  const logins: Array<{ user: string; pass: string }> = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    if (options.silent) return;
    const reply = (...lines: string[]): void => {
      socket.write(
        lines
          .map((l, i) => `${l.slice(0, 3)}${i < lines.length - 1 ? '-' : ' '}${l.slice(4)}\r\n`)
          .join(''),
      );
    };
    let buffer = '';
    let data: string[] | null = null;
    let loginStep: 'user' | 'pass' | null = null;
    let loginUser = '';
    let envelope: { from: string; to: string[] } = { from: '', to: [] };
    const login = (user: string, pass: string): void => {
      logins.push({ user, pass });
      const ok = options.auth && options.auth.user === user && options.auth.pass === pass;
      reply(ok ? '235 2.7.0 Authenticated' : '535 5.7.8 Authentication failed');
    };
    const handle = (line: string): void => {
      if (data) {
        if (line !== '.') {
          data.push(line.startsWith('.') ? line.slice(1) : line);
          return;
        }
        received.push({ ...envelope, ...parseMessage(data) });
        data = null;
        envelope = { from: '', to: [] };
        reply('250 2.0.0 Queued');
        return;
      }
      commands.push(line);
      if (loginStep === 'user') {
        loginUser = unb64(line);
        loginStep = 'pass';
        reply(`334 ${b64('Password:')}`);
        return;
      }
      if (loginStep === 'pass') {
        loginStep = null;
        login(loginUser, unb64(line));
        return;
      }
      const verb = line.split(' ')[0].toUpperCase();
      if (verb === 'EHLO') {
        reply(
          '250 smtp.test',
          ...(options.auth ? ['250 AUTH PLAIN LOGIN'] : []),
          '250 8BITMIME',
          '250 SMTPUTF8',
        );
      } else if (verb === 'AUTH' && /^AUTH PLAIN \S+$/i.test(line)) {
        const [, user, pass] = unb64(line.split(' ')[2]).split('\0');
        login(user, pass);
      } else if (verb === 'AUTH' && /^AUTH LOGIN$/i.test(line)) {
        loginStep = 'user';
        reply(`334 ${b64('Username:')}`);
      } else if (verb === 'MAIL') {
        envelope.from = /^MAIL FROM:<([^>]*)>/i.exec(line)![1];
        reply('250 2.1.0 Ok');
      } else if (verb === 'RCPT') {
        const to = /^RCPT TO:<([^>]*)>/i.exec(line)![1];
        if (options.rejectRecipients?.includes(to)) {
          reply('550 5.1.1 No such user here');
        } else {
          envelope.to.push(to);
          reply('250 2.1.5 Ok');
        }
      } else if (verb === 'DATA') {
        data = [];
        reply('354 End data with <CR><LF>.<CR><LF>');
      } else if (verb === 'RSET') {
        envelope = { from: '', to: [] };
        reply('250 2.0.0 Ok');
      } else if (verb === 'QUIT') {
        reply('221 2.0.0 Bye');
        socket.end();
      } else {
        reply('502 5.5.2 Command not recognized');
      }
    };
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      let end: number;
      while ((end = buffer.indexOf('\r\n')) >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        handle(line);
      }
    });
    const greet = setTimeout(
      () => reply('220 smtp.test ESMTP ready'),
      options.greetingDelayMs ?? 0,
    );
    socket.on('close', () => clearTimeout(greet));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    received,
    commands,
    logins,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

function parseMessage(lines: string[]): Pick<Received, 'headers' | 'body'> {
  const blank = lines.indexOf('');
  const headers: Record<string, string> = {};
  let last = '';
  for (const line of lines.slice(0, blank)) {
    if (/^\s/.test(line)) {
      headers[last] += ` ${line.trim()}`;
    } else {
      last = line.slice(0, line.indexOf(':')).toLowerCase();
      headers[last] = line.slice(line.indexOf(':') + 1).trim();
    }
  }
  // Every line of DATA ends with CRLF, the last one too (the terminator is ".\r\n").
  return {
    headers,
    body: lines
      .slice(blank + 1)
      .map((l) => `${l}\r\n`)
      .join(''),
  };
}

/** RFC 2047 encoded words (UTF-8, Q or B) in a header value. */
function decodeHeader(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?UTF-8\?([QB])\?([^?]*)\?=/gi, (_m, kind: string, text: string) =>
      kind.toUpperCase() === 'B'
        ? unb64(text)
        : Buffer.from(
            text
              .replace(/_/g, ' ')
              .replace(/=([0-9A-F]{2})/gi, (_h, hex: string) =>
                String.fromCharCode(parseInt(hex, 16)),
              ),
            'latin1',
          ).toString('utf8'),
    );
}

/** The body text, whatever transfer encoding nodemailer picked. */
function decodeBody(message: Received): string {
  const encoding = (message.headers['content-transfer-encoding'] ?? '7bit').toLowerCase();
  if (encoding === 'base64') return unb64(message.body.replace(/\r\n/g, ''));
  if (encoding !== 'quoted-printable') return message.body.replace(/\r\n/g, '\n');
  const bytes = message.body
    .replace(/=\r\n/g, '')
    .replace(/\r\n/g, '\n')
    .replace(/=([0-9A-F]{2})/gi, (_h, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

interface LogLine {
  level: number;
  msg: string;
  mail?: Record<string, unknown>;
}

function capturingLog(): { log: pino.Logger; lines: LogLine[]; raw: string[] } {
  const lines: LogLine[] = [];
  const raw: string[] = [];
  const log = pino(
    { level: 'debug' },
    {
      write(line: string) {
        raw.push(line);
        lines.push(JSON.parse(line) as LogLine);
      },
    },
  );
  return { log, lines, raw };
}

const errors = (lines: LogLine[]): LogLine[] => lines.filter((l) => l.level >= 50);

const smtpConfig = (port: number, extra: Partial<SmtpConfig> = {}): SmtpConfig => ({
  host: '127.0.0.1',
  port,
  security: 'none',
  auth: null,
  from: { name: null, address: 'noreply@parley.test' },
  ...extra,
});

const MESSAGE = {
  to: 'ada@example.com',
  subject: 'Grace invited you to join Parley Test',
  text: 'Grace invited you to join Parley Test.\n\nCreate your account: http://parley.test/join/abc/\n',
};

let servers: SmtpServer[] = [];
let mailers: SmtpMailer[] = [];
afterEach(async () => {
  await Promise.all(mailers.map((m) => m.close()));
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
  mailers = [];
});

async function setUp(
  serverOptions: ServerOptions = {},
  config: Partial<SmtpConfig> = {},
  timeouts: Partial<SmtpTimeouts> = {},
): Promise<{ server: SmtpServer; mailer: SmtpMailer; lines: LogLine[]; raw: string[] }> {
  const server = await startSmtpServer(serverOptions);
  servers.push(server);
  const { log, lines, raw } = capturingLog();
  const mailer = smtpMailer(smtpConfig(server.port, config), log, timeouts);
  mailers.push(mailer);
  return { server, mailer, lines, raw };
}

describe('smtpMailer', () => {
  test('security none, no AUTH: the envelope, headers and body arrive as sent', async () => {
    const { server, mailer, lines } = await setUp();
    await mailer.send(MESSAGE);
    await mailer.idle();
    assert.equal(server.received.length, 1);
    const [got] = server.received;
    assert.deepEqual(
      { from: got.from, to: got.to },
      { from: 'noreply@parley.test', to: ['ada@example.com'] },
    );
    assert.equal(got.headers.from, 'noreply@parley.test');
    assert.equal(got.headers.to, 'ada@example.com');
    assert.equal(got.headers.subject, MESSAGE.subject);
    assert.equal(decodeBody(got), MESSAGE.text);
    assert.deepEqual(
      server.commands.filter((c) => /^(AUTH|STARTTLS)/i.test(c)),
      [],
    );
    assert.deepEqual(errors(lines), []);
    assert.deepEqual(
      lines.map((l) => [l.msg, l.mail?.to]),
      [['sent email', 'ada@example.com']],
    );
  });

  test('AUTH: the configured credentials are presented, and the display name is in From', async () => {
    const auth = { user: 'parley@example.com', pass: 'correct horse' };
    const { server, mailer, lines } = await setUp(
      { auth },
      {
        auth: { user: auth.user, password: auth.pass },
        from: { name: 'Parley Invitations', address: 'invites@example.com' },
      },
    );
    await mailer.send(MESSAGE);
    await mailer.idle();
    assert.deepEqual(server.logins, [auth]);
    assert.equal(server.received.length, 1);
    assert.equal(server.received[0].from, 'invites@example.com');
    assert.equal(server.received[0].headers.from, 'Parley Invitations <invites@example.com>');
    assert.deepEqual(errors(lines), []);
  });

  test('non-ASCII subject and body, a long line and a leading dot survive the trip', async () => {
    const { server, mailer } = await setUp();
    const text = `Zoë und Jürgen laden dich ein ✉\n.hidden line\n${'word '.repeat(60)}\n.\n`;
    await mailer.send({ to: 'ada@example.com', subject: 'Einladung von Zoë ✉', text });
    await mailer.idle();
    const [got] = server.received;
    assert.match(got.headers.subject, /^=\?UTF-8\?[QB]\?/i);
    assert.equal(decodeHeader(got.headers.subject), 'Einladung von Zoë ✉');
    assert.equal(decodeBody(got), text);
    assert.ok(
      got.body.split('\r\n').every((l) => l.length <= 78),
      'every line of the body within 78 characters',
    );
  });

  test('messages queued together go out one after another, in order', async () => {
    const { server, mailer } = await setUp();
    for (const to of ['a@example.com', 'b@example.com', 'c@example.com']) {
      await mailer.send({ ...MESSAGE, to });
    }
    await mailer.idle();
    assert.deepEqual(
      server.received.map((m) => m.to),
      [['a@example.com'], ['b@example.com'], ['c@example.com']],
    );
  });

  test('starttls refused by the server: no AUTH, nothing sent, an error is logged', async () => {
    const { server, mailer, lines, raw } = await setUp(
      { auth: { user: 'u', pass: 'secret-pass' } },
      { security: 'starttls', auth: { user: 'u', password: 'secret-pass' } },
    );
    await mailer.send(MESSAGE);
    await mailer.idle();
    assert.deepEqual(server.received, []);
    assert.deepEqual(server.logins, []);
    assert.deepEqual(
      server.commands.filter((c) => !/^(EHLO|HELO|QUIT)/i.test(c)),
      ['STARTTLS'],
    );
    assert.deepEqual(
      errors(lines).map((l) => [l.msg, l.mail?.to, l.mail?.code]),
      [['could not send email', 'ada@example.com', 'ETLS']],
    );
    assert.doesNotMatch(raw.join(''), /secret-pass/);
  });

  test('a rejected recipient is logged with the reply, without the body or the password', async () => {
    const { server, mailer, lines, raw } = await setUp(
      { auth: { user: 'u', pass: 'secret-pass' }, rejectRecipients: ['ada@example.com'] },
      { auth: { user: 'u', password: 'secret-pass' } },
    );
    await mailer.send(MESSAGE);
    await mailer.send({ ...MESSAGE, to: 'bob@example.com' });
    await mailer.idle();
    assert.deepEqual(
      server.received.map((m) => m.to),
      [['bob@example.com']],
    );
    const [failure] = errors(lines);
    assert.equal(errors(lines).length, 1);
    assert.equal(failure.msg, 'could not send email');
    assert.equal(failure.mail?.to, 'ada@example.com');
    assert.equal(failure.mail?.code, 'EENVELOPE');
    assert.equal(failure.mail?.responseCode, 550);
    assert.match(String(failure.mail?.error), /550 5\.1\.1 No such user here/);
    const logged = raw.join('');
    assert.doesNotMatch(logged, /secret-pass/);
    assert.doesNotMatch(logged, new RegExp(b64('\0u\0secret-pass')));
    assert.doesNotMatch(logged, /Create your account|join\/abc/);
  });

  test('wrong credentials: logged as an AUTH failure without the password', async () => {
    const { server, mailer, lines, raw } = await setUp(
      { auth: { user: 'u', pass: 'right' } },
      { auth: { user: 'u', password: 'wrong-pass' } },
    );
    await mailer.send(MESSAGE);
    await mailer.idle();
    assert.deepEqual(server.received, []);
    assert.deepEqual(
      errors(lines).map((l) => [l.mail?.code, l.mail?.responseCode]),
      [['EAUTH', 535]],
    );
    assert.doesNotMatch(raw.join(''), /wrong-pass/);
    assert.doesNotMatch(raw.join(''), new RegExp(b64('\0u\0wrong-pass')));
  });

  test('a server that never greets times out; send itself resolved at once', async () => {
    const { mailer, lines } = await setUp({ silent: true }, {}, { greetingMs: 200 });
    await mailer.send(MESSAGE);
    assert.deepEqual(errors(lines), []);
    await mailer.idle();
    assert.deepEqual(
      errors(lines).map((l) => [l.msg, l.mail?.to, l.mail?.code]),
      [['could not send email', 'ada@example.com', 'ETIMEDOUT']],
    );
  });

  test('close waits for queued messages, then refuses new ones with a logged error', async () => {
    const { server, mailer, lines } = await setUp();
    await mailer.send(MESSAGE);
    await mailer.close();
    assert.equal(server.received.length, 1);
    await mailer.send({ ...MESSAGE, to: 'late@example.com' });
    assert.equal(server.received.length, 1);
    assert.deepEqual(
      errors(lines).map((l) => [l.mail?.to, l.mail?.error]),
      [['late@example.com', 'the server is stopping']],
    );
  });

  test('close gives up on a stalled server after its grace time: cut and dropped, both logged', async () => {
    const { server, mailer, lines } = await setUp(
      { silent: true },
      {},
      { greetingMs: 60_000, closeMs: 100 },
    );
    await mailer.send(MESSAGE);
    await mailer.send({ ...MESSAGE, to: 'second@example.com' });
    await mailer.close();
    await mailer.idle();
    assert.deepEqual(
      errors(lines).map((l) => [l.mail?.to, l.mail?.code]),
      [
        ['ada@example.com', 'EABORT'],
        ['second@example.com', undefined],
      ],
    );
    assert.equal(errors(lines)[1].mail?.error, 'the server stopped before it was sent');
    assert.deepEqual(server.commands, []);
  });
});

describe('SMTP through the server', () => {
  let t: TestApp | null = null;
  afterEach(async () => {
    await t?.close();
    t = null;
  });

  test('POST /invites: the invitation mail arrives with its link', async () => {
    const server = await startSmtpServer();
    servers.push(server);
    const { log, lines } = capturingLog();
    const mailer = smtpMailer(smtpConfig(server.port), log);
    t = await buildTestApp({ mailer });
    const res = await t.as(t.fx.member).post('/invites', {
      invitee_emails: 'new@example.com',
      stream_ids: [],
    });
    assert.deepEqual(res.body, OK);
    await mailer.idle();
    assert.equal(server.received.length, 1);
    const [got] = server.received;
    assert.deepEqual(
      { from: got.from, to: got.to },
      { from: 'noreply@parley.test', to: ['new@example.com'] },
    );
    assert.equal(
      decodeHeader(got.headers.subject),
      `${t.fx.member.full_name} invited you to join Parley Test`,
    );
    assert.match(
      decodeBody(got),
      /^Create your account: http:\/\/parley\.test\/join\/[A-Za-z0-9]{24}\/$/m,
    );
    assert.deepEqual(errors(lines), []);
  });

  test('POST /invites: a refused recipient is logged and the invitation still stands', async () => {
    const server = await startSmtpServer({ rejectRecipients: ['new@example.com'] });
    servers.push(server);
    const { log, lines } = capturingLog();
    const mailer = smtpMailer(smtpConfig(server.port), log);
    t = await buildTestApp({ mailer });
    const res = await t.as(t.fx.member).post('/invites', {
      invitee_emails: 'new@example.com',
      stream_ids: [],
    });
    assert.deepEqual(res.body, OK);
    await mailer.idle();
    assert.deepEqual(server.received, []);
    assert.deepEqual(
      errors(lines).map((l) => [l.msg, l.mail?.to, l.mail?.responseCode]),
      [['could not send email', 'new@example.com', 550]],
    );
    const listed = await t.as(t.fx.member).get('/invites');
    assert.deepEqual(
      (listed.body as { invites: Array<{ email: string }> }).invites.map((i) => i.email),
      ['new@example.com'],
    );
  });

  test('createContext picks SMTP when configured; closeContext lets the queue drain', async () => {
    const server = await startSmtpServer();
    servers.push(server);
    const { log } = capturingLog();
    const ctx = await createContext(
      testConfig({ databaseUrl: null, redisUrl: null, smtp: smtpConfig(server.port) }),
      { passwords: testPasswords, log },
    );
    await ctx.mailer.send(MESSAGE);
    await closeContext(ctx);
    assert.deepEqual(
      server.received.map((m) => [m.from, m.to]),
      [['noreply@parley.test', ['ada@example.com']]],
    );
  });
});

test('parley serve with PARLEY_SMTP_*: an invitation goes out, and a stop waits for it', async () => {
  const server = await startSmtpServer({ greetingDelayMs: 1000 });
  servers.push(server);
  const dir = tempDir();
  const cap = captureIo({
    PARLEY_PORT: '0',
    PARLEY_LOG_LEVEL: 'silent',
    PARLEY_DATA_DIR: dir,
    PARLEY_SMTP_HOST: '127.0.0.1',
    PARLEY_SMTP_PORT: String(server.port),
    PARLEY_SMTP_SECURITY: 'none',
    PARLEY_SMTP_FROM: 'Parley Chat <chat@example.com>',
  });
  const done = runCli(['serve', '--json'], cap.io);
  await waitFor('the serve banner', () => cap.stdout().includes('\n'));
  const banner = JSON.parse(cap.stdout()) as { url: string; email: string; api_key: string };
  const res = await fetch(`${banner.url}/api/v1/invites`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${b64(`${banner.email}:${banner.api_key}`)}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'invitee_emails=new%40example.com&stream_ids=%5B%5D',
  });
  assert.deepEqual(await res.json(), OK);
  assert.equal(server.received.length, 0, 'not delivered before the stop');
  cap.signal('SIGTERM');
  assert.equal(await done, 0, cap.stderr());
  assert.deepEqual(
    server.received.map((m) => [m.from, m.to, m.headers.from]),
    [['chat@example.com', ['new@example.com'], 'Parley Chat <chat@example.com>']],
  );
  assert.match(decodeBody(server.received[0]), new RegExp(`${banner.url}/join/[A-Za-z0-9]{24}/`));
  assert.equal(existsSync(join(dir, 'mail.log')), false);
});
