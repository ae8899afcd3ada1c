// Opens the database: embedded SQLite by default, PostgreSQL when a URL is given.
// One schema and one set of Kysely queries serve both.
import { mkdirSync, realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import {
  Kysely,
  PostgresDialect,
  sql,
  SqliteDialect,
  type PostgresPool,
  type Transaction,
} from 'kysely';
import pg from 'pg';
import {
  startBackgroundCheckpoints,
  type BackgroundCheckpoints,
  type CheckpointOptions,
} from './checkpoints.ts';
import type { DB } from './schema.ts';
import { watchOtherCommits } from './other-commits.ts';
import { keepForLife } from './sqlite-lifetime.ts';
import { reusingStatements } from './sqlite-statements.ts';
import { TableWrites, writeTarget } from './table-writes.ts';
import { WalSync } from './wal-sync.ts';

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
  /**
   * A number that changes whenever a users or realms row may have changed, by this process
   * or any other, so that those rows read earlier can be reused while it stays the same;
   * null when it cannot be had, and every read goes to the database. On PostgreSQL the
   * number is in the database (migration 0011), so it comes as a promise.
   */
  accountsVersion(): number | null | Promise<number | null>;
  /**
   * SQLite on a file only: WAL checkpoints move to a worker thread until close
   * (checkpoints.ts). A server calls it; a short command leaves SQLite's own.
   */
  checkpointInBackground?(options?: CheckpointOptions): void;
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
  const sqlite = keepForLife(new SQLite(opts.source));
  // SQLite follows a symbolic link to the database and keeps its -wal and -shm beside the
  // file it reaches; the syncs and checkpoints made outside it must find them there too.
  const file =
    typeof opts.source === 'string' && opts.source !== ':memory:'
      ? realpathSync(opts.source)
      : null;
  const synchronous = opts.synchronous ?? 'NORMAL';
  // FULL's sync at each commit is made outside SQLite, off the serving thread for group
  // commit's batches (wal-sync.ts); SQLite's NORMAL keeps the rest of FULL's syncs.
  const walSync = file !== null && synchronous === 'FULL' ? new WalSync(`${file}-wal`) : null;
  // Through exec: pragma() prepares a statement that is then dropped (sqlite-lifetime.ts).
  if (file !== null) sqlite.exec('PRAGMA journal_mode = WAL');
  sqlite.exec(`PRAGMA synchronous = ${walSync ? 'NORMAL' : synchronous}`);
  sqlite.exec('PRAGMA foreign_keys = ON');
  sqlite.exec('PRAGMA busy_timeout = 5000');
  // Group commit runs each change in a savepoint, and SQLite keeps the first copy of every
  // page a savepoint changes in a statement journal: in a temporary file by default, written
  // through the kernel on every send. In memory it holds a few pages per change; a send cost
  // 330-460 µs of CPU instead of 430-630 (docs/performance-history.md, session 9).
  sqlite.exec('PRAGMA temp_store = MEMORY');
  const writes = new TableWrites();
  const tracked = reusingStatements(sqlite, writes, walSync);
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: tracked }) });
  // This connection's own writes are counted as their statements are prepared; another
  // connection's commits (a command-line action, another process) are looked for.
  const otherCommits = watchOtherCommits(sqlite, file);
  let otherChanges = 0;
  // Looked for at most once per macrotask: the requests one turn of the event loop serves
  // are concurrent, so another process's commit during the turn may count as after them.
  let checkedThisTurn = false;
  const endTurn = (): void => {
    checkedThisTurn = false;
  };
  const checkOthers = (): void => {
    if (checkedThisTurn) return;
    checkedThisTurn = true;
    setImmediate(endTurn);
    if (otherCommits.look()) {
      otherChanges++;
      writes.noteOtherConnection();
    }
  };
  sqliteByAdapter.set(db.getExecutor().adapter, {
    sqlite,
    walSync,
    run(sql, parameters) {
      const stmt = tracked.prepare(sql);
      if (stmt.reader) return stmt.all(parameters) as unknown[];
      stmt.run(parameters);
      return [];
    },
    writeCount() {
      checkOthers();
      return writes.now();
    },
    unchangedSince: (at, tables) => writes.unchangedSince(at, tables),
    startReading: () => writes.startReading(),
    stopReading: (tables) => writes.stopReading(tables),
    noteRead: (tables) => writes.noteRead(tables),
  });
  let checkpoints: BackgroundCheckpoints | null = null;
  return {
    db,
    dialect: 'sqlite',
    sqlite,
    accountsVersion() {
      checkOthers();
      return tracked.accountWrites() + otherChanges;
    },
    ...(file !== null && {
      checkpointInBackground(options?: CheckpointOptions) {
        checkpoints ??= startBackgroundCheckpoints(sqlite, file, synchronous, options);
      },
    }),
    async close() {
      await checkpoints?.stop();
      await db.destroy();
      // Kysely closes the connection only if a query of its own opened its driver.
      if (sqlite.open) sqlite.close();
      otherCommits.close();
      walSync?.close();
    },
  };
}

/** A SQLite connection as compiled queries use it (compiled.ts). */
export interface SqliteAtOnce {
  /** Runs a statement now; its rows, none for a statement without RETURNING. */
  run(sql: string, parameters: readonly unknown[]): unknown[];
  /** Advances with every write, rollback and other connection's commit (table-writes.ts). */
  writeCount(): number;
  /** Whether none of these tables may have been written since the count was `at`. */
  unchangedSince(at: number, tables: readonly string[]): boolean;
  /** Gathers the tables every statement names from now on (table-writes.ts). */
  startReading(): Set<string>;
  stopReading(tables: Set<string>): void;
  /** Tables read without running a statement (a kept read given again). */
  noteRead(tables: readonly string[]): void;
}

/** Each SQLite Kysely instance's connection, by the adapter it shares with its transactions. */
const sqliteByAdapter = new WeakMap<
  object,
  SqliteAtOnce & { sqlite: SQLite.Database; walSync: WalSync | null }
>();

/**
 * The SQLite connection behind db when a query may run on it at once, or null when it has
 * to wait its turn through Kysely: on PostgreSQL, and outside a transaction while one is
 * open (a read then would see the open transaction's writes). Kysely's way to the
 * connection (its executor, the connection's mutex, two or three promise turns) cost 2.5 µs
 * a query against 1 µs for running a simple one (docs/performance-history.md, session 15);
 * better-sqlite3 runs every statement synchronously, so a query run here holds the
 * connection for no longer than through Kysely.
 */
export function sqliteAtOnce(db: Q): SqliteAtOnce | null {
  const known = sqliteByAdapter.get(db.getExecutor().adapter);
  if (!known || (!db.isTransaction && known.sqlite.inTransaction)) return null;
  return known;
}

/**
 * The WAL's syncs behind db when commits are synced outside SQLite (a file database with
 * synchronous FULL, wal-sync.ts); null otherwise.
 */
export function walSyncOf(db: Q): WalSync | null {
  return sqliteByAdapter.get(db.getExecutor().adapter)?.walSync ?? null;
}

/** The SQLite connection behind db, transaction or not; null on PostgreSQL. */
export function sqliteConnection(db: Q): SqliteAtOnce | null {
  return sqliteByAdapter.get(db.getExecutor().adapter) ?? null;
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
  const writes = new TableWrites();
  const db = new Kysely<DB>({
    dialect: new PostgresDialect({ pool: firstResultPool(pool, writes) }),
  });
  // The requests one turn of the event loop serves are concurrent, so they share one read of
  // the counter, as SQLite's data_version is read once a turn. Read before the rows it
  // vouches for: a change committed in between makes the kept rows look older, never newer.
  let thisTurn: Promise<number | null> | null = null;
  let lastRead: { version: number | null; at: number } = { version: null, at: 0 };
  const readCounter = (): Promise<number | null> => {
    const started = performance.now();
    return pool.query<{ n: number }>('select n from accounts_version').then(
      (result) => {
        const version = result.rows.length === 1 ? result.rows[0].n : null;
        if (started >= lastRead.at) lastRead = { version, at: started };
        return version;
      },
      // Before the migration, or with no connection to be had: the rows are read instead.
      () => null,
    );
  };
  const accountsVersion = (): Promise<number | null> => {
    if (thisTurn === null) {
      thisTurn = readCounter();
      setImmediate(() => (thisTurn = null));
    }
    return thisTurn;
  };
  const knownVersion = (): number | null => {
    // Keeps the counter read once a turn even where no request asks for it (a worker).
    void accountsVersion();
    return performance.now() - lastRead.at <= KNOWN_VERSION_MS ? lastRead.version : null;
  };
  postgresByAdapter.set(db.getExecutor().adapter, {
    writes,
    versionFor: (q) =>
      versionsInTransaction.has(q) ? versionsInTransaction.get(q)! : knownVersion(),
  });
  return {
    db,
    dialect: 'postgres',
    sqlite: null,
    schema: opts.schema,
    accountsVersion,
    async close() {
      await db.destroy();
    },
  };
}

/** How long a read of the counter vouches for kept reads on PostgreSQL. */
const KNOWN_VERSION_MS = 100;

/** What cached reads on PostgreSQL need to know (compiled.ts). */
export interface PostgresReads {
  /** This process's writes, pending while their transactions are open. */
  writes: TableWrites;
  /**
   * The counter of migrations 0011 and 0012 that cached reads on q are checked against:
   * inside a transaction that read it itself (readVersionInTransaction), that read; else the
   * counter as last read by this process, if that read started within the last 100 ms
   * (under load, in this turn of the event loop or the last); null otherwise. Never a new
   * read to wait for: a transaction holding a pool connection that waited for another
   * connection could wait for ever.
   */
  versionFor(q: Q): number | null;
}

const postgresByAdapter = new WeakMap<object, PostgresReads>();

/** The counter as read inside a transaction, by the transaction's Kysely instance. */
const versionsInTransaction = new WeakMap<object, number | null>();

/**
 * PostgreSQL only: read the counter inside this transaction, and check its cached reads
 * against that read rather than the process's. The process's may be up to 100 ms old: a
 * change that has waited for its realm's turn (store/realms.ts lockRealmChanges) would read
 * rows another process committed in the meantime as they were before, and so would a
 * register snapshot, which would then drop the events of changes it does not show.
 */
export async function readVersionInTransaction(trx: Q): Promise<number | null> {
  if (!isPostgres(trx)) return null;
  const { rows } = await sql<{ n: number }>`select n from accounts_version`.execute(trx);
  const version = rows.length === 1 ? rows[0].n : null;
  versionsInTransaction.set(trx, version);
  return version;
}

/** Whether db is on PostgreSQL (for the few statements written for one database). */
export function isPostgres(db: Q): boolean {
  return postgresByAdapter.has(db.getExecutor().adapter);
}

/**
 * A PostgreSQL transaction lost a race it can win when run again: a unique index already
 * holds its row (unique_violation), or it was chosen to break a deadlock (deadlock_detected).
 */
export function isLostPostgresRace(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === '40P01';
}

/** The PostgreSQL bookkeeping behind db, or null on SQLite. */
export function postgresReads(db: Q): PostgresReads | null {
  return postgresByAdapter.get(db.getExecutor().adapter) ?? null;
}

/**
 * PostgreSQL: the accounts counter as this process last read it, by a read that started
 * before now (within the last 100 ms), or null. Whatever is read after this was committed
 * no earlier than that reading: a counter read later that differs means a change came since.
 */
export function knownAccountsVersion(db: Q): number | null {
  return postgresReads(db)?.versionFor(db) ?? null;
}

const TRANSACTION_START = /^\s*(?:begin|start\s+transaction)\b/i;
const TRANSACTION_END = /(?:^|;)\s*(?:commit|rollback|end|abort)\s*;?\s*$/i;
const ROLLBACK_TO = /^\s*rollback\s+to\b/i;
const NOT_WRITING = /^\s*(?:select|savepoint|release|show|set|rollback\s+to)\b/i;
const WRITING_WORD = /\b(?:insert|update|delete|merge|truncate)\b/i;

/**
 * The tables one pool connection's open transaction has written, pending in TableWrites
 * until it ends (a statement outside a transaction is one of its own).
 */
export class PostgresTransactionWrites {
  private open = false;
  private readonly written = new Set<string | undefined>();

  constructor(private readonly writes: TableWrites) {}

  /** A statement is sent; whether its answer ends the transaction. */
  starting(text: string): boolean {
    if (TRANSACTION_START.test(text)) this.open = true;
    if (ROLLBACK_TO.test(text)) this.writes.noteRollback();
    if (!this.isRead(text)) {
      const table = writeTarget(text);
      if (!this.written.has(table)) {
        this.written.add(table);
        this.writes.startWriting(table);
      }
    }
    return !this.open || TRANSACTION_END.test(text);
  }

  private isRead(text: string): boolean {
    if (TRANSACTION_START.test(text) || TRANSACTION_END.test(text)) {
      // `<statement>; commit` (commitOnPostgres) writes what its statement writes.
      const first = text.split(';')[0];
      return first === text || this.isRead(first);
    }
    if (NOT_WRITING.test(text)) return true;
    return /^\s*with\b/i.test(text) && !WRITING_WORD.test(text);
  }

  /** The transaction (or the statement of its own) is over, committed or not. */
  ended(): void {
    for (const table of this.written) this.writes.endWriting(table);
    this.written.clear();
    this.open = false;
  }
}

/**
 * The pool Kysely is given: a text of several statements without parameters (PostgreSQL's
 * simple protocol) answers with its first statement's rows, where pg gives one result per
 * statement and Kysely would find no rows. commitOnPostgres sends its last statement and
 * the COMMIT that way, in one round trip.
 */
function firstResultPool(pool: pg.Pool, writes: TableWrites): PostgresPool {
  return {
    async connect() {
      const client = await pool.connect();
      const tx = new PostgresTransactionWrites(writes);
      return {
        query: ((text: unknown, parameters?: readonly unknown[]) => {
          if (typeof text !== 'string') return client.query(text as never);
          const ends = tx.starting(text);
          return client.query(text, parameters as unknown[]).then(
            (r: pg.QueryResult | pg.QueryResult[]) => {
              if (ends) tx.ended();
              return Array.isArray(r) ? r[0] : r;
            },
            (err: unknown) => {
              if (ends) tx.ended();
              throw err;
            },
          );
        }) as never,
        release: () => {
          tx.ended();
          client.release();
        },
      };
    },
    end: () => pool.end(),
  };
}

/**
 * A transaction on PostgreSQL whose last statement goes with its COMMIT. `finish`, asked
 * after `body`, gives a text of one statement without parameters (or null); it is sent as
 * `<statement>; commit` in one round trip, and its rows are returned. A row lock that
 * statement takes is then held for the commit only, not for the commit plus the wait until
 * this process reads the statement's answer and sends COMMIT, which under load is most of
 * it (the realm's commit sequence: every evented change of the realm waits for that lock).
 */
export async function commitOnPostgres<T>(
  db: Db,
  body: (trx: Tx) => Promise<T>,
  finish: () => string | null,
): Promise<{ value: T; rows: unknown[] }> {
  return db.connection().execute(async (conn) => {
    await sql`begin`.execute(conn);
    try {
      // The connection is this transaction's alone until COMMIT, as a Transaction's is;
      // nothing here starts or ends transactions of its own.
      const value = await body(conn as unknown as Tx);
      const last = finish();
      const done = await sql.raw(last === null ? 'commit' : `${last}; commit`).execute(conn);
      return { value, rows: last === null ? [] : done.rows };
    } catch (err) {
      // After a failed statement PostgreSQL ignores everything but ROLLBACK; after a failed
      // COMMIT there is nothing left to roll back, and the ROLLBACK only warns.
      await sql`rollback`.execute(conn).catch(() => undefined);
      throw err;
    }
  });
}
