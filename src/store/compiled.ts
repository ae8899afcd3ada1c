// Hot queries of a fixed shape, built and compiled once per database and reused.
//
// Building a Kysely query and compiling it to SQL costs more than running a simple indexed
// lookup on SQLite (about 5 µs against 2 µs here), and the queries every request runs
// (authentication, the caller's own rows) have the same SQL text each time: only their
// parameter values change. A query declared with `compiledQuery` is built once with
// placeholder values, compiled, and afterwards run with the placeholders swapped for the
// call's arguments. On SQLite it runs on the connection at once when no other transaction
// holds it (db.ts sqliteAtOnce); otherwise through Kysely's executor, which takes its turn
// on the connection and joins the caller's transaction when given one.
//
// A read declared with `cachedQuery` keeps its rows, frozen, by its arguments, and gives them
// again while no table it reads may have been written by anyone (table-writes.ts): the
// channel, subscriptions, recipients, groups and muting rules a send checks are read far
// more often than they change. On PostgreSQL other processes' writes are seen through the
// accounts counter (migrations 0011 and 0012), so a read of a table the counter does not
// follow is read afresh each time there.
//
// The build function must use its arguments only as values (in where, set, values): it runs
// once, with placeholders, so any logic on an argument would be frozen at that first call.
// Lists (`in`) change the SQL text with their length and are not for this helper.
import type { CompiledQuery, Compilable, Kysely } from 'kysely';
import { postgresReads, sqliteAtOnce } from './db.ts';
import { READ_VERSION_TABLES } from './migrations/0012_read_versions.ts';
import { GROUP_READ_VERSION_TABLES } from './migrations/0015_group_read_version.ts';
import { tablesRead, writeTarget } from './table-writes.ts';
import type { DB } from './schema.ts';

/** Stands for the build function's argument at this position in the compiled parameters. */
class Placeholder {
  constructor(readonly position: number) {}
}

type Db = Kysely<DB>;

/** A query compiled once, and how a call's arguments become its parameters. */
interface Compiled<R> {
  query: CompiledQuery<R>;
  /**
   * The parameters are the call's arguments themselves, in order (most INSERTs and look-ups
   * by key): they are handed on as they are. Mapped one by one, the 600 parameters of each
   * 200-row INSERT of a send's delivery rows took about 450 instructions a row
   * (docs/performance.md, session 58).
   */
  direct: boolean;
}

export interface CompiledQueryRunner<A extends unknown[], R> {
  /** Every row. */
  all(db: Db, ...args: A): Promise<R[]>;
  /** The first row, if any. */
  first(db: Db, ...args: A): Promise<R | undefined>;
}

/**
 * Kept reads of one query per database: past this many, or past this many rows in all, all
 * are dropped and kept afresh. The number alone let a query keyed finely whose reads are
 * large (a channel's alert words kept by sender and channel) hold gigabytes; with the rows
 * bound a query holds at most about as many rows as an organization of 250,000 users has.
 * Exported for tests, which lower it.
 */
export const CACHED_READ_LIMITS = { reads: 10_000, rows: 250_000 };

/**
 * The tables whose every change advances PostgreSQL's counter (migrations 0011, 0012, 0015):
 * a cached read of other tables is read afresh each time there.
 */
const POSTGRES_COUNTED = new Set<string>([
  'users',
  'realms',
  ...READ_VERSION_TABLES,
  ...GROUP_READ_VERSION_TABLES,
]);

interface KeptRead {
  /** The write count (table-writes.ts) when the read was sent. */
  at: number;
  /** On PostgreSQL, the counter the read was made under. */
  version: number | null;
  rows: readonly unknown[];
}

/** One query's kept reads on one database, within CACHED_READ_LIMITS. */
class KeptReads {
  private readonly byKey = new Map<unknown, KeptRead>();
  private rows = 0;

  get(key: unknown): KeptRead | undefined {
    return this.byKey.get(key);
  }

  set(key: unknown, read: KeptRead): void {
    const old = this.byKey.get(key);
    if (old) {
      this.byKey.delete(key);
      this.rows -= old.rows.length;
    }
    // A read larger than the bound is given, not kept.
    if (read.rows.length > CACHED_READ_LIMITS.rows) return;
    if (
      this.byKey.size >= CACHED_READ_LIMITS.reads ||
      this.rows + read.rows.length > CACHED_READ_LIMITS.rows
    ) {
      this.byKey.clear();
      this.rows = 0;
    }
    this.byKey.set(key, read);
    this.rows += read.rows.length;
  }
}

/** A cached read's rows are shared by every caller, so they are frozen and typed so. */
export interface CachedQueryRunner<A extends unknown[], R> {
  all(db: Db, ...args: A): Promise<ReadonlyArray<Readonly<R>>>;
  first(db: Db, ...args: A): Promise<Readonly<R> | undefined>;
}

export function compiledQuery<A extends unknown[], R>(
  arity: A['length'],
  build: (db: Db, ...args: A) => Compilable<R>,
): CompiledQueryRunner<A, R> {
  return runnerOf(arity, build, false);
}

export function cachedQuery<A extends unknown[], R>(
  arity: A['length'],
  build: (db: Db, ...args: A) => Compilable<R>,
): CachedQueryRunner<A, R> {
  return runnerOf(arity, build, true);
}

function runnerOf<A extends unknown[], R>(
  arity: A['length'],
  build: (db: Db, ...args: A) => Compilable<R>,
  cached: boolean,
): CompiledQueryRunner<A, R> {
  // One compiled form per dialect adapter: a database and its transactions share one adapter,
  // and a WeakMap lets closed databases (tests open many) go.
  const compiledByAdapter = new WeakMap<object, Compiled<R>>();
  const compiledFor = (db: Db): Compiled<R> => {
    const adapter = db.getExecutor().adapter;
    let compiled = compiledByAdapter.get(adapter);
    if (!compiled) {
      const placeholders = Array.from({ length: arity }, (_, i) => new Placeholder(i));
      const query = build(db, ...(placeholders as unknown as A)).compile();
      const used = new Set(
        query.parameters.filter((p) => p instanceof Placeholder).map((p) => p.position),
      );
      // A placeholder the SQL does not carry was used as a value in the build's own logic.
      if (used.size !== arity) throw new Error('compiledQuery: every argument must be a value');
      const direct =
        query.parameters.length === arity &&
        query.parameters.every((p, i) => p instanceof Placeholder && p.position === i);
      compiled = { query, direct };
      compiledByAdapter.set(adapter, compiled);
    }
    return compiled;
  };
  let readTables: string[] | undefined;
  let coveredOnPostgres = false;
  const keptByAdapter = new WeakMap<object, KeptReads>();
  const keptFor = (db: Db): KeptReads => {
    const adapter = db.getExecutor().adapter;
    let kept = keptByAdapter.get(adapter);
    if (!kept) keptByAdapter.set(adapter, (kept = new KeptReads()));
    return kept;
  };
  const run = async (db: Db, args: A): Promise<R[]> => {
    const { query, direct } = compiledFor(db);
    const parameters = direct
      ? args
      : query.parameters.map((p) => (p instanceof Placeholder ? args[p.position] : p));
    const conn = sqliteAtOnce(db);
    const fresh = async (): Promise<R[]> =>
      conn
        ? (conn.run(query.sql, parameters) as R[])
        : (await db.executeQuery<R>({ ...query, parameters })).rows;
    if (!cached) return fresh();
    if (!readTables) {
      if (writeTarget(query.sql) !== undefined || !/^\s*(select|with)\b/i.test(query.sql))
        throw new Error('compiledQuery: only a read can be cached');
      readTables = tablesRead(query.sql);
      coveredOnPostgres = readTables.every((t) => POSTGRES_COUNTED.has(t));
    }
    const key = arity === 1 ? args[0] : JSON.stringify(args);
    if (conn) {
      const kept = keptFor(db);
      const at = conn.writeCount();
      const hit = kept.get(key);
      if (hit && conn.unchangedSince(hit.at, readTables)) {
        conn.noteRead(readTables);
        return hit.rows as R[];
      }
      const rows = frozen(await fresh());
      kept.set(key, { at, version: null, rows });
      return rows;
    }
    const pg = coveredOnPostgres ? postgresReads(db) : null;
    const version = pg?.versionFor(db) ?? null;
    if (!pg || version === null) return frozen(await fresh());
    const kept = keptFor(db);
    const at = pg.writes.now();
    const hit = kept.get(key);
    if (hit && hit.version === version && pg.writes.unchangedSince(hit.at, readTables))
      return hit.rows as R[];
    const rows = frozen(await fresh());
    // Kept only if no write of this process reached the tables while the read was out.
    if (pg.writes.unchangedSince(at, readTables)) kept.set(key, { at, version, rows });
    return rows;
  };
  return {
    all: (db, ...args) => run(db, args),
    first: async (db, ...args) => (await run(db, args))[0],
  };
}

function frozen<R>(rows: R[]): R[] {
  for (const row of rows) Object.freeze(row);
  return Object.freeze(rows) as R[];
}
