// A snapshot of every row of every table, read through the app's own Kysely handle, so a
// test can prove that a request changed nothing (an error must not leave half a change
// behind). Works on SQLite and on PostgreSQL (in the schema the test app uses).
import { sql } from 'kysely';
import type { Store } from '../../src/store/db.ts';

/** Table name → its rows as canonical JSON text, sorted (row order is not part of the state). */
export type DbSnapshot = Map<string, string[]>;

/**
 * The application's tables. Bookkeeping is left out: the migrations' (requests never touch
 * it) and PostgreSQL's accounts counter (migration 0011: it follows the users and realms
 * rows, and emptying it would leave no version for authentication to keep rows by).
 */
export async function listTables(store: Store): Promise<string[]> {
  const rows =
    store.dialect === 'sqlite'
      ? await sql<{ name: string }>`
          SELECT name FROM sqlite_master
          WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'kysely_%'`.execute(
          store.db,
        )
      : await sql<{ name: string }>`
          SELECT table_name AS name FROM information_schema.tables
          WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
            AND table_name NOT LIKE 'kysely_%' AND table_name <> 'accounts_version'`.execute(
          store.db,
        );
  return rows.rows.map((r) => r.name).sort();
}

function canonical(value: unknown): unknown {
  if (value instanceof Date) return `date:${value.toISOString()}`;
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) {
    return `bytes:${Buffer.from(value).toString('base64')}`;
  }
  if (typeof value === 'bigint') return `bigint:${value}`;
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** Read every row of every table. */
export async function snapshotDb(store: Store): Promise<DbSnapshot> {
  const snapshot: DbSnapshot = new Map();
  for (const table of await listTables(store)) {
    const result = await sql<Record<string, unknown>>`SELECT * FROM ${sql.table(table)}`.execute(
      store.db,
    );
    snapshot.set(table, result.rows.map((row) => JSON.stringify(canonical(row))).sort());
  }
  return snapshot;
}

/**
 * What differs between two snapshots, one line per changed table naming a few rows only
 * in the first (-) or only in the second (+); empty when they hold the same rows.
 */
export function diffSnapshots(before: DbSnapshot, after: DbSnapshot, maxRows = 3): string[] {
  const lines: string[] = [];
  const tables = [...new Set([...before.keys(), ...after.keys()])].sort();
  for (const table of tables) {
    const a = before.get(table) ?? [];
    const b = after.get(table) ?? [];
    if (a.length === b.length && a.every((row, i) => row === b[i])) continue;
    const inA = new Set(a);
    const inB = new Set(b);
    const removed = a.filter((row) => !inB.has(row));
    const added = b.filter((row) => !inA.has(row));
    const shown = [
      ...removed.slice(0, maxRows).map((row) => `  - ${row.slice(0, 400)}`),
      ...added.slice(0, maxRows).map((row) => `  + ${row.slice(0, 400)}`),
    ];
    lines.push(`${table}: ${removed.length} row(s) gone, ${added.length} new`, ...shown);
  }
  return lines;
}

/** Every integer `id` value stored anywhere: ids that exist, whoever they belong to. */
export function storedIds(snapshot: DbSnapshot): number[] {
  const ids = new Set<number>();
  for (const rows of snapshot.values()) {
    for (const row of rows) {
      const id = (JSON.parse(row) as { id?: unknown }).id;
      if (typeof id === 'number' && Number.isSafeInteger(id)) ids.add(id);
    }
  }
  return [...ids].sort((a, b) => a - b);
}

/**
 * On SQLite, the database image: if two images are byte-for-byte equal nothing changed
 * (a rolled-back transaction leaves every page as it was), which is much cheaper to check
 * than reading every table. Null on PostgreSQL.
 */
export function sqliteImage(store: Store): Buffer | null {
  return store.sqlite ? store.sqlite.serialize() : null;
}
