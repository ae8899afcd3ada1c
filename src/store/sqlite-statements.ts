// SQLite's prepared statements as Kysely's driver runs them (openSqlite, db.ts): kept by
// their SQL text and reused, given their parameters as arguments, their rows made into
// objects here, each write counted for the kept reads, and each commit told to WalSync.
import type SQLite from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';
import { FREEING_SQLITE_OBJECTS_ABORTS, keepForLife } from './sqlite-lifetime.ts';
import { writeTarget, type TableWrites } from './table-writes.ts';
import type { WalSync } from './wal-sync.ts';

/**
 * Whether a writing statement may change a users or realms row as their readers see it: any
 * whose target table is not recognised counts. No other table's write reaches them (no
 * triggers, and no foreign key of theirs acts on delete).
 */
export function mayWriteAccounts(sql: string): boolean {
  const table = writeTarget(sql);
  return table === undefined || table === 'users' || table === 'realms';
}

/**
 * Distinct SQL texts whose prepared statements are kept; the builders produce a few hundred.
 * Where a freed statement would abort the process, none is let go (sqlite-lifetime.ts).
 */
const STATEMENT_CACHE_SIZE = FREEING_SQLITE_OBJECTS_ABORTS ? Infinity : 500;

/** What Kysely's SQLite driver calls on a prepared statement, and the cache checks. */
type PreparedStatement = ReturnType<SqliteDatabase['prepare']> & { readonly busy: boolean };

/**
 * Most parameters a statement is given as the call's own arguments; beyond them (long `in`
 * lists), as one array, since every argument takes a slot on the stack.
 */
const MAX_SPREAD_PARAMETERS = 4096;

/**
 * Whether every parameter binds the same as an argument as inside one array: better-sqlite3
 * takes an array argument as more parameters and a plain object as named ones, where inside
 * an array either is refused. A value binds alike unless it is such an object (a buffer is
 * bound as a blob either way).
 */
function bindsAlike(parameters: readonly unknown[]): boolean {
  for (let i = 0; i < parameters.length; i++) {
    const p = parameters[i];
    if (typeof p === 'object' && p !== null && !ArrayBuffer.isView(p)) return false;
  }
  return true;
}

/**
 * A statement as Kysely's driver calls it, given its parameters as separate arguments:
 * better-sqlite3 reads an array's elements one by one through V8's object API, about 400
 * instructions each, against a few for an argument (200-row INSERTs of 600 parameters: 35 →
 * 24 µs each; docs/performance.md, session 53).
 *
 * A reading statement's rows are fetched as arrays and made into objects here.
 * better-sqlite3 builds each row object through V8's API, one property at a time; building
 * them in JavaScript, the columns always in one order, was 1.1 to 2.7 times as fast on the
 * same rows (1,000 users rows of 17 columns: 7.6 → 2.8 ms), and every row of a statement
 * then has one object shape. A duplicated column name keeps its last value, as before.
 */
function bindingArguments(stmt: SQLite.Statement): PreparedStatement {
  const spread = (parameters: readonly unknown[]): readonly unknown[] =>
    parameters.length <= MAX_SPREAD_PARAMETERS && bindsAlike(parameters)
      ? parameters
      : [parameters];
  const run: PreparedStatement['run'] = (parameters) => stmt.run(...spread(parameters));
  const iterate: PreparedStatement['iterate'] = (parameters) =>
    keepForLife(stmt.iterate(...spread(parameters)));
  if (!stmt.reader) {
    return {
      reader: false,
      get busy() {
        return stmt.busy;
      },
      all: (parameters) => stmt.all(...spread(parameters)),
      run,
      iterate,
    };
  }
  const columns = stmt.columns().map((c) => c.name);
  const width = columns.length;
  return {
    reader: true,
    get busy() {
      return stmt.busy;
    },
    all(parameters) {
      stmt.raw(true);
      let rows: unknown[][];
      try {
        rows = stmt.all(...spread(parameters)) as unknown[][];
      } finally {
        stmt.raw(false);
      }
      const out: Record<string, unknown>[] = new Array(rows.length);
      for (let i = 0; i < rows.length; i++) {
        const values = rows[i];
        const row: Record<string, unknown> = {};
        for (let c = 0; c < width; c++) row[columns[c]] = values[c];
        out[i] = row;
      }
      return out;
    },
    run,
    iterate,
  };
}

/**
 * Kysely's SQLite driver prepares every query it runs again, and preparing costs more than
 * most of Parley's queries take to run. The SQL text of a query builder is the same at each
 * call, so prepared statements are kept by their text (least recently used go first) and
 * reused: better-sqlite3 resets a statement after all() and run(), and binds the parameters
 * afresh on each call.
 */
export function reusingStatements(
  sqlite: SQLite.Database,
  writes: TableWrites,
  walSync: WalSync | null,
): SqliteDatabase & { accountWrites(): number } {
  const statements = new Map<string, KeptStatement>();
  // Kysely prepares each statement it runs, so counting the writing ones here counts every
  // write made through it. Queries wait for an open transaction to end (one connection, one
  // holder), so a read never sees a write that is later rolled back.
  let accountWrites = 0;
  const count = (stmt: SQLite.Statement): void => {
    if (!stmt.readonly && mayWriteAccounts(stmt.source)) accountWrites++;
    writes.noteStatement(stmt.source, stmt.readonly);
  };
  return {
    close: () => sqlite.close(),
    accountWrites: () => accountWrites,
    prepare(sql: string) {
      const known = statements.get(sql);
      if (known) {
        statements.delete(sql);
        statements.set(sql, known);
        // A statement still being iterated (a streamed query) cannot run again meanwhile.
        const free = known.stmt.busy ? known.spares?.find((s) => !s.stmt.busy) : known;
        if (free) {
          count(free.stmt);
          return free.prepared;
        }
      }
      const stmt = keepForLife(sqlite.prepare(sql));
      count(stmt);
      const reading = bindingArguments(stmt);
      const fresh: KeptStatement = {
        stmt,
        prepared: walSync ? syncingCommits(stmt, reading, sqlite, walSync) : reading,
      };
      if (known) {
        (known.spares ??= []).push(fresh);
        return fresh.prepared;
      }
      if (statements.size >= STATEMENT_CACHE_SIZE) {
        statements.delete(statements.keys().next().value!);
      }
      statements.set(sql, fresh);
      return fresh.prepared;
    },
  };
}

/**
 * A statement that tells walSync what it did to the transaction: whether it began one,
 * wrote inside one, or ended one or wrote on its own, which commits.
 */
function syncingCommits(
  stmt: SQLite.Statement,
  prepared: PreparedStatement,
  sqlite: SQLite.Database,
  walSync: WalSync,
): PreparedStatement {
  const readonly = stmt.readonly;
  // Whether the statement opened, committed or left the transaction is known only after it.
  const synced = <T>(statement: () => T): T => {
    const wasOpen = sqlite.inTransaction;
    try {
      return statement();
    } finally {
      walSync.afterStatement(readonly, wasOpen, sqlite.inTransaction);
    }
  };
  return {
    reader: prepared.reader,
    get busy() {
      return prepared.busy;
    },
    all: (parameters) => synced(() => prepared.all(parameters)),
    run: (parameters) => synced(() => prepared.run(parameters)),
    // Only reads are streamed (Kysely's stream()); they commit nothing.
    iterate: (parameters) => prepared.iterate(parameters),
  };
}

/** A prepared statement kept by its SQL text, with others for when it is busy. */
interface KeptStatement {
  stmt: SQLite.Statement;
  prepared: PreparedStatement;
  spares?: KeptStatement[];
}
