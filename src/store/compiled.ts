// Hot queries of a fixed shape, built and compiled once per database and reused.
//
// Building a Kysely query and compiling it to SQL costs more than running a simple indexed
// lookup on SQLite (about 5 µs against 2 µs here), and the queries every request runs
// (authentication, the caller's own rows) have the same SQL text each time: only their
// parameter values change. A query declared with `compiledQuery` is built once with
// placeholder values, compiled, and afterwards run with the placeholders swapped for the
// call's arguments. On SQLite it runs on the connection at once when no other transaction
// holds it (db.ts runOnSqliteAtOnce); otherwise through Kysely's executor, which takes its
// turn on the connection and joins the caller's transaction when given one.
//
// The build function must use its arguments only as values (in where, set, values): it runs
// once, with placeholders, so any logic on an argument would be frozen at that first call.
// Lists (`in`) change the SQL text with their length and are not for this helper.
import type { CompiledQuery, Compilable, Kysely } from 'kysely';
import { runOnSqliteAtOnce } from './db.ts';
import type { DB } from './schema.ts';

/** Stands for the build function's argument at this position in the compiled parameters. */
class Placeholder {
  constructor(readonly position: number) {}
}

type Db = Kysely<DB>;

export interface CompiledQueryRunner<A extends unknown[], R> {
  /** Every row. */
  all(db: Db, ...args: A): Promise<R[]>;
  /** The first row, if any. */
  first(db: Db, ...args: A): Promise<R | undefined>;
}

export function compiledQuery<A extends unknown[], R>(
  arity: A['length'],
  build: (db: Db, ...args: A) => Compilable<R>,
): CompiledQueryRunner<A, R> {
  // One compiled form per dialect adapter: a database and its transactions share one adapter,
  // and a WeakMap lets closed databases (tests open many) go.
  const compiledByAdapter = new WeakMap<object, CompiledQuery<R>>();
  const compiledFor = (db: Db): CompiledQuery<R> => {
    const adapter = db.getExecutor().adapter;
    let compiled = compiledByAdapter.get(adapter);
    if (!compiled) {
      const placeholders = Array.from({ length: arity }, (_, i) => new Placeholder(i));
      compiled = build(db, ...(placeholders as unknown as A)).compile();
      const used = new Set(
        compiled.parameters.filter((p) => p instanceof Placeholder).map((p) => p.position),
      );
      // A placeholder the SQL does not carry was used as a value in the build's own logic.
      if (used.size !== arity) throw new Error('compiledQuery: every argument must be a value');
      compiledByAdapter.set(adapter, compiled);
    }
    return compiled;
  };
  const run = async (db: Db, args: A): Promise<R[]> => {
    const compiled = compiledFor(db);
    const parameters = compiled.parameters.map((p) =>
      p instanceof Placeholder ? args[p.position] : p,
    );
    const rows = runOnSqliteAtOnce(db, compiled.sql, parameters) as R[] | null;
    return rows ?? (await db.executeQuery<R>({ ...compiled, parameters })).rows;
  };
  return {
    all: (db, ...args) => run(db, args),
    first: async (db, ...args) => (await run(db, args))[0],
  };
}
