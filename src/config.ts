// The only reader of process.env. Every setting is a PARLEY_* variable, validated at
// start; a bad value stops the start with one line naming the variable.
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { isValidEmail } from './lib/validation.ts';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export type SqliteSynchronous = 'OFF' | 'NORMAL' | 'FULL';

/** starttls: upgrade a plain connection (required, never skipped); tls: implicit TLS; none: plain text. */
export type SmtpSecurity = 'starttls' | 'tls' | 'none';

export interface SmtpConfig {
  host: string;
  port: number;
  security: SmtpSecurity;
  /** null = no AUTH. */
  auth: { user: string; password: string } | null;
  /** The From header and envelope sender; name is an optional display name. */
  from: { name: string | null; address: string };
}

export interface RateLimitConfig {
  max: number;
  windowSeconds: number;
}

export interface Config {
  host: string;
  port: number;
  /** Connections the kernel may hold for accepting (capped by net.core.somaxconn). */
  listenBacklog: number;
  dataDir: string;
  /** Uploaded files (organization icons, and later emoji and avatars); <dataDir>/uploads by default. */
  uploadsDir: string;
  /** postgres:// URL, or null for the embedded SQLite database under dataDir. */
  databaseUrl: string | null;
  /** SQLite file; ':memory:' in tests. */
  sqlitePath: string;
  sqliteSynchronous: SqliteSynchronous;
  redisUrl: string | null;
  /** Redis pub/sub channel shared by the processes of one deployment. */
  redisChannel: string;
  externalUrl: URL;
  logLevel: LogLevel;
  /** null = rate limiting off. */
  rateLimit: RateLimitConfig | null;
  /** Hosts and CIDR ranges outgoing webhooks may reach although private. */
  outgoingWebhookAllow: string[];
  outgoingWebhookTimeoutMs: number;
  maxEmojiFileSizeMib: number;
  /** Event-queue timing, configurable so tests run in milliseconds. */
  heartbeatMinMs: number;
  heartbeatJitterMs: number;
  /** How long a connection with nothing in flight stays open (http/direct-listener.ts). */
  keepAliveMs: number;
  queueIdleTimeoutSecs: number;
  queueGcIntervalMs: number;
  /** How long a missing commit sequence number is waited for before its notice counts as lost. */
  eventGapWaitMs: number;
  /**
   * How often a process holding queues compares its organizations' commit sequences in the
   * database with the notices it saw: a lost notice then shows even when no later one comes.
   */
  eventSeqCheckMs: number;
  maxEventsPerQueue: number;
  /** Server-level setting of the reference server. */
  canAccessAllUsersGroupLimitsPresence: boolean;
  /** Process identity, part of every queue id. */
  nodeId: string;
  /** Collect young garbage while the event loop is idle (infra/idle-gc.ts). */
  idleGc: boolean;
  /** null = outgoing mail is appended to <dataDir>/mail.log instead of sent. */
  smtp: SmtpConfig | null;
}

export class ConfigError extends Error {}

const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

type Env = Record<string, string | undefined>;

function readInt(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
  }
  return Number(raw);
}

function readBool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be true or false (got "${raw}")`);
}

function readUrl(env: Env, name: string, protocols: string[]): URL | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} is not a valid URL (got "${raw}")`);
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(
      `${name} must start with ${protocols.map((p) => `${p}//`).join(' or ')} (got "${raw}")`,
    );
  }
  return url;
}

export function parseRateLimit(
  raw: string | undefined,
  name = 'PARLEY_RATE_LIMIT',
): RateLimitConfig | null {
  if (raw === undefined || raw === '') return { max: 200, windowSeconds: 60 };
  if (raw === 'off') return null;
  const m = /^(\d+)\/(\d+)s$/.exec(raw);
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) {
    throw new ConfigError(
      `${name} must be "off" or REQUESTS/SECONDSs such as "200/60s" (got "${raw}")`,
    );
  }
  return { max: Number(m[1]), windowSeconds: Number(m[2]) };
}

const HOST_NAME_RE =
  /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** An IP address (IPv6 with or without brackets) or a DNS host name. */
function readHost(name: string, raw: string): string {
  const unbracketed = /^\[(.*)\]$/.exec(raw)?.[1] ?? raw;
  if (isIP(unbracketed) === 6) return unbracketed;
  if (unbracketed === raw && (isIP(raw) === 4 || HOST_NAME_RE.test(raw))) return raw;
  throw new ConfigError(`${name} must be a host name or IP address (got "${raw}")`);
}

/** Organizations live at the root and subdomains of this origin, so it has no path. */
function readExternalUrl(env: Env): URL | null {
  const url = readUrl(env, 'PARLEY_EXTERNAL_URL', ['http:', 'https:']);
  if (url && (url.pathname !== '/' || url.search || url.hash || url.username || url.password)) {
    throw new ConfigError(
      `PARLEY_EXTERNAL_URL must be an origin such as https://chat.example.com, without a path (got "${env.PARLEY_EXTERNAL_URL}")`,
    );
  }
  return url;
}

/** Queue ids are "<nodeId>:<random>", so the id may not contain the separator. */
function readNodeId(env: Env): string {
  const raw = env.PARLEY_NODE_ID;
  if (raw === undefined || raw === '') return randomNodeId();
  if (!/^[A-Za-z0-9_-]{1,32}$/.test(raw)) {
    throw new ConfigError(
      `PARLEY_NODE_ID must be 1 to 32 letters, digits, "-" or "_" (got "${raw}")`,
    );
  }
  return raw;
}

const SMTP_SECURITIES: SmtpSecurity[] = ['starttls', 'tls', 'none'];
const SMTP_OPTIONAL = [
  'PARLEY_SMTP_PORT',
  'PARLEY_SMTP_SECURITY',
  'PARLEY_SMTP_USER',
  'PARLEY_SMTP_PASSWORD',
  'PARLEY_SMTP_FROM',
] as const;

/** "address" or "Display Name <address>"; no control characters, which could end the header. */
function readMailFrom(raw: string): SmtpConfig['from'] {
  const angled = /^(.*)<([^<>]*)>\s*$/.exec(raw);
  const name = angled ? angled[1].trim().replace(/^"(.*)"$/, '$1') : '';
  const address = (angled ? angled[2] : raw).trim();
  if (!isValidEmail(address) || /\p{Cc}/u.test(raw)) {
    throw new ConfigError(
      `PARLEY_SMTP_FROM must be an email address or "Name <address>" (got ${JSON.stringify(raw)})`,
    );
  }
  return { name: name || null, address };
}

/**
 * SMTP delivery when PARLEY_SMTP_HOST is set. The other SMTP settings are checked even
 * without it, and setting one without the host is an error rather than silently unused.
 * Error lines never show the password.
 */
function readSmtp(env: Env, externalUrl: URL): SmtpConfig | null {
  const rawSecurity = env.PARLEY_SMTP_SECURITY || 'starttls';
  const security = rawSecurity.toLowerCase() as SmtpSecurity;
  if (!SMTP_SECURITIES.includes(security)) {
    throw new ConfigError(
      `PARLEY_SMTP_SECURITY must be starttls, tls or none (got "${rawSecurity}")`,
    );
  }
  const port = readInt(env, 'PARLEY_SMTP_PORT', security === 'tls' ? 465 : 587, 1, 65535);
  const user = env.PARLEY_SMTP_USER || '';
  const password = env.PARLEY_SMTP_PASSWORD || '';
  if (user && !password) {
    throw new ConfigError('PARLEY_SMTP_USER is set but PARLEY_SMTP_PASSWORD is not');
  }
  if (password && !user) {
    throw new ConfigError('PARLEY_SMTP_PASSWORD is set but PARLEY_SMTP_USER is not');
  }
  const from = env.PARLEY_SMTP_FROM ? readMailFrom(env.PARLEY_SMTP_FROM) : null;
  const rawHost = env.PARLEY_SMTP_HOST;
  if (rawHost === undefined || rawHost === '') {
    const stray = SMTP_OPTIONAL.find((name) => env[name]);
    if (stray) {
      throw new ConfigError(
        `${stray} is set but PARLEY_SMTP_HOST is not (without a host, mail goes to <data dir>/mail.log)`,
      );
    }
    return null;
  }
  const host = readHost('PARLEY_SMTP_HOST', rawHost);
  const externalHost = externalUrl.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!from && (isIP(externalHost) !== 0 || !isValidEmail(`noreply@${externalHost}`))) {
    throw new ConfigError(
      `PARLEY_SMTP_FROM must be set: the default noreply@<host of the external URL> needs a domain name, not "${externalHost}"`,
    );
  }
  return {
    host,
    port,
    security,
    auth: user ? { user, password } : null,
    from: from ?? { name: null, address: `noreply@${externalHost.toLowerCase()}` },
  };
}

export function loadConfig(env: Env = process.env): Config {
  const host = readHost('PARLEY_HOST', env.PARLEY_HOST || '127.0.0.1');
  const port = readInt(env, 'PARLEY_PORT', 9991, 0, 65535);
  const dataDir = resolve(env.PARLEY_DATA_DIR || './data');
  const database = readUrl(env, 'PARLEY_DATABASE_URL', ['postgres:', 'postgresql:']);
  const redis = readUrl(env, 'PARLEY_REDIS_URL', ['redis:', 'rediss:']);
  const externalUrl =
    readExternalUrl(env) ?? new URL(`http://${host.includes(':') ? `[${host}]` : host}:${port}`);
  const logLevel = (env.PARLEY_LOG_LEVEL || 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(
      `PARLEY_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${logLevel}")`,
    );
  }
  const sync = (env.PARLEY_SQLITE_SYNCHRONOUS || 'NORMAL').toUpperCase() as SqliteSynchronous;
  if (!['OFF', 'NORMAL', 'FULL'].includes(sync)) {
    throw new ConfigError(
      `PARLEY_SQLITE_SYNCHRONOUS must be NORMAL, FULL or OFF (got "${env.PARLEY_SQLITE_SYNCHRONOUS}")`,
    );
  }
  const allow = (env.PARLEY_OUTGOING_WEBHOOK_ALLOW || '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return {
    host,
    port,
    listenBacklog: readInt(env, 'PARLEY_LISTEN_BACKLOG', 4096, 1, 65535),
    dataDir,
    uploadsDir: resolve(env.PARLEY_UPLOADS_DIR || resolve(dataDir, 'uploads')),
    databaseUrl: database ? database.href : null,
    sqlitePath: resolve(dataDir, 'parley.sqlite3'),
    sqliteSynchronous: sync,
    redisUrl: redis ? redis.href : null,
    redisChannel: env.PARLEY_REDIS_CHANNEL || 'parley:events',
    externalUrl,
    logLevel,
    rateLimit: parseRateLimit(env.PARLEY_RATE_LIMIT),
    outgoingWebhookAllow: allow,
    outgoingWebhookTimeoutMs:
      readInt(env, 'PARLEY_OUTGOING_WEBHOOK_TIMEOUT_SECONDS', 10, 1, 300) * 1000,
    maxEmojiFileSizeMib: readInt(env, 'PARLEY_MAX_EMOJI_FILE_SIZE_MIB', 5, 1, 100),
    heartbeatMinMs: readInt(env, 'PARLEY_HEARTBEAT_SECONDS', 45, 1, 3600) * 1000,
    heartbeatJitterMs: 10_000,
    keepAliveMs: 72_000,
    queueIdleTimeoutSecs: readInt(env, 'PARLEY_QUEUE_IDLE_TIMEOUT_SECONDS', 600, 10, 7 * 24 * 3600),
    queueGcIntervalMs: 60_000,
    eventGapWaitMs: 10_000,
    eventSeqCheckMs: 10_000,
    maxEventsPerQueue: readInt(env, 'PARLEY_MAX_EVENTS_PER_QUEUE', 10_000, 10, 10_000_000),
    canAccessAllUsersGroupLimitsPresence: readBool(
      env,
      'PARLEY_CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE',
      false,
    ),
    nodeId: readNodeId(env),
    idleGc: readBool(env, 'PARLEY_IDLE_GC', true),
    smtp: readSmtp(env, externalUrl),
  };
}

/** Every variable loadConfig reads. */
export const SETTING_NAMES = [
  'PARLEY_HOST',
  'PARLEY_PORT',
  'PARLEY_LISTEN_BACKLOG',
  'PARLEY_DATA_DIR',
  'PARLEY_UPLOADS_DIR',
  'PARLEY_DATABASE_URL',
  'PARLEY_SQLITE_SYNCHRONOUS',
  'PARLEY_REDIS_URL',
  'PARLEY_REDIS_CHANNEL',
  'PARLEY_EXTERNAL_URL',
  'PARLEY_LOG_LEVEL',
  'PARLEY_RATE_LIMIT',
  'PARLEY_OUTGOING_WEBHOOK_ALLOW',
  'PARLEY_OUTGOING_WEBHOOK_TIMEOUT_SECONDS',
  'PARLEY_MAX_EMOJI_FILE_SIZE_MIB',
  'PARLEY_HEARTBEAT_SECONDS',
  'PARLEY_QUEUE_IDLE_TIMEOUT_SECONDS',
  'PARLEY_MAX_EVENTS_PER_QUEUE',
  'PARLEY_CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE',
  'PARLEY_NODE_ID',
  'PARLEY_IDLE_GC',
  'PARLEY_SMTP_HOST',
  ...SMTP_OPTIONAL,
] as const;

/** Variables read by the test and CI tooling rather than the server. */
const TOOLING_PREFIXES = ['PARLEY_TEST_', 'PARLEY_CI_', 'PARLEY_FUZZ_', 'PARLEY_BENCH_'];

/** PARLEY_* variables the server does not know: most likely misspelt, so start warns. */
export function unknownSettings(env: Env = process.env): string[] {
  const known = new Set<string>(SETTING_NAMES);
  return Object.keys(env)
    .filter((k) => k.startsWith('PARLEY_') && !known.has(k))
    .filter((k) => !TOOLING_PREFIXES.some((p) => k.startsWith(p)))
    .sort();
}

function randomNodeId(): string {
  return Math.random().toString(36).slice(2, 8);
}
