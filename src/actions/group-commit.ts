// Group commit for SQLite. SQLite runs one write transaction at a time, and with
// synchronous=FULL each COMMIT waits for the disk. Changes that arrive while a commit is
// under way are therefore run together in the next transaction, each inside its own
// savepoint, and committed with one sync: a change that fails rolls back to its savepoint
// alone, and no change is answered before the commit that holds it has succeeded.
//
// A change that finds the committer idle does not start at once either: it waits for the
// end of the event loop's turn, so that the changes whose requests arrived in the same turn
// share its commit. better-sqlite3 never yields, so without that wait a transaction ran to
// its commit before the next request of the same turn was read, and every change committed
// alone even under load. A commit is a large part of a small change's cost, with or
// without a sync (a fifth of a send's CPU): the WAL gets every page the transaction touched
// (the same index pages for every message of a batch) and, each 1,000 pages, a checkpoint
// (docs/performance.md, session 8).
//
// Only for SQLite: PostgreSQL takes concurrent transactions on its pool and groups their
// WAL flushes itself.
import type { Db, Tx } from '../store/db.ts';

interface Job {
  body: (trx: Tx) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; err: unknown };

/** A batch no larger than this keeps one slow batch from delaying the first change long. */
const MAX_BATCH = 64;

export class GroupCommit {
  private readonly queue: Job[] = [];
  private running = false;
  private scheduled = false;

  constructor(private readonly db: Db) {}

  /** Run body in a transaction (shared with changes that arrived meanwhile); resolve after commit. */
  run<T>(body: (trx: Tx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ body, resolve: resolve as (v: unknown) => void, reject });
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
      while (this.queue.length > 0) await this.commitBatch(this.queue.splice(0, MAX_BATCH));
    } finally {
      this.running = false;
    }
  }

  private async commitBatch(batch: Job[]): Promise<void> {
    // One change alone needs no savepoint: its own transaction is the same thing, cheaper.
    if (batch.length === 1) {
      const [job] = batch;
      await this.db.transaction().execute(job.body).then(job.resolve, job.reject);
      return;
    }
    const outcomes: Outcome[] = [];
    let trx;
    try {
      trx = await this.db.startTransaction().execute();
      for (const job of batch) {
        const sp = await trx.savepoint('change').execute();
        try {
          const value = await job.body(sp);
          await sp.releaseSavepoint('change').execute();
          outcomes.push({ ok: true, value });
        } catch (err) {
          await sp.rollbackToSavepoint('change').execute();
          await sp.releaseSavepoint('change').execute();
          outcomes.push({ ok: false, err });
        }
      }
      await trx.commit().execute();
    } catch (err) {
      // The commit (or a rollback to a savepoint) failed: nothing of the batch is stored.
      if (trx)
        await trx
          .rollback()
          .execute()
          .catch(() => undefined);
      for (const job of batch) job.reject(err);
      return;
    }
    batch.forEach((job, i) => {
      const o = outcomes[i];
      if (o.ok) job.resolve(o.value);
      else job.reject(o.err);
    });
  }
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
