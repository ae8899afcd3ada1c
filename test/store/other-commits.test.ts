// Another connection's commits to the SQLite file are seen by the server's connection, read
// through the WAL-index header when it can be and through PRAGMA data_version otherwise.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { watchOtherCommits, type OtherCommits } from '../../src/store/other-commits.ts';

const dir = mkdtempSync(join(tmpdir(), 'parley-other-commits-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;

interface Pair {
  /** The server's connection, watched. */
  own: SQLite.Database;
  /** Another connection to the same file (a command-line action, another process). */
  other: SQLite.Database;
  commits: OtherCommits;
}

/** Two connections to a new file in journalMode, the first watched; all closed afterwards. */
function withPair(
  run: (pair: Pair) => void,
  { journalMode = 'WAL', leftoverShm = false } = {},
): void {
  const file = join(dir, `db-${++files}.sqlite3`);
  const own = new SQLite(file);
  own.exec(`PRAGMA journal_mode = ${journalMode}`);
  own.exec('CREATE TABLE t (x INTEGER)');
  const other = new SQLite(file);
  if (leftoverShm) writeFileSync(`${file}-shm`, Buffer.alloc(32 * 1024));
  const commits = watchOtherCommits(own, file);
  try {
    run({ own, other, commits });
  } finally {
    commits.close();
    other.close();
    own.close();
  }
}

test("this connection's commits are not another's; each of another's is seen once", () => {
  withPair(({ own, other, commits }) => {
    assert.equal(commits.look(), false, 'nothing committed');
    own.exec('INSERT INTO t VALUES (1)');
    assert.equal(commits.look(), false, 'its own commit');
    other.exec('INSERT INTO t VALUES (2)');
    assert.equal(commits.look(), true);
    assert.equal(commits.look(), false, 'seen once');
    const seen: boolean[] = [];
    for (let i = 0; i < 20; i++) {
      other.exec(`INSERT INTO t VALUES (${i})`);
      seen.push(commits.look());
      own.exec(`INSERT INTO t VALUES (${i})`);
      seen.push(commits.look());
    }
    assert.deepEqual(
      seen,
      Array.from({ length: 40 }, (_, i) => i % 2 === 0),
    );
  });
});

test("another's commit right after this connection's own, before a look, is seen", () => {
  withPair(({ own, other, commits }) => {
    own.exec('INSERT INTO t VALUES (1)');
    other.exec('INSERT INTO t VALUES (2)');
    own.exec('INSERT INTO t VALUES (3)');
    assert.equal(commits.look(), true);
    assert.equal(commits.look(), false);
  });
});

test('commits after a checkpoint has emptied the WAL and the log has started again are seen', () => {
  withPair(({ own, other, commits }) => {
    other.exec('INSERT INTO t VALUES (1)');
    assert.equal(commits.look(), true);
    other.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    // SQLite's data_version counts another's truncation of the log as a change.
    commits.look();
    other.exec('INSERT INTO t VALUES (2)');
    assert.equal(commits.look(), true, 'the first commit of the new log');
    own.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    assert.equal(commits.look(), false, 'its own checkpoint');
    own.exec('INSERT INTO t VALUES (3)');
    assert.equal(commits.look(), false, 'its own first commit of a new log');
    other.exec('INSERT INTO t VALUES (4)');
    assert.equal(commits.look(), true);
  });
});

test('outside WAL mode a leftover -shm file is not read, and commits are still seen', () => {
  withPair(
    ({ own, other, commits }) => {
      assert.equal(commits.look(), false);
      other.exec('INSERT INTO t VALUES (1)');
      assert.equal(commits.look(), true);
      own.exec('INSERT INTO t VALUES (2)');
      assert.equal(commits.look(), false);
    },
    { journalMode: 'DELETE', leftoverShm: true },
  );
});

test('a database in memory has no other connection', () => {
  const own = new SQLite(':memory:');
  const commits = watchOtherCommits(own, null);
  try {
    own.exec('CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)');
    assert.equal(commits.look(), false);
  } finally {
    commits.close();
    own.close();
  }
});
