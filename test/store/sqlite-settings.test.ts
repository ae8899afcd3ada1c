// The settings every SQLite connection of Parley opens with (src/store/db.ts openSqlite).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { openSqlite } from '../../src/store/db.ts';
import { keepForLife } from '../../src/store/sqlite-lifetime.ts';

const dir = mkdtempSync(join(tmpdir(), 'parley-sqlite-settings-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function settingsOf(file: string, synchronous?: 'NORMAL' | 'FULL') {
  const store = openSqlite({ source: join(dir, file), ...(synchronous ? { synchronous } : {}) });
  const raw = store.sqlite!;
  const read = (name: string) =>
    keepForLife(raw.prepare(`PRAGMA ${name}`))
      .pluck()
      .get();
  const settings = {
    journal_mode: read('journal_mode'),
    synchronous: read('synchronous'),
    foreign_keys: read('foreign_keys'),
    busy_timeout: read('busy_timeout'),
    temp_store: read('temp_store'),
  };
  raw.close();
  return settings;
}

test('a database file opens in WAL mode, NORMAL sync, foreign keys on, statement journals in memory', () => {
  // synchronous: 1 = NORMAL, 2 = FULL; temp_store: 2 = MEMORY.
  assert.deepEqual(settingsOf('default.sqlite3'), {
    journal_mode: 'wal',
    synchronous: 1,
    foreign_keys: 1,
    busy_timeout: 5000,
    temp_store: 2,
  });
});

test('PARLEY_SQLITE_SYNCHRONOUS=FULL: the connection runs NORMAL, its commits synced after it', () => {
  // FULL's one sync more, the WAL at each commit, is made outside SQLite (wal-sync.ts).
  assert.deepEqual(settingsOf('full.sqlite3', 'FULL'), {
    journal_mode: 'wal',
    synchronous: 1,
    foreign_keys: 1,
    busy_timeout: 5000,
    temp_store: 2,
  });
});
