// Values worked out from database rows (a route's whole answer, say) kept by a key and given
// again while no table their work read has been written since, by this process or another.
//
// Unlike a cached read (compiled.ts), whose tables are known from its one SQL text, the work
// here may run any number of queries, so the tables are gathered while it runs: every
// statement run meanwhile names its tables, and every kept read given again names its own
// (table-writes.ts). The work awaits, so other callers' statements run in between and are
// gathered too; they only make the value go stale sooner. A value is kept only if none of
// those tables was written while the work ran. The work must depend on nothing but database
// rows and its key: no clock, no memory of the process, no request headers.
//
// SQLite only: there one process sees every write through its own connection and
// `PRAGMA data_version`. On PostgreSQL the work simply runs each time.
import { sqliteConnection, type Q } from './db.ts';
import { ANY_TABLE } from './table-writes.ts';

interface KeptValue<V> {
  /** The write count when the work started. */
  at: number;
  tables: readonly string[];
  value: V;
  weight: number;
}

export interface KeptValuesLimits<K, V> {
  /** Past this many values, every value is dropped and kept afresh. */
  entries: number;
  /** Past this total weight, the same. */
  weight: number;
  /** A value's weight with its key's: a key may be as large as the value (a query string). */
  weigh(key: K, value: V): number;
}

export class KeptValues<K, V> {
  private readonly kept = new Map<K, KeptValue<V>>();
  private weight = 0;

  /**
   * @param always tables the values depend on besides those their work reads (the caller's
   *   own rows, read before the work starts)
   */
  constructor(
    private readonly always: readonly string[],
    private readonly limits: KeptValuesLimits<K, V>,
  ) {}

  /** The value kept under key, if no table it read has been written since. */
  get(db: Q, key: K): V | undefined {
    const hit = this.kept.get(key);
    if (hit === undefined) return undefined;
    const conn = sqliteConnection(db);
    if (conn) {
      // Looks for other connections' commits (once per turn) before the tables are compared.
      conn.writeCount();
      if (conn.unchangedSince(hit.at, hit.tables)) return hit.value;
    }
    this.drop(key);
    return undefined;
  }

  /** Runs the work, and keeps its value under key when `keep` accepts it. */
  async work(db: Q, key: K, run: () => Promise<V>, keep: (value: V) => boolean): Promise<V> {
    const conn = sqliteConnection(db);
    if (!conn) return run();
    const at = conn.writeCount();
    const read = conn.startReading();
    let value: V;
    try {
      value = await run();
    } finally {
      conn.stopReading(read);
    }
    const tables = [...read, ...this.always];
    if (read.has(ANY_TABLE) || !conn.unchangedSince(at, tables) || !keep(value)) return value;
    const weight = this.limits.weigh(key, value);
    if (weight > this.limits.weight) return value;
    this.drop(key);
    if (this.kept.size >= this.limits.entries || this.weight + weight > this.limits.weight) {
      this.kept.clear();
      this.weight = 0;
    }
    this.kept.set(key, { at, tables, value, weight });
    this.weight += weight;
    return value;
  }

  private drop(key: K): void {
    const hit = this.kept.get(key);
    if (hit === undefined) return;
    this.kept.delete(key);
    this.weight -= hit.weight;
  }
}
