// buildTestApp(): a fresh app on a fresh copy of the fixture organization, on SQLite in
// memory (a snapshot taken once per process and reopened per test) or, when
// PARLEY_TEST_DATABASE_URL is set, on PostgreSQL in a schema of this process's own.
import { after } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import type { AppContext } from '../../src/context.ts';
import { LocalBus, type EventBus } from '../../src/events/bus.ts';
import { memoryFileStore, type FileStore } from '../../src/infra/files.ts';
import { memoryMailer, type Mailer } from '../../src/infra/mailer.ts';
import { argon2Hasher } from '../../src/infra/passwords.ts';
import { closeContext, createContext } from '../../src/server.ts';
import { openPostgres, openSqlite, type Store } from '../../src/store/db.ts';
import { migrateToLatest } from '../../src/store/migrations/index.ts';
import { seedFixture, type Fixture } from './fixture.ts';
import { listTables } from './db-snapshot.ts';
import { Client, type Credentials } from './client.ts';

/** Cheap argon2 parameters: tests hash many passwords. */
export const testPasswords = argon2Hasher({ memoryCost: 1024, timeCost: 1 });

export const TEST_DATABASE_URL = process.env.PARLEY_TEST_DATABASE_URL || null;
export const TEST_REDIS_URL = process.env.PARLEY_TEST_REDIS_URL || null;
/** The `skip` of a test that needs PostgreSQL: false when there is one to test with. */
export const POSTGRES_SKIP: false | string = TEST_DATABASE_URL
  ? false
  : 'PARLEY_TEST_DATABASE_URL is not set';

export function testConfig(overrides: Partial<Config> = {}): Config {
  const base = loadConfig({
    PARLEY_EXTERNAL_URL: 'http://parley.test',
    PARLEY_LOG_LEVEL: 'silent',
    PARLEY_RATE_LIMIT: 'off',
  });
  return {
    ...base,
    sqlitePath: ':memory:',
    redisUrl: TEST_REDIS_URL,
    // Each test app has its own channel unless a test shares one between instances on purpose.
    redisChannel: `parley:test:${process.pid}:${Math.random().toString(36).slice(2)}`,
    // A process alone on its bus sees every commit's notice, so a short wait makes every test
    // a check that none goes missing: a false gap would drop its queues. (A message batch on
    // PostgreSQL may publish after a later commit of another change; 250 ms leaves it room.)
    eventGapWaitMs: 250,
    ...overrides,
  };
}

export interface TestApp {
  ctx: AppContext;
  app: FastifyInstance;
  fx: Fixture;
  /** A client acting as these credentials (or none). */
  as(who: Credentials | null): Client;
  close(): Promise<void>;
}

let sqliteSnapshot: { image: Buffer; fixture: Fixture } | null = null;
/** The schemas this process made, dropped when its tests end. */
const pgSchemasMade: string[] = [];
/** The schema's creation, shared by callers that arrive while it runs; cleared if it fails. */
let pgSchemaReady: Promise<string> | null = null;

/**
 * Held while a test process migrates its schema or drops its schemas. Kysely's migrator
 * reads every table of the database, each through pg_get_serial_sequence, which fails with
 * "schema ... does not exist" when another test file's schema is dropped during the read.
 * The lock is per session: a process that dies releases it.
 */
const PG_SCHEMA_LOCK = 'SELECT pg_advisory_lock(hashtext($1))';
const PG_SCHEMA_UNLOCK = 'SELECT pg_advisory_unlock(hashtext($1))';
const PG_SCHEMA_LOCK_NAME = 'parley test schemas';

async function withPgSchemaLock<T>(
  url: string,
  work: (admin: pg.Client) => Promise<T>,
): Promise<T> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(PG_SCHEMA_LOCK, [PG_SCHEMA_LOCK_NAME]);
    try {
      return await work(admin);
    } finally {
      await admin.query(PG_SCHEMA_UNLOCK, [PG_SCHEMA_LOCK_NAME]);
    }
  } finally {
    await admin.end();
  }
}

// Registered at load time so it belongs to the file's root test and runs once, at the end.
if (TEST_DATABASE_URL) {
  after(async () => {
    if (pgSchemasMade.length === 0) return;
    await withPgSchemaLock(TEST_DATABASE_URL!, async (admin) => {
      for (const schema of pgSchemasMade) {
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      }
    });
  });
}

async function freshSqliteStore(config: Config): Promise<{ store: Store; fixture: Fixture }> {
  if (!sqliteSnapshot) {
    const store = openSqlite({ source: ':memory:' });
    const ctx = await createContext(config, {
      store,
      passwords: testPasswords,
      bus: new LocalBus(),
    });
    const fixture = await seedFixture(ctx);
    sqliteSnapshot = { image: store.sqlite!.serialize(), fixture };
    await closeContext(ctx);
  }
  return {
    store: openSqlite({ source: sqliteSnapshot.image }),
    fixture: structuredClone(sqliteSnapshot.fixture),
  };
}

async function createPgSchema(url: string): Promise<string> {
  const schema = `parley_test_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
  await withPgSchemaLock(url, async (admin) => {
    await admin.query(`CREATE SCHEMA ${schema}`);
    pgSchemasMade.push(schema);
    const store = openPostgres({ url, schema, max: 2 });
    try {
      await migrateToLatest(store.db as never, 'postgres', schema);
    } finally {
      await store.close();
    }
  });
  return schema;
}

async function freshPostgresStore(
  config: Config,
  url: string,
): Promise<{ store: Store; fixture: Fixture }> {
  // A second caller while the schema is being made waits for it rather than using a
  // schema that does not exist yet; a failed attempt is not remembered.
  pgSchemaReady ??= createPgSchema(url).catch((err: unknown) => {
    pgSchemaReady = null;
    throw err;
  });
  const schema = await pgSchemaReady;
  const store = openPostgres({ url, schema, max: 5 });
  const tables = await listTables(store);
  if (tables.length > 0) {
    await sql
      .raw(`TRUNCATE ${tables.map((t) => `"${t}"`).join(', ')} RESTART IDENTITY CASCADE`)
      .execute(store.db);
  }
  const seedCtx = await createContext(config, {
    store,
    passwords: testPasswords,
    bus: new LocalBus(),
    migrated: true,
  });
  const fixture = await seedFixture(seedCtx);
  return { store, fixture };
}

export interface TestAppOptions {
  config?: Partial<Config>;
  bus?: EventBus;
  /**
   * Build a second server process on this app's database and fixture (as several
   * processes share one database behind a proxy). Its Redis channel defaults to the
   * other app's, so the two share one bus when PARLEY_TEST_REDIS_URL is set. Closing it
   * leaves the shared database open.
   */
  shareStoreWith?: TestApp;
  /** Uploaded files; the shared app's, else an empty store in memory (tests never write to ./data). */
  files?: FileStore;
  /** Outgoing email; an in-memory mailer by default. */
  mailer?: Mailer;
  /** Called before the app is ready, to add hooks. */
  prepare?: (app: FastifyInstance) => void;
}

export async function buildTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const shared = opts.shareStoreWith;
  const config = shared
    ? testConfig({ redisChannel: shared.ctx.config.redisChannel, ...opts.config })
    : testConfig(opts.config);
  const { store, fixture } = shared
    ? { store: shared.ctx.store, fixture: shared.fx }
    : TEST_DATABASE_URL
      ? await freshPostgresStore(config, TEST_DATABASE_URL)
      : await freshSqliteStore(config);
  const ctx = await createContext(config, {
    store,
    passwords: testPasswords,
    migrated: true,
    bus: opts.bus,
    files: opts.files ?? shared?.ctx.files ?? memoryFileStore(),
    // Tests never write to ./data: mail is kept in memory.
    mailer: opts.mailer ?? memoryMailer(),
    log: pino({ level: process.env.PARLEY_TEST_LOG_LEVEL || 'silent' }),
  });
  const app = await buildApp(ctx);
  // As src/main.ts does: parked long-polls are answered first, so closing does not wait for them.
  app.addHook('preClose', async () => ctx.queues.shutdown());
  opts.prepare?.(app);
  await app.ready();
  return {
    ctx,
    app,
    fx: fixture,
    as: (who) => new Client(app, who),
    async close() {
      await app.close();
      if (shared) {
        await ctx.queues.shutdown();
        await ctx.bus.close();
      } else {
        await closeContext(ctx);
      }
    },
  };
}
