// Whether another connection (a command-line action, another process) has committed to the
// SQLite file since the last look; kept reads and the accounts version must not outlive such
// a commit (table-writes.ts). `PRAGMA data_version` tells, but each read of it opens a read
// transaction: two fcntl locks on the -shm file and an fstat, 1-3 µs, and it is read once per
// turn of the event loop, which under light load is once per request (docs/performance.md,
// item 3). Every commit, by any connection, rewrites the WAL-index header at the start of
// the -shm file (its change counter and last frame), and reading those bytes is one pread of
// the page SQLite's connections share; so the pragma is asked only when they moved, after
// this connection's own commits or another's.
import { closeSync, openSync, readSync } from 'node:fs';
import type SQLite from 'better-sqlite3';
import { keepForLife } from './sqlite-lifetime.ts';

/** The first copy of the WAL-index header (SQLite's file format, "WAL-index format"). */
const HEADER_BYTES = 48;

export interface OtherCommits {
  /** True once for each look after which another connection's commit was first seen. */
  look(): boolean;
  close(): void;
}

/**
 * Looks through the -shm file of `file` (a database in WAL mode), or through the pragma
 * alone for a database in memory or when the -shm file cannot be read.
 */
export function watchOtherCommits(sqlite: SQLite.Database, file: string | null): OtherCommits {
  const dataVersion = keepForLife(sqlite.prepare('PRAGMA data_version')).pluck();
  // A first read transaction opens the WAL, and with it the -shm file.
  dataVersion.get();
  // Outside WAL mode (a file system without shared memory) a -shm file is a stale leftover.
  const mode = keepForLife(sqlite.prepare('PRAGMA journal_mode')).pluck().get();
  let shm = file === null || mode !== 'wal' ? null : openShm(`${file}-shm`);
  const header = Buffer.alloc(HEADER_BYTES);
  const lastHeader = Buffer.alloc(HEADER_BYTES);
  // The header before the version: a commit between the two reads moves the header, and the
  // next look asks the pragma, which has seen it or sees it then.
  if (shm !== null && !readHeader(shm, lastHeader)) shm = closeShm(shm);
  let seenVersion = dataVersion.get() as number;
  return {
    look() {
      if (shm !== null && !readHeader(shm, header)) shm = closeShm(shm);
      if (shm !== null) {
        if (header.equals(lastHeader)) return false;
        header.copy(lastHeader);
      }
      const now = dataVersion.get() as number;
      if (now === seenVersion) return false;
      seenVersion = now;
      return true;
    },
    close() {
      if (shm !== null) shm = closeShm(shm);
    },
  };
}

function openShm(path: string): number | null {
  try {
    return openSync(path, 'r');
  } catch {
    return null;
  }
}

function closeShm(fd: number): null {
  try {
    closeSync(fd);
  } catch {
    // Already closed; the pragma answers from now on.
  }
  return null;
}

/** False when the header could not be read whole; the pragma then answers every look. */
function readHeader(fd: number, into: Buffer): boolean {
  try {
    return readSync(fd, into, 0, HEADER_BYTES, 0) === HEADER_BYTES;
  } catch {
    return false;
  }
}
