// Builds an AppContext from a Config: opens the store, migrates, and wires the bus and queues.
import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import type { Config } from './config.ts';
import type { AppContext } from './context.ts';
import { LocalBus, RedisBus, type EventBus } from './events/bus.ts';
import { EventQueues } from './events/queues.ts';
import { systemClock, type Clock } from './infra/clock.ts';
import { diskFileStore, type FileStore } from './infra/files.ts';
import { createHttpClient, type HttpClient } from './infra/http-client.ts';
import { sharpImages, type Images } from './infra/images.ts';
import { logFileMailer, smtpMailer, type Mailer } from './infra/mailer.ts';
import { argon2Hasher, type PasswordHasher } from './infra/passwords.ts';
import { systemRandom, type Random } from './infra/random.ts';
import { openPostgres, openSqlite, type Store } from './store/db.ts';
import { migrateToLatest } from './store/migrations/index.ts';
import { PARLEY_VERSION } from './version.ts';

export interface ContextOverrides {
  store?: Store;
  bus?: EventBus;
  clock?: Clock;
  files?: FileStore;
  images?: Images;
  http?: HttpClient;
  passwords?: PasswordHasher;
  mailer?: Mailer;
  random?: Random;
  log?: Logger;
  /** Skip migrations (the store is already at the latest schema). */
  migrated?: boolean;
}

export function openStore(config: Config): Store {
  return config.databaseUrl
    ? openPostgres({ url: config.databaseUrl })
    : openSqlite({ source: config.sqlitePath, synchronous: config.sqliteSynchronous });
}

export async function createContext(
  config: Config,
  overrides: ContextOverrides = {},
): Promise<AppContext> {
  const log =
    overrides.log ??
    pino({
      level: config.logLevel,
      redact: ['req.headers.authorization', '*.password', '*.api_key'],
    });
  const store = overrides.store ?? openStore(config);
  if (!overrides.migrated) await migrateToLatest(store.db as never, store.dialect, store.schema);
  let bus = overrides.bus;
  if (!bus && config.redisUrl) {
    const redis = new RedisBus(config.redisUrl, config.redisChannel, log);
    await redis.whenReady();
    bus = redis;
  }
  bus ??= new LocalBus();
  const clock = overrides.clock ?? systemClock;
  const random = overrides.random ?? systemRandom;
  const ctx: AppContext = {
    config,
    store,
    db: store.db,
    bus,
    queues: new EventQueues({ config, clock, random, log, db: store.db }),
    clock,
    files: overrides.files ?? diskFileStore(config.uploadsDir),
    images: overrides.images ?? sharpImages(),
    http:
      overrides.http ??
      createHttpClient({
        allow: config.outgoingWebhookAllow,
        userAgent: `Parley/${PARLEY_VERSION}`,
      }),
    passwords: overrides.passwords ?? argon2Hasher(),
    mailer:
      overrides.mailer ??
      (config.smtp
        ? smtpMailer(config.smtp, log)
        : logFileMailer(join(config.dataDir, 'mail.log'))),
    random,
    log,
  };
  bus.subscribe((notices) => ctx.queues.deliver(notices));
  bus.onResumed(() => ctx.queues.checkCommitted());
  return ctx;
}

export async function closeContext(ctx: AppContext): Promise<void> {
  await ctx.queues.shutdown();
  await ctx.mailer.close?.();
  await ctx.bus.close();
  await ctx.http.close();
  await ctx.store.close();
}
