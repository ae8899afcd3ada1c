// A serving SQLite connection leaves WAL checkpoints to a worker thread (store/checkpoints.ts).
// What a checkpoint does is visible on disk: it copies the WAL's pages into the database
// file, which grows only then, and the last connection to close removes the WAL.
import assert from 'node:assert/strict';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { startBackgroundCheckpoints } from '../../src/store/checkpoints.ts';
import { openSqlite, type Store } from '../../src/store/db.ts';
import { keepForLife } from '../../src/store/sqlite-lifetime.ts';
import { waitFor } from '../cli/io.ts';

const dir = mkdtempSync(join(tmpdir(), 'parley-checkpoints-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function freshFile(): string {
  return join(dir, `db-${++files}.sqlite3`);
}

/** A store on a new database file, closed after fn. */
async function onFileStore(fn: (store: Store, file: string) => unknown): Promise<void> {
  const file = freshFile();
  const store = openSqlite({ source: file });
  try {
    await fn(store, file);
  } finally {
    await store.close();
  }
}

const PAGE = 4096;
/** Rows of a little less than a page each: one commit of them writes about `rows` pages. */
function writePages(store: Store, rows: number): void {
  const raw = store.sqlite!;
  raw.exec('CREATE TABLE IF NOT EXISTS filler (id INTEGER PRIMARY KEY, body BLOB)');
  raw.exec(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${rows})
     INSERT INTO filler (body) SELECT randomblob(3000) FROM n`,
  );
}

function fileSize(path: string): number {
  return existsSync(path) ? statSync(path).size : 0;
}

function readValue(store: Store, sql: string): unknown {
  return keepForLife(store.sqlite!.prepare(sql)).pluck().get();
}

test('without background checkpoints, the commit past 1,000 WAL pages copies them itself', () =>
  onFileStore((store, file) => {
    writePages(store, 1_500);
    // SQLite's own checkpoint ran inside that commit: the database file holds the rows.
    assert.ok(fileSize(file) >= 1_500 * PAGE, `database file ${fileSize(file)} bytes`);
  }));

test('with background checkpoints, a commit leaves the WAL for the worker', () =>
  onFileStore((store, file) => {
    // A worker that will not come round within the test.
    store.checkpointInBackground!({ intervalMs: 3_600_000 });
    const before = fileSize(file);
    writePages(store, 1_500);
    assert.equal(fileSize(file), before);
    assert.ok(fileSize(`${file}-wal`) >= 1_500 * PAGE);
    assert.equal(readValue(store, 'PRAGMA wal_autocheckpoint'), 10_000);
  }));

test('the worker copies the WAL into the database on its timer', () =>
  onFileStore(async (store, file) => {
    store.checkpointInBackground!({ intervalMs: 20 });
    writePages(store, 1_500);
    await waitFor('the checkpoint', () => fileSize(file) >= 1_500 * PAGE, 10_000);
    assert.equal(readValue(store, 'SELECT count(*) FROM filler'), 1_500);
  }));

test('a worker whose WAL stayed unchanged for a while still copies the next write', () =>
  onFileStore(async (store, file) => {
    // Its looks at the unchanged WAL are 20, 40, 80 ms apart, then 100 ms; any frame is a batch.
    store.checkpointInBackground!({ intervalMs: 20, quietIntervalMs: 100, batchFrames: 1 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    writePages(store, 1_500);
    await waitFor('the checkpoint', () => fileSize(file) >= 1_500 * PAGE, 10_000);
    writePages(store, 10);
    await waitFor('the next checkpoint', () => fileSize(file) >= 1_510 * PAGE, 10_000);
  }));

test('a small write waits in the WAL until a batch of frames has gathered', () =>
  onFileStore(async (store, file) => {
    store.checkpointInBackground!({ intervalMs: 20, batchFrames: 300, maxWaitMs: 3_600_000 });
    writePages(store, 1_500);
    await waitFor('the checkpoint', () => fileSize(file) >= 1_500 * PAGE, 10_000);
    const copied = fileSize(file);
    writePages(store, 100);
    // Ten looks or more: each finds 100 frames waiting, fewer than a batch.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(fileSize(file), copied);
    writePages(store, 250);
    await waitFor('the batch', () => fileSize(file) >= copied + 350 * PAGE, 10_000);
    assert.equal(readValue(store, 'SELECT count(*) FROM filler'), 1_850);
  }));

/** 50 frames, fewer than a batch of 1,000: the looks leave them, until they have waited 800 ms. */
async function expectCopiedAfterMaxWait(store: Store, file: string): Promise<void> {
  store.checkpointInBackground!({ intervalMs: 20, maxWaitMs: 800 });
  const before = fileSize(file);
  writePages(store, 50);
  // Looks have found the frames and left them; a worker that read no header copies them.
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(fileSize(file), before);
  await waitFor('the checkpoint', () => fileSize(file) >= before + 50 * PAGE, 10_000);
}

test('frames fewer than a batch are copied once they have waited maxWaitMs', () =>
  onFileStore(expectCopiedAfterMaxWait));

test('frames a reader kept from a checkpoint are copied once it lets go, with no write after', () =>
  onFileStore(async (store, file) => {
    store.checkpointInBackground!({ intervalMs: 20, maxWaitMs: 300 });
    writePages(store, 1);
    await waitFor('the first checkpoint', () => fileSize(file) >= 2 * PAGE, 10_000);
    const reader = keepForLife(new SQLite(file));
    try {
      // A read transaction whose snapshot ends before the next write's frames.
      reader.exec('BEGIN');
      assert.equal(keepForLife(reader.prepare('SELECT count(*) FROM filler')).pluck().get(), 1);
      const before = fileSize(file);
      writePages(store, 50);
      // Past maxWaitMs the looks checkpoint, and can copy none of the 50 frames.
      await new Promise((resolve) => setTimeout(resolve, 700));
      assert.equal(fileSize(file), before);
      reader.exec('COMMIT');
      await waitFor('the checkpoint', () => fileSize(file) >= before + 50 * PAGE, 10_000);
    } finally {
      reader.close();
    }
  }));

/** util-linux's prlimit, to change this process's limit on the size of the files it writes. */
const PRLIMIT = spawnSync('prlimit', ['--version']).status === 0;
function fileSizeLimit(): string {
  const args = ['--pid', String(process.pid), '--fsize', '--output', 'SOFT', '--noheadings'];
  return execFileSync('prlimit', [...args, '--raw'])
    .toString()
    .trim();
}
function limitFileSize(soft: string | number): void {
  execFileSync('prlimit', ['--pid', String(process.pid), `--fsize=${soft}:`]);
}

test(
  'a look that fails is tried again, and copies once it can',
  { skip: !PRLIMIT && 'no prlimit here (util-linux, Linux)' },
  () =>
    onFileStore(async (store, file) => {
      const failed: Error[] = [];
      const stopped: unknown[] = [];
      let resumed = 0;
      store.checkpointInBackground!({
        intervalMs: 20,
        quietIntervalMs: 100,
        batchFrames: 1,
        onLookFailed: (err) => failed.push(err),
        onResumed: () => resumed++,
        onError: (err) => stopped.push(err),
      });
      writePages(store, 100);
      await waitFor('the first checkpoint', () => fileSize(file) >= 100 * PAGE, 10_000);
      const copied = fileSize(file);
      const soft = fileSizeLimit();
      // The WAL starts again within the size it has; the database cannot grow by 100 pages.
      limitFileSize(copied + 20 * PAGE);
      try {
        writePages(store, 100);
        await waitFor('a failed look', () => failed.length > 0, 10_000);
        assert.match(String((failed[0] as { code?: string }).code), /^SQLITE_(FULL|IOERR)/);
        // The stack is the worker's: its look, not this thread's message handler.
        assert.match(String(failed[0].stack), /at look \(/);
        assert.doesNotMatch(String(failed[0].stack), /checkpoints\.ts/);
        await new Promise((resolve) => setTimeout(resolve, 300));
        // Read while the limit holds: the worker is a thread of its own, and its next look
        // may copy the moment the limit is lifted.
        assert.ok(fileSize(file) < copied + 100 * PAGE);
      } finally {
        limitFileSize(soft);
      }
      await waitFor('the checkpoint', () => fileSize(file) >= copied + 100 * PAGE, 10_000);
      await waitFor('the resumption', () => resumed === 1, 10_000);
      // Said once for the looks that failed in a row; the worker never stopped.
      assert.equal(failed.length, 1);
      assert.deepEqual(stopped, []);
      assert.equal(readValue(store, 'PRAGMA wal_autocheckpoint'), 10_000);
      assert.equal(readValue(store, 'SELECT count(*) FROM filler'), 200);
    }),
);

test('a worker that cannot read the wal-index header copies at every look', () =>
  onFileStore(async (store, file) => {
    // SQLite follows the link to the file and keeps its -shm beside it; the worker looks for
    // one beside the link, finds none, and checkpoints as if every look were a batch.
    const link = join(dir, `link-${files}.sqlite3`);
    symlinkSync(file, link);
    const checkpoints = startBackgroundCheckpoints(store.sqlite!, link, 'NORMAL', {
      intervalMs: 20,
      maxWaitMs: 3_600_000,
    });
    try {
      const before = fileSize(file);
      writePages(store, 50);
      await waitFor('the checkpoint', () => fileSize(file) >= before + 50 * PAGE, 10_000);
    } finally {
      await checkpoints.stop();
    }
  }));

test('a store opened through a symbolic link reads the header beside the file', async () => {
  const file = freshFile();
  const link = join(dir, `link-${files}.sqlite3`);
  symlinkSync(file, link);
  const store = openSqlite({ source: link });
  try {
    await expectCopiedAfterMaxWait(store, file);
  } finally {
    await store.close();
  }
});

test('the WAL file is cut back to its limit when the log starts again', () =>
  onFileStore(async (store, file) => {
    store.checkpointInBackground!({
      intervalMs: 20,
      batchFrames: 1,
      walSizeLimitBytes: 256 * 1024,
    });
    assert.equal(readValue(store, 'PRAGMA journal_size_limit'), 256 * 1024);
    writePages(store, 1_500);
    assert.ok(fileSize(`${file}-wal`) >= 1_500 * PAGE);
    // The first commit after a checkpoint that copied the whole log starts it again, and
    // cuts the file back; until the worker's has, each commit finds it still needed.
    await waitFor(
      'the log to start again',
      () => {
        writePages(store, 1);
        return fileSize(`${file}-wal`) <= 256 * 1024;
      },
      10_000,
    );
    assert.ok(fileSize(file) >= 1_500 * PAGE);
  }));

test('past the backstop the serving connection checkpoints after all', () =>
  onFileStore((store, file) => {
    store.checkpointInBackground!({ intervalMs: 3_600_000, backstopPages: 200 });
    writePages(store, 500);
    assert.ok(fileSize(file) >= 500 * PAGE, `database file ${fileSize(file)} bytes`);
  }));

/** Descriptors this process holds open on the file (Linux: /proc/self/fd). */
function openDescriptors(path: string): number {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path;
    } catch {
      return false;
    }
  }).length;
}

test(
  'closing the store stops the worker and its connection, and removes the WAL',
  { skip: !existsSync('/proc/self/fd') && 'no /proc/self/fd here' },
  async () => {
    const file = freshFile();
    const store = openSqlite({ source: file });
    store.checkpointInBackground!({ intervalMs: 3_600_000 });
    await waitFor('the worker connection', () => openDescriptors(file) === 2, 10_000);
    writePages(store, 300);
    assert.ok(existsSync(`${file}-wal`));
    await store.close();
    assert.equal(openDescriptors(file), 0);
    assert.equal(existsSync(`${file}-wal`), false);
    assert.ok(fileSize(file) >= 300 * PAGE);
  },
);

test('a worker that fails gives the connection its own checkpoints back and says so', () =>
  onFileStore(async (store) => {
    const failures: unknown[] = [];
    // A path with no database: the worker's connection cannot open.
    const checkpoints = startBackgroundCheckpoints(store.sqlite!, join(dir, 'none'), 'NORMAL', {
      onError: (err) => failures.push(err),
    });
    assert.equal(readValue(store, 'PRAGMA wal_autocheckpoint'), 10_000);
    await waitFor('the failure', () => failures.length > 0, 10_000);
    // The worker's error arrives as a copy: its message, not its class.
    assert.match((failures[0] as Error).message, /unable to open database file/);
    assert.equal(readValue(store, 'PRAGMA wal_autocheckpoint'), 1_000);
    await checkpoints.stop();
    assert.equal(failures.length, 1);
  }));

test('a database in memory has no WAL and offers no background checkpoints', async () => {
  const store = openSqlite({ source: ':memory:' });
  assert.equal(store.checkpointInBackground, undefined);
  await store.close();
});
