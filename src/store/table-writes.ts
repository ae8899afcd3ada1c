// Which tables this process has written, and when, so that the rows a read returned can be
// reused while none of the tables it reads has been written since (compiled.ts, `cached`
// queries). PostgreSQL's transactions run side by side and have a part of their own below
// ("pending"); what follows here is SQLite's.
//
// Every statement run through Kysely or a compiled query is prepared on the connection
// first (sqlite-statements.ts, reusingStatements), and that is where a write is counted: before it runs, so
// no kept read can carry a count older than a write it saw. Three things make every kept
// read stale at once: a write whose target table is not recognised, a rollback (a read
// inside the transaction may have seen what it undid), and another connection's commit
// (other-commits.ts, looked for once per turn of the event loop, as for the accounts
// version). SQLite here has no triggers, and the only foreign keys that act on a write to
// another table are listed in CASCADES (a test holds the schema to it).

const WRITE_TARGET = /^\s*(?:insert\s+(?:or\s+\w+\s+)?into|update|delete\s+from)\s+"?(\w+)"?/i;
const ROLLBACK = /^\s*rollback\b/i;
const READ_TABLE = /\b(?:from|join)\s+"?(\w+)"?/gi;

/** The table an INSERT, UPDATE or DELETE writes; undefined for any other statement. */
export function writeTarget(sql: string): string | undefined {
  return WRITE_TARGET.exec(sql)?.[1]?.toLowerCase();
}

const CTE_NAME = /(?:\bwith\s+(?:recursive\s+)?|\)\s*,\s*)"?(\w+)"?\s+as\s*\(/gi;

// `FROM a, b` names b after a comma, where READ_TABLE does not look.
const COMMA_JOIN = /\bfrom\s+"?\w+"?(?:\s+(?:as\s+)?"?\w+"?)?\s*,/i;

/**
 * The tables a query names after FROM or JOIN, not counting its common table expressions.
 * A query that lists tables after a comma is refused: a table missed here would let a read
 * be reused after that table changed.
 */
export function tablesRead(sql: string): string[] {
  if (COMMA_JOIN.test(sql)) throw new Error('tablesRead: join tables with JOIN, not a comma');
  const ctes = new Set(Array.from(sql.matchAll(CTE_NAME), (m) => m[1].toLowerCase()));
  const named = Array.from(sql.matchAll(READ_TABLE), (m) => m[1].toLowerCase());
  return [...new Set(named)].filter((t) => !ctes.has(t));
}

/** Stands for every table: a statement whose tables could not be told. */
export const ANY_TABLE = '*';

/** The tables a statement reads or writes; ANY_TABLE when they cannot be told apart. */
function tablesNamed(sql: string): string[] {
  let tables: string[];
  try {
    tables = tablesRead(sql);
  } catch {
    return [ANY_TABLE];
  }
  const target = writeTarget(sql);
  if (target !== undefined) tables.push(target);
  return tables;
}

/** Tables whose rows a delete in the key's table changes too (ON DELETE CASCADE). */
export const CASCADES: Readonly<Record<string, readonly string[]>> = {
  custom_profile_fields: ['custom_profile_field_values'],
};

export class TableWrites {
  /** Advances with every write, rollback and commit of another connection. */
  private count = 0;
  private everyTableAt = 0;
  private readonly tableAt = new Map<string, number>();

  /** A statement is about to run on the connection. */
  noteStatement(sql: string, readonly: boolean): void {
    if (this.readers.size > 0) this.noteRead(tablesNamed(sql));
    if (readonly) {
      // ROLLBACK and ROLLBACK TO count as reading statements.
      if (ROLLBACK.test(sql)) this.everyTableAt = ++this.count;
      return;
    }
    const table = writeTarget(sql);
    this.count++;
    if (table === undefined) {
      this.everyTableAt = this.count;
      return;
    }
    this.tableAt.set(table, this.count);
    for (const child of CASCADES[table] ?? []) this.tableAt.set(child, this.count);
  }

  // Tables read while a kept value is being worked out (kept-values.ts), by any caller: the
  // value's own reads are among them, and another caller's only make it go stale sooner.
  private readonly readers = new Set<Set<string>>();

  /** From now on, every table a statement names (or a kept read reuses) joins the set. */
  startReading(): Set<string> {
    const tables = new Set<string>();
    this.readers.add(tables);
    return tables;
  }

  stopReading(tables: Set<string>): void {
    this.readers.delete(tables);
  }

  /** Tables read without a statement (a kept read given again, compiled.ts). */
  noteRead(tables: readonly string[]): void {
    if (this.readers.size === 0) return;
    for (const reader of this.readers) for (const table of tables) reader.add(table);
  }

  /** Another connection committed (SQLite's data_version moved). */
  noteOtherConnection(): void {
    this.everyTableAt = ++this.count;
  }

  now(): number {
    return this.count;
  }

  /** Whether no write may have reached these tables since the count was `at`. */
  unchangedSince(at: number, tables: readonly string[]): boolean {
    if (this.everyTableAt > at || this.pendingEverywhere > 0) return false;
    for (const table of tables) {
      if ((this.tableAt.get(table) ?? 0) > at || (this.pending.get(table) ?? 0) > 0) return false;
    }
    return true;
  }

  // PostgreSQL runs transactions side by side: a table written by a transaction that has not
  // ended is "pending", and no read of it is reused or kept meanwhile (it might see the
  // uncommitted rows, or keep rows the commit is about to change). Its end counts as a write.
  private readonly pending = new Map<string, number>();
  private pendingEverywhere = 0;

  /** A transaction (or a statement of its own) starts writing the table; undefined: any. */
  startWriting(table: string | undefined): void {
    this.count++;
    if (table === undefined) {
      this.pendingEverywhere++;
      this.everyTableAt = this.count;
      return;
    }
    for (const t of [table, ...(CASCADES[table] ?? [])]) {
      this.pending.set(t, (this.pending.get(t) ?? 0) + 1);
      this.tableAt.set(t, this.count);
    }
  }

  /** The transaction that wrote the table ended, committed or not. */
  endWriting(table: string | undefined): void {
    this.count++;
    if (table === undefined) {
      this.pendingEverywhere--;
      this.everyTableAt = this.count;
      return;
    }
    for (const t of [table, ...(CASCADES[table] ?? [])]) {
      this.pending.set(t, (this.pending.get(t) ?? 1) - 1);
      this.tableAt.set(t, this.count);
    }
  }

  /** A rollback to a savepoint: whatever was read inside the transaction may be undone. */
  noteRollback(): void {
    this.everyTableAt = ++this.count;
  }
}
