// Background checkpoints: a serving SQLite connection hands its WAL checkpoints to a worker
// thread. Left to itself, SQLite checkpoints inside the commit that takes the WAL past 1,000
// pages, on the thread that serves requests. A send to a large channel writes one delivery
// row per member into tables ordered by user, dirtying about a page per member in each: on
// tables with history nearly every such commit then copied thousands of pages into the
// database and synced it, which was most of the send's time (docs/performance-history.md,
// session 23).
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';

export interface CheckpointOptions {
  /** How often the worker copies what the WAL holds into the database. */
  intervalMs?: number;
  /**
   * The longest wait between two looks while nothing is written: each look that finds the
   * WAL as the last one left it doubles the wait, up to this; the first write brings it back.
   */
  quietIntervalMs?: number;
  /**
   * WAL frames the worker lets accumulate before it copies them, unless they have waited
   * maxWaitMs: the first commit after a checkpoint that copied the whole log starts it again
   * and syncs its header, on the serving thread.
   */
  batchFrames?: number;
  /** The longest a frame waits in the WAL for a checkpoint once the worker has seen it. */
  maxWaitMs?: number;
  /**
   * WAL pages after which the serving connection checkpoints at its next commit after all,
   * as SQLite does by default at 1,000: a bound for when the worker falls behind or stops.
   */
  backstopPages?: number;
  /**
   * Bytes the WAL file is cut back to when it starts again from its beginning, if it grew
   * beyond them: a burst (a reader holding old pages, a send to thousands) leaves no large
   * file behind.
   */
  walSizeLimitBytes?: number;
  /**
   * A look failed (a full disk, an I/O error) and the next ones will try again, as slowly as
   * looks at a quiet WAL; said once until a look succeeds, which `onResumed` then says.
   */
  onLookFailed?: (err: Error) => void;
  /** A look succeeded after `onLookFailed`. */
  onResumed?: () => void;
  /**
   * The worker could not start (or stopped on an error of its own); the serving connection has
   * gone back to checkpointing itself.
   */
  onError?: (err: unknown) => void;
}

export interface BackgroundCheckpoints {
  /** Stops the worker and gives the serving connection its own checkpoints back. */
  stop(): Promise<void>;
}

const DEFAULT_INTERVAL_MS = 100;
// Ten looks a second at a WAL nobody writes woke the worker's thread and V8's for about
// 0.3 % of a core on an idle server (docs/performance.md, session 25).
const DEFAULT_QUIET_INTERVAL_MS = 1_600;
// 40 MB of 4 KB pages. The WAL starts again from its beginning only at a write after a
// checkpoint that copied all of it, which under writes without pauses the worker seldom
// manages: the WAL then grows to this, and the serving connection's own checkpoint, copying
// only what the worker has not, lets it start again (docs/performance-history.md, session 23).
const DEFAULT_BACKSTOP_PAGES = 10_000;
// Above the backstop's 41 MB, so that the WAL of steady writes is not cut back and grown
// again at every restart.
const DEFAULT_WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;
/** SQLite's own default, restored when the worker stops. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1_000;
// SQLite's own checkpoint size. Copying every commit within 100 ms let each commit after a
// pause start the log again and sync the new log's header on the serving thread: 0.3-0.9 ms
// at each send of figure 4, as long as the disk takes when it is slow (docs/performance-history.md,
// session 38). Now that happens once per this many frames, or per DEFAULT_MAX_WAIT_MS.
const DEFAULT_BATCH_FRAMES = SQLITE_AUTOCHECKPOINT_PAGES;
// Frames waiting for a batch are synced by the worker's looks all the same (under NORMAL, as a
// checkpoint would), so this bounds only how long the WAL holds them uncopied.
const DEFAULT_MAX_WAIT_MS = 10_000;

/** better-sqlite3 as this module finds it, for the worker to load the same. */
const DRIVER = createRequire(import.meta.url).resolve('better-sqlite3');

/**
 * The worker, in plain JavaScript: it runs without the TypeScript loader, which Node 20 does
 * not carry into workers, and without this module's imports.
 *
 * Its own connection copies what the WAL holds into the database on a timer, once batchFrames
 * frames wait there or the oldest has waited maxWaitMs. It counts them in the wal-index header
 * that SQLite keeps at the start of the -shm file (https://www.sqlite.org/walformat.html: the
 * header twice, then the checkpoint's progress), read plainly; a header it cannot read, or
 * one of another version, has it checkpoint on every look as before. A checkpoint
 * syncs the WAL before copying it and the database after, as far as its connection's
 * `synchronous` asks, so it asks what the serving connection's does. PASSIVE never waits for
 * a lock: what readers or a writer still hold is left for the next turn. The connection and
 * statement stay reachable until the worker exits (sqlite-lifetime.ts), whose cleanup frees
 * them safely.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.driver);
// better-sqlite3's errors reach the parent without their message (their class does not
// survive the copy between threads); a plain Error keeps it, and where it was thrown.
const plainly = (work) => {
  try {
    return work();
  } catch (err) {
    throw Object.assign(new Error(err.message), { code: err.code, stack: err.stack });
  }
};
const sqlite = plainly(() => new SQLite(workerData.path, { fileMustExist: true }));
const checkpoint = plainly(() => {
  sqlite.exec('PRAGMA synchronous = ' + workerData.synchronous);
  return sqlite.prepare('PRAGMA wal_checkpoint(PASSIVE)');
});
const fs = require('node:fs');
const { endianness } = require('node:os');
// The wal-index header (48 bytes, written twice) and the checkpoint's progress after it, in
// the machine's byte order: a count of transactions at 8, the last frame in the log at 16,
// the last one copied at 96.
const WAL_INDEX_VERSION = 3007000;
const header = Buffer.alloc(100);
const readU32 =
  endianness() === 'LE' ? (at) => header.readUInt32LE(at) : (at) => header.readUInt32BE(at);
let shm = -1;
try {
  shm = fs.openSync(workerData.path + '-shm', 'r');
} catch {
  // No shared memory to read: every look checkpoints.
}
// Between batches, new frames are synced as a checkpoint would have synced them, so that
// under NORMAL what power loss can take stays what it was when every look copied them.
let wal = -1;
const syncWal = () => {
  try {
    if (wal < 0) wal = fs.openSync(workerData.path + '-wal', 'r');
    fs.fsyncSync(wal);
  } catch {
    // The next look tries again, and the next checkpoint syncs it in any case.
  }
};
/** The log's frames, those not yet copied and its transactions' count; null if unreadable. */
const readLog = () => {
  try {
    if (shm < 0 || fs.readSync(shm, header, 0, header.length, 0) < header.length) return null;
  } catch {
    return null;
  }
  // A header being written has its two copies differ: this look checkpoints, as without one.
  if (readU32(0) !== WAL_INDEX_VERSION || header[12] !== 1) return null;
  if (header.compare(header, 0, 48, 48, 96) !== 0) return null;
  const frames = readU32(16);
  const copied = readU32(96);
  return copied <= frames ? { frames, waiting: frames - copied, change: readU32(8) } : null;
};
// A look that finds the log as the last one left it, nothing copied meanwhile, doubles the
// wait before the next, up to quietIntervalMs; frames waiting for a batch are copied by
// maxWaitMs all the same.
let delay = workerData.intervalMs;
let lastLog = -1;
let lastChange = -1;
let waitingSince = 0;
// A look that fails (a full disk, an I/O error) is tried again: what it leaves waits in the
// WAL, where the serving connection's backstop bounds it. Failing looks slow down as quiet
// ones do; the parent hears of the first failure and of the first success after.
let failing = false;
const tick = () => {
  let next;
  try {
    next = look();
    if (failing) {
      failing = false;
      parentPort.postMessage({ resumed: true });
    }
  } catch (err) {
    if (!failing) {
      failing = true;
      parentPort.postMessage({ failed: { message: err.message, code: err.code, stack: err.stack } });
    }
    delay = Math.min(delay * 2, workerData.quietIntervalMs);
    next = delay;
  }
  timer = setTimeout(tick, next);
};
/** One look at the log: a checkpoint or a sync if due; the time until the next look. */
const look = () => {
  const now = Date.now();
  const seen = readLog();
  let log;
  let allCopied;
  if (seen && seen.waiting > 0 && waitingSince === 0) waitingSince = now;
  const batchDue =
    !seen ||
    seen.waiting >= workerData.batchFrames ||
    (seen.waiting > 0 && now - waitingSince >= workerData.maxWaitMs);
  if (batchDue) {
    const done = plainly(() => checkpoint.get());
    log = done.log;
    allCopied = done.checkpointed === done.log;
  } else {
    log = seen.frames;
    allCopied = seen.waiting === 0;
    if (!allCopied && seen.change !== lastChange && workerData.synchronous === 'NORMAL') {
      syncWal();
    }
  }
  if (seen) lastChange = seen.change;
  if (allCopied) waitingSince = 0;
  const quiet = log === lastLog && (allCopied || !batchDue);
  lastLog = log;
  delay = quiet ? Math.min(delay * 2, workerData.quietIntervalMs) : workerData.intervalMs;
  // Frames a checkpoint could not copy (a reader still holds them) are past due: the next
  // look comes after the interval, not at once.
  const untilDue = waitingSince + workerData.maxWaitMs - now;
  return waitingSince === 0 || untilDue <= 0 ? delay : Math.min(delay, untilDue);
};
let timer = setTimeout(tick, delay);
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  clearTimeout(timer);
  if (shm >= 0) fs.closeSync(shm);
  if (wal >= 0) fs.closeSync(wal);
  sqlite.close();
  parentPort.close();
});
`;

export function startBackgroundCheckpoints(
  sqlite: SQLite.Database,
  path: string,
  synchronous: 'OFF' | 'NORMAL' | 'FULL',
  options: CheckpointOptions = {},
): BackgroundCheckpoints {
  const restore = (): void => {
    try {
      sqlite.exec(`PRAGMA wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
    } catch {
      // Closed, or busy with a statement still being iterated: the backstop stays, which
      // bounds the WAL as well, only with larger checkpoints.
    }
  };
  sqlite.exec(`PRAGMA wal_autocheckpoint = ${options.backstopPages ?? DEFAULT_BACKSTOP_PAGES}`);
  // SQLite keeps the WAL file at its largest size otherwise; the commit that restarts the
  // log cuts it back.
  sqlite.exec(
    `PRAGMA journal_size_limit = ${options.walSizeLimitBytes ?? DEFAULT_WAL_SIZE_LIMIT_BYTES}`,
  );
  const workerData = {
    driver: DRIVER,
    path,
    intervalMs: options.intervalMs ?? DEFAULT_INTERVAL_MS,
    quietIntervalMs: Math.max(
      options.quietIntervalMs ?? DEFAULT_QUIET_INTERVAL_MS,
      options.intervalMs ?? DEFAULT_INTERVAL_MS,
    ),
    batchFrames: options.batchFrames ?? DEFAULT_BATCH_FRAMES,
    maxWaitMs: options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS,
    synchronous,
  };
  // No inherited flags: the TypeScript loader would only slow the worker's start.
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData, execArgv: [] });
  // A process that leaves without closing its store (a failed start, a test) is not held
  // open by the worker; a checkpoint cut short is safe, as after a crash.
  worker.unref();
  let running = true;
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.on(
    'message',
    (message: { failed?: { message: string; code?: string; stack?: string }; resumed?: true }) => {
      if (!running) return;
      if (message.failed) {
        // The worker's own stack: where its look failed, not where the parent heard of it.
        const { message: text, code, stack } = message.failed;
        options.onLookFailed?.(Object.assign(new Error(text), { code, stack: stack ?? '' }));
      } else if (message.resumed) {
        options.onResumed?.();
      }
    },
  );
  worker.on('error', (err) => {
    if (!running) return;
    running = false;
    restore();
    options.onError?.(err);
  });
  return {
    async stop() {
      // Held open until the worker has closed its connection.
      worker.ref();
      if (running) {
        running = false;
        worker.postMessage('stop');
        await exited;
        restore();
      } else {
        await exited;
      }
    },
  };
}
