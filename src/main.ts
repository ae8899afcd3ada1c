// The server process: open the database, restore event queues, create the first
// organization on an empty server, listen, and stop gracefully.
import { accessSync, constants, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pino, { type DestinationStream, type Logger } from 'pino';
import type { FastifyInstance } from 'fastify';
import { firstStart, type FirstStart } from './actions/bootstrap.ts';
import { buildApp } from './app.ts';
import { ConfigError, type Config } from './config.ts';
import { startIdleCollector, type IdleCollector } from './infra/idle-gc.ts';
import type { AppContext } from './context.ts';
import { closeContext, createContext, openStore, type ContextOverrides } from './server.ts';
import type { Store } from './store/db.ts';
import { migrateToLatest } from './store/migrations/index.ts';
import {
  createOutgoingWebhookWorker,
  type OutgoingWebhookWorker,
} from './workers/outgoing-webhooks.ts';

/** Where SIGTERM saves the event queues and the next start picks them up. */
export const QUEUES_FILE = 'event-queues.json';

export const queuesFile = (config: Config): string => join(config.dataDir, QUEUES_FILE);

// Fields of driver errors that quote the failed statement's values (PostgreSQL's detail and
// where, ioredis's command with its arguments): message content or credentials, say.
const QUOTING_ERROR_FIELDS = ['detail', 'where', 'internalQuery', 'parameters', 'command', 'args'];

/** An error as the log keeps it: type, message, code and stack, without quoted values. */
export function serializeErrorForLog(err: unknown): unknown {
  const out = pino.stdSerializers.err(err as Error) as unknown;
  if (typeof out !== 'object' || out === null) return out;
  const kept: Record<string, unknown> = { ...out };
  for (const field of QUOTING_ERROR_FIELDS) delete kept[field];
  return kept;
}

/** Logs are JSON lines on stderr by default; stdout is left to what the commands print. */
export function createLogger(
  config: Config,
  destination: DestinationStream = pino.destination({ fd: 2, sync: true }),
): Logger {
  return pino(
    {
      level: config.logLevel,
      redact: ['req.headers.authorization', '*.password', '*.api_key'],
      serializers: { err: serializeErrorForLog },
    },
    destination,
  );
}

/** The data directory holds the SQLite database and the saved event queues. */
export function prepareDataDir(config: Config): void {
  try {
    mkdirSync(config.dataDir, { recursive: true });
    accessSync(config.dataDir, constants.W_OK);
  } catch (err) {
    throw new ConfigError(
      `PARLEY_DATA_DIR: cannot write to "${config.dataDir}" (${describe(err)})`,
    );
  }
}

function describe(err: unknown): string {
  const e = err as { message?: string; code?: string };
  return e?.message || e?.code || String(err);
}

/** Failures to reach or log in to PostgreSQL, as opposed to bugs in a migration. */
function isConnectionError(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && /^(E[A-Z]+|08...|28...|3D000)$/.test(code);
}

async function migrateStore(store: Store, config: Config): Promise<string[]> {
  try {
    return await migrateToLatest(store.db as never, store.dialect, store.schema);
  } catch (err) {
    if (config.databaseUrl && isConnectionError(err)) {
      throw new ConfigError(`PARLEY_DATABASE_URL: cannot use the database (${describe(err)})`);
    }
    throw err;
  }
}

/** Open the configured database and apply pending migrations; returns their names. */
export async function migrateDatabase(config: Config): Promise<string[]> {
  prepareDataDir(config);
  const store = openStore(config);
  try {
    return await migrateStore(store, config);
  } finally {
    await store.close();
  }
}

/**
 * A context on the configured database, migrated, with the event bus connected. Errors
 * that a setting explains are ConfigErrors naming it.
 */
export async function openContext(
  config: Config,
  overrides: ContextOverrides = {},
): Promise<AppContext> {
  prepareDataDir(config);
  const log = overrides.log ?? createLogger(config);
  const store = overrides.store ?? openStore(config);
  try {
    if (!overrides.migrated) {
      const applied = await migrateStore(store, config);
      if (applied.length > 0) log.info({ migrations: applied }, 'applied database migrations');
    }
  } catch (err) {
    await store.close();
    throw err;
  }
  try {
    if (config.redisUrl && !overrides.bus) await checkRedis(config.redisUrl);
    return await createContext(config, { ...overrides, log, store, migrated: true });
  } catch (err) {
    await store.close();
    throw err;
  }
}

/**
 * One connection attempt without retries, so an unreachable Redis stops the start with one
 * line naming the variable rather than a client reconnecting in the background.
 */
async function checkRedis(url: string): Promise<void> {
  const client = new Redis(url, {
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
  });
  let cause: unknown = null;
  client.on('error', (err: unknown) => (cause ??= err));
  try {
    await client.connect();
    await client.ping();
  } catch (err) {
    throw new ConfigError(`PARLEY_REDIS_URL: cannot connect to Redis (${describe(cause ?? err)})`);
  } finally {
    client.disconnect();
  }
}

/** Load the queues the last SIGTERM saved; a file that cannot be read is set aside. */
async function restoreQueues(ctx: AppContext): Promise<void> {
  const file = queuesFile(ctx.config);
  if (!existsSync(file)) return;
  try {
    const restored = await ctx.queues.restoreFrom(file);
    rmSync(file);
    ctx.log.info({ queues: restored }, 'restored event queues');
  } catch (err) {
    const aside = `${file}.unreadable-${ctx.clock.nowMs()}`;
    renameSync(file, aside);
    ctx.log.error(
      { err, file: aside },
      'could not restore event queues; clients will register again',
    );
  }
}

export interface RunningServer {
  ctx: AppContext;
  app: FastifyInstance;
  /** The address the server listens on, with the bound port. */
  url: string;
  /** The organization and owner created by this start, on an empty database. */
  firstStart: FirstStart | null;
  /** Sends the outgoing-webhook deliveries stored with messages. */
  outgoingWebhooks: OutgoingWebhookWorker;
  /** Young-generation collections while idle (PARLEY_IDLE_GC); null when off or unavailable. */
  idleCollector: IdleCollector | null;
  /** Stop accepting, finish requests in flight, save the event queues, close the database. */
  stop(): Promise<void>;
}

const hostInUrl = (host: string): string => (host.includes(':') ? `[${host}]` : host);

/** A listening address a local client can reach (the wildcard addresses are not one). */
export function localUrl(server: Pick<RunningServer, 'url'>): string {
  const url = new URL(server.url);
  if (url.hostname === '0.0.0.0') url.hostname = '127.0.0.1';
  if (url.hostname === '[::]') url.hostname = '[::1]';
  return url.origin;
}

function listenError(err: unknown, config: Config): unknown {
  const code = (err as { code?: unknown })?.code;
  const where = `${hostInUrl(config.host)}:${config.port}`;
  if (code === 'EADDRINUSE') return new ConfigError(`PARLEY_PORT: ${where} is already in use`);
  if (code === 'EACCES') return new ConfigError(`PARLEY_PORT: no permission to listen on ${where}`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new ConfigError(`PARLEY_HOST: cannot listen on ${where} (${describe(err)})`);
  }
  return err;
}

export async function startServer(
  config: Config,
  overrides: ContextOverrides = {},
): Promise<RunningServer> {
  const ctx = await openContext(config, overrides);
  let app: FastifyInstance | null = null;
  try {
    // A server's commits should not copy the WAL into the database file (store/checkpoints.ts).
    ctx.store.checkpointInBackground?.({
      onLookFailed: (err) =>
        ctx.log.warn({ err }, 'background checkpoint failed; the worker tries again'),
      onResumed: () => ctx.log.info('background checkpoints resumed'),
      onError: (err) =>
        ctx.log.warn({ err }, 'background checkpoints stopped; SQLite checkpoints in its commits'),
    });
    await restoreQueues(ctx);
    const created = await firstStart(ctx);
    app = await buildApp(ctx);
    // Parked long-polls are answered first, so closing does not wait out their timeouts.
    app.addHook('preClose', async () => ctx.queues.shutdown());
    // Node's default backlog of 511 overflows when thousands of clients connect at once (a
    // restart, a network coming back): the kernel then drops their SYNs, and each retries
    // only after a second (docs/deploying.md).
    try {
      await app.listen({ host: config.host, port: config.port, backlog: config.listenBacklog });
    } catch (err) {
      throw listenError(err, config);
    }
    const { port } = app.server.address() as AddressInfo;
    // Port 0 binds any free port; the default external URL follows the real one.
    if (config.externalUrl.port === '0') {
      const external = new URL(config.externalUrl);
      external.port = String(port);
      config.externalUrl = external;
    }
    const url = `http://${hostInUrl(config.host)}:${port}`;
    const idleCollector = config.idleGc ? startIdleCollector() : null;
    if (config.idleGc && !idleCollector) {
      ctx.log.warn('PARLEY_IDLE_GC: this runtime does not allow collecting garbage on request');
    }
    ctx.log.info(
      {
        url,
        nodeId: config.nodeId,
        database: ctx.store.dialect,
        redis: Boolean(config.redisUrl),
        idleGc: idleCollector !== null,
        backgroundCheckpoints: ctx.store.checkpointInBackground !== undefined,
      },
      'Parley started',
    );
    const outgoingWebhooks = createOutgoingWebhookWorker(ctx);
    outgoingWebhooks.start();
    const running: RunningServer = {
      ctx,
      app,
      url,
      firstStart: created,
      outgoingWebhooks,
      idleCollector,
      stop: () => stopServer(running),
    };
    return running;
  } catch (err) {
    await app?.close().catch(() => undefined);
    await closeContext(ctx).catch(() => undefined);
    throw err;
  }
}

async function stopServer(server: RunningServer): Promise<void> {
  const { ctx, app } = server;
  server.idleCollector?.stop();
  await app.close();
  await server.outgoingWebhooks.stop();
  await ctx.http.close();
  // No notices may arrive for queues already written out.
  await ctx.bus.close();
  try {
    await ctx.queues.saveTo(queuesFile(ctx.config));
  } catch (err) {
    ctx.log.error({ err }, 'could not save event queues; clients will register again');
  }
  // After the queues are saved, so a slow mail server cannot cost them the stop deadline.
  await ctx.mailer.close?.();
  await ctx.store.close();
  ctx.log.info('Parley stopped');
}

/** What a start prints: the URL, and once, on an empty database, the owner's credentials. */
export function bannerLines(server: RunningServer): string[] {
  const external = server.ctx.config.externalUrl.origin;
  const lines = [
    external === new URL(server.url).origin
      ? `Parley is running at ${server.url}`
      : `Parley is running at ${server.url} (external URL ${external})`,
  ];
  const created = server.firstStart;
  if (!created) return lines;
  const email = created.owner.delivery_email;
  const key = created.owner.api_key;
  lines.push(
    '',
    `Created the organization "${created.realm.name}" and its owner. This is shown only once:`,
    `  email:    ${email}`,
    `  API key:  ${key}`,
    `  password: ${created.password}`,
    '',
    'Try it:',
    `  curl -sSu ${email}:${key} ${localUrl(server)}/api/v1/users/me`,
  );
  return lines;
}

/** The same as one JSON object, for scripts (serve --json). */
export function bannerJson(server: RunningServer): Record<string, unknown> {
  const created = server.firstStart;
  if (!created) return { url: server.url };
  return {
    url: server.url,
    realm_id: created.realm.id,
    user_id: created.owner.id,
    email: created.owner.delivery_email,
    api_key: created.owner.api_key,
    password: created.password,
  };
}
