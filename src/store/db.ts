// Opens the database: embedded SQLite by default, PostgreSQL when a URL is given.
// One schema and one set of Kysely queries serve both.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import {
  Kysely,
  PostgresDialect,
  SqliteDialect,
  type SqliteDatabase,
  type Transaction,
} from 'kysely';
import pg from 'pg';
import type { DB } from './schema.ts';

export type Dialect = 'sqlite' | 'postgres';
export type Db = Kysely<DB>;
export type Tx = Transaction<DB>;
/** A query function takes either the database or an open transaction. */
export type Q = Kysely<DB>;

export interface Store {
  db: Db;
  dialect: Dialect;
  /** The raw SQLite handle (for snapshots, integrity checks and backups); null on PostgreSQL. */
  sqlite: SQLite.Database | null;
  /** The PostgreSQL schema in use when not the default one. */
  schema?: string;
  close(): Promise<void>;
}

export interface SqliteOptions {
  /** A file path, ':memory:', or a serialized database image to open in memory. */
  source: string | Buffer;
  synchronous?: 'OFF' | 'NORMAL' | 'FULL';
}

// pg returns int8 (COUNT, SUM) as strings; every id and count here fits a JS number.
pg.types.setTypeParser(20, (v: string) => Number(v));

export function openSqlite(opts: SqliteOptions): Store {
  if (typeof opts.source === 'string' && opts.source !== ':memory:') {
    mkdirSync(dirname(opts.source), { recursive: true });
  }
  const sqlite = new SQLite(opts.source);
  if (typeof opts.source === 'string' && opts.source !== ':memory:')
    sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`synchronous = ${opts.synchronous ?? 'NORMAL'}`);
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  const db = new Kysely<DB>({
    dialect: new SqliteDialect({ database: reusingStatements(sqlite) }),
  });
  return {
    db,
    dialect: 'sqlite',
    sqlite,
    async close() {
      await db.destroy();
    },
  };
}

/** Distinct SQL texts whose prepared statements are kept; the builders produce a few hundred. */
const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely's SQLite driver prepares every query it runs again, and preparing costs more than
 * most of Parley's queries take to run. The SQL text of a query builder is the same at each
 * call, so prepared statements are kept by their text (least recently used go first) and
 * reused: better-sqlite3 resets a statement after all() and run(), and binds the parameters
 * afresh on each call.
 */
function reusingStatements(sqlite: SQLite.Database): SqliteDatabase {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      const known = statements.get(sql);
      // A statement still being iterated (a streamed query) cannot run again meanwhile.
      if (known && !known.busy) {
        statements.delete(sql);
        statements.set(sql, known);
        return known;
      }
      const stmt = sqlite.prepare(sql);
      if (known) return stmt;
      if (statements.size >= STATEMENT_CACHE_SIZE) {
        statements.delete(statements.keys().next().value!);
      }
      statements.set(sql, stmt);
      return stmt;
    },
  };
}

export interface PostgresOptions {
  url: string;
  /** A schema to work in (tests use one per run); created if missing. */
  schema?: string;
  max?: number;
}

export function openPostgres(opts: PostgresOptions): Store {
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.max ?? 10,
    ...(opts.schema ? { options: `-c search_path=${opts.schema}` } : {}),
  });
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: 'postgres',
    sqlite: null,
    schema: opts.schema,
    async close() {
      await db.destroy();
    },
  };
}
