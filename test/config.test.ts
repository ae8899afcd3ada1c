// Configuration: defaults, every variable read, and one clear line naming the variable
// for every bad value.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  ConfigError,
  loadConfig,
  parseRateLimit,
  SETTING_NAMES,
  unknownSettings,
} from '../src/config.ts';

test('defaults: SQLite under ./data on 127.0.0.1:9991', () => {
  const config = loadConfig({});
  assert.match(config.nodeId, /^[a-z0-9]{1,32}$/);
  assert.deepEqual(
    { ...config, nodeId: 'n' },
    {
      host: '127.0.0.1',
      port: 9991,
      listenBacklog: 4096,
      dataDir: resolve('data'),
      uploadsDir: resolve('data', 'uploads'),
      databaseUrl: null,
      sqlitePath: resolve('data', 'parley.sqlite3'),
      sqliteSynchronous: 'NORMAL',
      redisUrl: null,
      redisChannel: 'parley:events',
      externalUrl: new URL('http://127.0.0.1:9991'),
      logLevel: 'info',
      rateLimit: { max: 200, windowSeconds: 60 },
      outgoingWebhookAllow: [],
      outgoingWebhookTimeoutMs: 10_000,
      maxEmojiFileSizeMib: 5,
      heartbeatMinMs: 45_000,
      heartbeatJitterMs: 10_000,
      keepAliveMs: 72_000,
      queueIdleTimeoutSecs: 600,
      queueGcIntervalMs: 60_000,
      eventGapWaitMs: 10_000,
      eventSeqCheckMs: 10_000,
      maxEventsPerQueue: 10_000,
      canAccessAllUsersGroupLimitsPresence: false,
      nodeId: 'n',
      idleGc: true,
      smtp: null,
    },
  );
});

test('every variable is read', () => {
  const config = loadConfig({
    PARLEY_HOST: '0.0.0.0',
    PARLEY_PORT: '8080',
    PARLEY_LISTEN_BACKLOG: '1024',
    PARLEY_DATA_DIR: '/var/lib/parley',
    PARLEY_UPLOADS_DIR: '/srv/parley-uploads',
    PARLEY_DATABASE_URL: 'postgres://parley:secret@db.internal:5432/parley',
    PARLEY_SQLITE_SYNCHRONOUS: 'full',
    PARLEY_REDIS_URL: 'redis://cache.internal:6379/2',
    PARLEY_REDIS_CHANNEL: 'chat-events',
    PARLEY_EXTERNAL_URL: 'https://chat.example.com',
    PARLEY_LOG_LEVEL: 'debug',
    PARLEY_RATE_LIMIT: '50/10s',
    PARLEY_OUTGOING_WEBHOOK_ALLOW: ' 10.0.0.0/8, hooks.internal ,',
    PARLEY_OUTGOING_WEBHOOK_TIMEOUT_SECONDS: '30',
    PARLEY_MAX_EMOJI_FILE_SIZE_MIB: '2',
    PARLEY_HEARTBEAT_SECONDS: '20',
    PARLEY_QUEUE_IDLE_TIMEOUT_SECONDS: '3600',
    PARLEY_MAX_EVENTS_PER_QUEUE: '500',
    PARLEY_CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE: 'yes',
    PARLEY_NODE_ID: 'web-1',
    PARLEY_IDLE_GC: 'off',
    PARLEY_SMTP_HOST: 'smtp.example.com',
    PARLEY_SMTP_PORT: '2525',
    PARLEY_SMTP_SECURITY: 'TLS',
    PARLEY_SMTP_USER: 'parley@example.com',
    PARLEY_SMTP_PASSWORD: 'p4ss word',
    PARLEY_SMTP_FROM: '"Parley Chat" <chat@example.com>',
  });
  assert.deepEqual(config, {
    host: '0.0.0.0',
    port: 8080,
    listenBacklog: 1024,
    dataDir: '/var/lib/parley',
    uploadsDir: '/srv/parley-uploads',
    databaseUrl: 'postgres://parley:secret@db.internal:5432/parley',
    sqlitePath: '/var/lib/parley/parley.sqlite3',
    sqliteSynchronous: 'FULL',
    redisUrl: 'redis://cache.internal:6379/2',
    redisChannel: 'chat-events',
    externalUrl: new URL('https://chat.example.com'),
    logLevel: 'debug',
    rateLimit: { max: 50, windowSeconds: 10 },
    outgoingWebhookAllow: ['10.0.0.0/8', 'hooks.internal'],
    outgoingWebhookTimeoutMs: 30_000,
    maxEmojiFileSizeMib: 2,
    heartbeatMinMs: 20_000,
    heartbeatJitterMs: 10_000,
    keepAliveMs: 72_000,
    queueIdleTimeoutSecs: 3600,
    queueGcIntervalMs: 60_000,
    eventGapWaitMs: 10_000,
    eventSeqCheckMs: 10_000,
    maxEventsPerQueue: 500,
    canAccessAllUsersGroupLimitsPresence: true,
    nodeId: 'web-1',
    idleGc: false,
    smtp: {
      host: 'smtp.example.com',
      port: 2525,
      security: 'tls',
      auth: { user: 'parley@example.com', password: 'p4ss word' },
      from: { name: 'Parley Chat', address: 'chat@example.com' },
    },
  });
});

test('the external URL defaults to the listening address, IPv6 in brackets', () => {
  assert.equal(loadConfig({ PARLEY_HOST: '::1' }).externalUrl.href, 'http://[::1]:9991/');
  const bracketed = loadConfig({ PARLEY_HOST: '[::1]', PARLEY_PORT: '80' });
  assert.equal(bracketed.host, '::1');
  assert.equal(bracketed.externalUrl.href, 'http://[::1]/');
  assert.equal(loadConfig({ PARLEY_HOST: 'localhost' }).externalUrl.href, 'http://localhost:9991/');
  assert.equal(
    loadConfig({ PARLEY_DATABASE_URL: 'postgresql://h/db' }).databaseUrl,
    'postgresql://h/db',
  );
  assert.deepEqual(loadConfig({ PARLEY_RATE_LIMIT: 'off' }).rateLimit, null);
  assert.equal(
    loadConfig({ PARLEY_CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE: 'OFF' })
      .canAccessAllUsersGroupLimitsPresence,
    false,
  );
});

test('SMTP: the port follows the security, From defaults to noreply@ the external host', () => {
  const smtp = (env: Record<string, string>) =>
    loadConfig({ PARLEY_EXTERNAL_URL: 'https://Chat.Example.com', ...env }).smtp;
  assert.deepEqual(smtp({ PARLEY_SMTP_HOST: 'mail.internal' }), {
    host: 'mail.internal',
    port: 587,
    security: 'starttls',
    auth: null,
    from: { name: null, address: 'noreply@chat.example.com' },
  });
  assert.equal(smtp({ PARLEY_SMTP_HOST: 'h', PARLEY_SMTP_SECURITY: 'tls' })?.port, 465);
  assert.equal(smtp({ PARLEY_SMTP_HOST: 'h', PARLEY_SMTP_SECURITY: 'none' })?.port, 587);
  assert.equal(smtp({ PARLEY_SMTP_HOST: '[::1]', PARLEY_SMTP_PORT: '25' })?.host, '::1');
  assert.deepEqual(smtp({ PARLEY_SMTP_HOST: 'h', PARLEY_SMTP_FROM: 'bot@example.com' })?.from, {
    name: null,
    address: 'bot@example.com',
  });
  assert.deepEqual(
    smtp({ PARLEY_SMTP_HOST: 'h', PARLEY_SMTP_FROM: 'Zoë’s Chat <bot@example.com>' })?.from,
    { name: 'Zoë’s Chat', address: 'bot@example.com' },
  );
  assert.equal(loadConfig({ PARLEY_SMTP_HOST: '' }).smtp, null);
});

test('SMTP without PARLEY_SMTP_FROM needs an external URL with a domain name', () => {
  assert.throws(() => loadConfig({ PARLEY_SMTP_HOST: 'mail.internal' }), {
    message:
      'PARLEY_SMTP_FROM must be set: the default noreply@<host of the external URL> needs a domain name, not "127.0.0.1"',
  });
  assert.equal(
    loadConfig({ PARLEY_SMTP_HOST: 'mail.internal', PARLEY_SMTP_FROM: 'a@example.com' }).smtp?.from
      .address,
    'a@example.com',
  );
});

test('a bad SMTP password is never echoed', () => {
  assert.throws(() => loadConfig({ PARLEY_SMTP_HOST: 'h', PARLEY_SMTP_PASSWORD: 'hunter2' }), {
    message: 'PARLEY_SMTP_PASSWORD is set but PARLEY_SMTP_USER is not',
  });
});

const BAD: Array<[string, string, string]> = [
  ['PARLEY_HOST', 'my host', 'must be a host name or IP address (got "my host")'],
  ['PARLEY_HOST', '[::1', 'must be a host name or IP address (got "[::1")'],
  ['PARLEY_HOST', '1:2', 'must be a host name or IP address (got "1:2")'],
  ['PARLEY_HOST', '[example.com]', 'must be a host name or IP address (got "[example.com]")'],
  ['PARLEY_HOST', 'a..b', 'must be a host name or IP address (got "a..b")'],
  ['PARLEY_PORT', 'http', 'must be a whole number from 0 to 65535 (got "http")'],
  ['PARLEY_PORT', '65536', 'must be a whole number from 0 to 65535 (got "65536")'],
  ['PARLEY_PORT', '-1', 'must be a whole number from 0 to 65535 (got "-1")'],
  ['PARLEY_LISTEN_BACKLOG', '0', 'must be a whole number from 1 to 65535 (got "0")'],
  ['PARLEY_LISTEN_BACKLOG', 'many', 'must be a whole number from 1 to 65535 (got "many")'],
  ['PARLEY_IDLE_GC', 'sometimes', 'must be true or false (got "sometimes")'],
  [
    'PARLEY_DATABASE_URL',
    'mysql://db/x',
    'must start with postgres:// or postgresql:// (got "mysql://db/x")',
  ],
  ['PARLEY_DATABASE_URL', 'parley.sqlite3', 'is not a valid URL (got "parley.sqlite3")'],
  [
    'PARLEY_REDIS_URL',
    'http://cache',
    'must start with redis:// or rediss:// (got "http://cache")',
  ],
  [
    'PARLEY_REDIS_URL',
    'localhost:6379',
    'must start with redis:// or rediss:// (got "localhost:6379")',
  ],
  ['PARLEY_EXTERNAL_URL', 'chat.example.com', 'is not a valid URL (got "chat.example.com")'],
  [
    'PARLEY_EXTERNAL_URL',
    'ftp://chat.example.com',
    'must start with http:// or https:// (got "ftp://chat.example.com")',
  ],
  [
    'PARLEY_EXTERNAL_URL',
    'https://example.com/chat',
    'must be an origin such as https://chat.example.com, without a path (got "https://example.com/chat")',
  ],
  [
    'PARLEY_LOG_LEVEL',
    'verbose',
    'must be one of fatal, error, warn, info, debug, trace, silent (got "verbose")',
  ],
  ['PARLEY_SQLITE_SYNCHRONOUS', 'EXTRA', 'must be NORMAL, FULL or OFF (got "EXTRA")'],
  ['PARLEY_RATE_LIMIT', '200', 'must be "off" or REQUESTS/SECONDSs such as "200/60s" (got "200")'],
  [
    'PARLEY_RATE_LIMIT',
    '0/60s',
    'must be "off" or REQUESTS/SECONDSs such as "200/60s" (got "0/60s")',
  ],
  [
    'PARLEY_OUTGOING_WEBHOOK_TIMEOUT_SECONDS',
    '0',
    'must be a whole number from 1 to 300 (got "0")',
  ],
  ['PARLEY_MAX_EMOJI_FILE_SIZE_MIB', '1.5', 'must be a whole number from 1 to 100 (got "1.5")'],
  ['PARLEY_HEARTBEAT_SECONDS', '3601', 'must be a whole number from 1 to 3600 (got "3601")'],
  ['PARLEY_QUEUE_IDLE_TIMEOUT_SECONDS', '5', 'must be a whole number from 10 to 604800 (got "5")'],
  [
    'PARLEY_MAX_EVENTS_PER_QUEUE',
    'lots',
    'must be a whole number from 10 to 10000000 (got "lots")',
  ],
  [
    'PARLEY_CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE',
    'maybe',
    'must be true or false (got "maybe")',
  ],
  ['PARLEY_NODE_ID', 'web:1', 'must be 1 to 32 letters, digits, "-" or "_" (got "web:1")'],
  ['PARLEY_SMTP_HOST', 'smtp://mail', 'must be a host name or IP address (got "smtp://mail")'],
  ['PARLEY_SMTP_PORT', '0', 'must be a whole number from 1 to 65535 (got "0")'],
  [
    'PARLEY_SMTP_PORT',
    '25',
    'is set but PARLEY_SMTP_HOST is not (without a host, mail goes to <data dir>/mail.log)',
  ],
  ['PARLEY_SMTP_SECURITY', 'ssl', 'must be starttls, tls or none (got "ssl")'],
  ['PARLEY_SMTP_USER', 'parley', 'is set but PARLEY_SMTP_PASSWORD is not'],
  ['PARLEY_SMTP_PASSWORD', 'secret', 'is set but PARLEY_SMTP_USER is not'],
  ['PARLEY_SMTP_FROM', 'Parley', 'must be an email address or "Name <address>" (got "Parley")'],
  [
    'PARLEY_SMTP_FROM',
    'Parley <a@b.c>\r\nBcc: x@y.z',
    'must be an email address or "Name <address>" (got "Parley <a@b.c>\\r\\nBcc: x@y.z")',
  ],
];

for (const [name, value, message] of BAD) {
  test(`${name}=${value} stops the start with one line naming it`, () => {
    assert.throws(
      () => loadConfig({ [name]: value }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(err.message, `${name} ${message}`);
        assert.doesNotMatch(err.message, /\n/);
        return true;
      },
    );
  });
}

test('SETTING_NAMES lists exactly the variables loadConfig reads', () => {
  const read = new Set<string>();
  const env = new Proxy({} as Record<string, string | undefined>, {
    get(_target, key) {
      if (typeof key === 'string') read.add(key);
      return undefined;
    },
  });
  loadConfig(env);
  assert.deepEqual([...read].sort(), [...SETTING_NAMES].sort());
});

test('every variable with a value to check has a bad-value case above', () => {
  const free = [
    'PARLEY_DATA_DIR',
    'PARLEY_UPLOADS_DIR',
    'PARLEY_REDIS_CHANNEL',
    'PARLEY_OUTGOING_WEBHOOK_ALLOW',
  ];
  const covered = new Set(BAD.map(([name]) => name));
  assert.deepEqual(
    SETTING_NAMES.filter((n) => !free.includes(n) && !covered.has(n)),
    [],
  );
});

test('parseRateLimit names the variable it was given', () => {
  assert.throws(() => parseRateLimit('x', 'PARLEY_OTHER_LIMIT'), {
    message: 'PARLEY_OTHER_LIMIT must be "off" or REQUESTS/SECONDSs such as "200/60s" (got "x")',
  });
});

test('unknownSettings lists misspelt PARLEY_ variables, not tooling ones', () => {
  assert.deepEqual(
    unknownSettings({
      PARLEY_PORT: '1',
      PARLEY_POST: '1',
      PARLEY_LOGLEVEL: 'debug',
      PARLEY_TEST_DATABASE_URL: 'postgres://x',
      PARLEY_CI_REDIS_URL: 'redis://x',
      PARLEY_FUZZ_RUNS: '5',
      PARLEY_BENCH_SECONDS: '5',
      HOME: '/root',
    }),
    ['PARLEY_LOGLEVEL', 'PARLEY_POST'],
  );
});

test('README documents every variable and starts its Quick start with install/start and test', () => {
  const readme = readFileSync('README.md', 'utf8');
  assert.deepEqual(
    SETTING_NAMES.filter((name) => !readme.includes(`\`${name}\``)),
    [],
  );
  const quickStart = readme.slice(readme.indexOf('## Quick start'));
  const block = /```sh\n([\s\S]*?)```/.exec(quickStart)![1].split('\n');
  assert.match(block[0], /^npm install && npm start\b/);
  assert.match(block[1], /^npm test\b/);
});
