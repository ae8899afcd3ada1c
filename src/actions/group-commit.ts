// Group commit for SQLite. SQLite runs one write transaction at a time, and with
// synchronous=FULL each COMMIT waits for the disk. Changes that arrive while a commit is
// under way are therefore run together in the next transaction, each inside its own
// savepoint, and committed with one sync: a change that fails rolls back to its savepoint
// alone, and no change is answered before the commit that holds it has succeeded. A full
// disk or an I/O error has SQLite roll back the whole transaction itself, and every change
// of the batch fails with that error.
//
// A change that finds the committer idle does not start at once either: it waits for the
// end of the event loop's turn, so that the changes whose requests arrived in the same turn
// share its commit. better-sqlite3 never yields, so without that wait a transaction ran to
// its commit before the next request of the same turn was read, and every change committed
// alone even under load. A commit is a large part of a small change's cost, with or
// without a sync (a fifth of a send's CPU): the WAL gets every page the transaction touched
// (the same index pages for every message of a batch) and, each 1,000 pages, a checkpoint
// (docs/performance-history.md, session 8).
//
// With synchronous FULL the commit's sync is made after the COMMIT, off the serving thread
// (store/wal-sync.ts), which reads and parses other requests meanwhile. The batch is
// answered once the sync is done, and only then does the next batch start, with every change
// that arrived in the meantime. Starting it at once, during the sync, made batches half as
// large and commits twice as many, each writing the same index pages to the WAL again: under
// load a send then cost more CPU than the sync saved (docs/performance.md, item 5).
//
// Group commit is for SQLite only: PostgreSQL takes concurrent transactions on its pool and
// groups their WAL flushes itself. Its queue (BatchQueue) also gathers PostgreSQL's message
// sends, which are written together by their rows instead (messages.ts, writeSends).
import type { ControlledTransaction } from 'kysely';
import { sqliteConnection, walSyncOf, type Db, type Tx } from '../store/db.ts';
import type { DB } from '../store/schema.ts';
import type { WalSync } from '../store/wal-sync.ts';

/** How one item of a batch came out. */
export type Outcome<R> = { ok: true; value: R } | { ok: false; err: unknown };

interface Waiting<I, R> {
  item: I;
  resolve: (value: R) => void;
  reject: (err: unknown) => void;
}

/**
 * Items written in batches, one batch at a time: an item that arrives while a batch is
 * written waits for the next, and the first item waits for the end of the event loop's
 * turn, so that the items of requests read in the same turn share its batch. A batch may let
 * the next one start before it is done (`startNext`), once the rest of its work is its
 * commit.
 */
export class BatchQueue<I, R> {
  private readonly queue: Array<Waiting<I, R>> = [];
  private running = false;
  private scheduled = false;

  constructor(
    private readonly writeBatch: (items: I[], startNext: () => void) => Promise<Array<Outcome<R>>>,
    private readonly maxBatch: number,
  ) {}

  /** Write item with the others of its batch; settles as the item came out. */
  add(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.running || this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        void this.drain();
      });
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        let startNext!: () => void;
        const nextMayStart = new Promise<void>((resolve) => (startNext = resolve));
        await Promise.race([this.write(batch, startNext), nextMayStart]);
      }
    } finally {
      this.running = false;
    }
  }

  /** Write a batch and settle its items; never rejects. */
  private async write(batch: Array<Waiting<I, R>>, startNext: () => void): Promise<void> {
    let outcomes: Array<Outcome<R>>;
    try {
      outcomes = await this.writeBatch(
        batch.map((w) => w.item),
        startNext,
      );
    } catch (err) {
      outcomes = batch.map(() => ({ ok: false, err }));
    }
    batch.forEach((w, i) => {
      const o = outcomes[i];
      if (o.ok) w.resolve(o.value);
      else w.reject(o.err);
    });
  }
}

type Body = (trx: Tx) => Promise<unknown>;

const SAVEPOINT = 'savepoint "change"';
const RELEASE = 'release "change"';
const ROLLBACK_TO = 'rollback to "change"';
const NO_PARAMETERS: readonly unknown[] = [];

/** A batch no larger than this keeps one slow batch from delaying the first change long. */
const MAX_BATCH = 64;

export class GroupCommit {
  private readonly batches: BatchQueue<Body, unknown>;
  private readonly walSync: WalSync | null;

  constructor(private readonly db: Db) {
    this.walSync = walSyncOf(db);
    this.batches = new BatchQueue((bodies) => this.commitDurably(bodies), MAX_BATCH);
  }

  /** Run body in a transaction (shared with changes that arrived meanwhile); resolve after commit. */
  run<T>(body: (trx: Tx) => Promise<T>): Promise<T> {
    return this.batches.add(body) as Promise<T>;
  }

  private async commitDurably(bodies: Body[]): Promise<Array<Outcome<unknown>>> {
    const outcomes = await this.commitBatch(bodies);
    await this.walSync?.flush();
    return outcomes;
  }

  private async commitBatch(bodies: Body[]): Promise<Array<Outcome<unknown>>> {
    const trx = await this.db.startTransaction().execute();
    // One change alone needs no savepoint: its own transaction is the same thing, cheaper.
    if (bodies.length === 1) {
      try {
        const value = await bodies[0](trx);
        this.walSync?.deferCommit();
        await trx.commit().execute();
        return [{ ok: true, value }];
      } catch (err) {
        await rollBack(trx);
        return [{ ok: false, err }];
      }
    }
    const outcomes: Array<Outcome<unknown>> = [];
    try {
      // The savepoints go to the connection itself, which the open transaction holds: through
      // Kysely each one built, compiled and ran a query and made a transaction object of its
      // own, 10-20 µs more a change (docs/performance.md, session 37). The statements still
      // pass through the connection's bookkeeping (db.ts).
      const conn = sqliteConnection(trx);
      if (!conn) throw new Error('group commit: not a SQLite database');
      for (const body of bodies) {
        conn.run(SAVEPOINT, NO_PARAMETERS);
        try {
          const value = await body(trx);
          conn.run(RELEASE, NO_PARAMETERS);
          outcomes.push({ ok: true, value });
        } catch (err) {
          try {
            conn.run(ROLLBACK_TO, NO_PARAMETERS);
            conn.run(RELEASE, NO_PARAMETERS);
          } catch {
            // SQLite rolled the whole transaction back itself (a full disk, an I/O error), and
            // with it the changes before this one: the batch fails with the cause.
            throw err;
          }
          outcomes.push({ ok: false, err });
        }
      }
      this.walSync?.deferCommit();
      await trx.commit().execute();
    } catch (err) {
      // The commit (or a rollback to a savepoint) failed: nothing of the batch is stored.
      await rollBack(trx);
      throw err;
    }
    return outcomes;
  }
}

/**
 * Roll back after a failure, keeping the failure's own error: after a full disk or an I/O
 * error SQLite has rolled the transaction back already, and the ROLLBACK's "no transaction is
 * active" said nothing of why.
 */
async function rollBack(trx: ControlledTransaction<DB>): Promise<void> {
  await trx
    .rollback()
    .execute()
    .catch(() => undefined);
}

const committers = new WeakMap<Db, GroupCommit>();

/** The database's group committer, made on first use. */
export function groupCommitFor(db: Db): GroupCommit {
  let c = committers.get(db);
  if (!c) {
    c = new GroupCommit(db);
    committers.set(db, c);
  }
  return c;
}
