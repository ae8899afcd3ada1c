// Durable commits without the serving thread waiting for the disk. With
// PARLEY_SQLITE_SYNCHRONOUS=FULL, SQLite would sync the WAL inside every COMMIT, on the one
// thread that serves requests: half a millisecond to a millisecond under load, in which no
// request is read or answered (docs/performance.md, figure 3a). Instead the serving
// connection runs with NORMAL, which keeps every sync that guards against corruption (the
// WAL before a checkpoint copies it, the database after, a restarted WAL's header), and
// this adds the one sync NORMAL leaves out: the WAL after a commit, before anything of
// that commit is answered or announced.
//
// Group commit (actions/group-commit.ts) marks its commit as one it will wait for; the sync
// then runs on libuv's thread pool while the serving thread reads and answers other requests.
// Every other commit (a migration, a statement outside a transaction) is synced at once,
// as SQLite's FULL would have, so no path answers a write the disk may not hold.
import { closeSync, fdatasync, fdatasyncSync, fsyncSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

export type SyncFile = (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => void;

export class WalSync {
  private fd: number | null = null;
  /** Frames of a deferred commit were written and their sync has not started. */
  private unsynced = false;
  /** The open transaction's commit will be waited for through flush(). */
  private deferred = false;
  /** The open transaction has run a writing statement. */
  private wrote = false;
  /** The last sync started through flush(); answers follow the order of their commits. */
  private tail: Promise<void> = Promise.resolve();
  /** A sync failed: the disk may have dropped a write, so none is vouched for again. */
  private failure: Error | null = null;
  private syncs = 0;

  constructor(
    private readonly walPath: string,
    private readonly syncFile: SyncFile = fdatasync,
  ) {}

  /** How many syncs were started, for tests and the bench's notes. */
  get syncCount(): number {
    return this.syncs;
  }

  /**
   * After each statement on the serving connection: readonly is the statement's, and the
   * two flags say whether a transaction was open before it ran and is open after.
   */
  afterStatement(readonly: boolean, wasOpen: boolean, isOpen: boolean): void {
    if (isOpen) {
      if (!wasOpen) {
        this.deferred = false;
        this.wrote = false;
      }
      if (!readonly) this.wrote = true;
      return;
    }
    // A statement of its own, or the end of a transaction (a rollback too: syncing then
    // only costs time).
    const wrote = wasOpen ? this.wrote : !readonly;
    const deferred = wasOpen && this.deferred;
    this.wrote = false;
    this.deferred = false;
    if (!wrote) return;
    if (deferred) this.unsynced = true;
    else this.syncNow();
  }

  /** Called inside a transaction: its caller will wait for its commit through flush(). */
  deferCommit(): void {
    this.deferred = true;
  }

  /**
   * Resolves when every deferred commit so far is on disk, and not before the syncs of
   * earlier commits resolved: the answers and events of one batch never overtake those of
   * the batch before.
   */
  flush(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (!this.unsynced) return this.tail;
    this.unsynced = false;
    const fd = this.open();
    this.syncs++;
    const mine = new Promise<void>((resolve, reject) =>
      this.syncFile(fd, (err) => (err ? reject(this.fail(err)) : resolve())),
    );
    const done = this.tail.then(
      () => mine,
      () => mine,
    );
    this.tail = done.catch(() => undefined);
    return done;
  }

  /** Closes the file this keeps open for syncing (the store closes). */
  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private syncNow(): void {
    if (this.failure) throw this.failure;
    const fd = this.open();
    this.syncs++;
    try {
      fdatasyncSync(fd);
    } catch (err) {
      throw this.fail(err as NodeJS.ErrnoException);
    }
  }

  private open(): number {
    if (this.fd === null) {
      // The WAL exists once something was committed to it. A new file's name is on disk
      // only when its directory is synced, which SQLite's FULL does once for the WAL too.
      this.fd = openSync(this.walPath, 'r');
      const dir = openSync(dirname(this.walPath), 'r');
      try {
        fsyncSync(dir);
      } finally {
        closeSync(dir);
      }
    }
    return this.fd;
  }

  private fail(err: NodeJS.ErrnoException): Error {
    // After a failed sync Linux marks the lost pages clean: a later sync that succeeds
    // says nothing about them. Every write fails from here until the server restarts.
    this.failure ??= Object.assign(
      new Error(`syncing the SQLite WAL failed: ${err.message}`, { cause: err }),
      { code: err.code },
    );
    return this.failure;
  }
}
