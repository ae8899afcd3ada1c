// With synchronous FULL a file database's commits are synced outside SQLite (store/wal-sync.ts):
// the connection runs NORMAL, group commit's batches wait for a sync made on the thread pool
// (and the next batch for the one before), and every other commit is synced before its
// statement returns.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { sql } from 'kysely';
import { GroupCommit } from '../../src/actions/group-commit.ts';
import { openSqlite, walSyncOf, type Store, type Tx } from '../../src/store/db.ts';
import { WalSync, type SyncFile } from '../../src/store/wal-sync.ts';

const dir = mkdtempSync(join(tmpdir(), 'parley-wal-sync-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
/** A store on a new database file with a table to write, closed after fn. */
async function onFullStore(fn: (store: Store, walSync: WalSync) => Promise<void>): Promise<void> {
  const store = openSqlite({ source: join(dir, `db-${++files}.sqlite3`), synchronous: 'FULL' });
  try {
    await sql`create table probe (id integer primary key, v text not null)`.execute(store.db);
    await fn(store, walSyncOf(store.db)!);
  } finally {
    await store.close();
  }
}

const insert = (v: string) => async (trx: Tx) => {
  await sql`insert into probe (v) values (${v})`.execute(trx);
  return v;
};

test('only a file database with synchronous FULL syncs its commits itself', async () => {
  const stores = [
    openSqlite({ source: join(dir, 'normal.sqlite3') }),
    openSqlite({ source: ':memory:', synchronous: 'FULL' }),
    openSqlite({ source: join(dir, 'full.sqlite3'), synchronous: 'FULL' }),
  ];
  try {
    assert.deepEqual(
      stores.map((s) => walSyncOf(s.db) !== null),
      [false, false, true],
    );
  } finally {
    for (const s of stores) await s.close();
  }
});

test('a batch of group commit is answered after one sync of its commit', () =>
  onFullStore(async (store, walSync) => {
    const gc = new GroupCommit(store.db);
    const before = walSync.syncCount;
    const answers = await Promise.all(['a', 'b', 'c'].map((v) => gc.run(insert(v))));
    assert.deepEqual(answers, ['a', 'b', 'c']);
    assert.equal(walSync.syncCount - before, 1);
    // A change alone in its turn: one transaction, one sync.
    assert.equal(await gc.run(insert('d')), 'd');
    assert.equal(walSync.syncCount - before, 2);
  }));

test('no change of a batch is answered before its sync is done; the next batch waits for it', () =>
  onFullStore(async (store, walSync) => {
    // The real sync, held until the test lets it run.
    const held: Array<() => void> = [];
    const sync = walSync as unknown as { syncFile: SyncFile };
    const real = sync.syncFile;
    sync.syncFile = (fd, done) => {
      held.push(() => real(fd, done));
    };
    const turns = async (n: number) => {
      for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
    };
    const stored = async () =>
      (await sql<{ v: string }>`select v from probe order by id`.execute(store.db)).rows.map(
        (r) => r.v,
      );
    const gc = new GroupCommit(store.db);
    let answered = '';
    const first = gc.run(insert('first')).then((v) => (answered += v));
    while (held.length === 0) await turns(1);
    // Committed, not yet synced: not answered, and a change arriving now is not committed
    // before that sync is done, however many turns the loop takes meanwhile.
    const second = gc.run(insert('second')).then((v) => (answered += v));
    await turns(10);
    assert.deepEqual(await stored(), ['first']);
    assert.equal(held.length, 1);
    assert.equal(answered, '');
    held[0]();
    while (held.length === 1) await turns(1);
    assert.deepEqual(await stored(), ['first', 'second']);
    assert.equal(answered, 'first');
    held[1]();
    await Promise.all([first, second]);
    assert.equal(answered, 'firstsecond');
  }));

test('a change that fails is not synced for; the rest of its batch is', () =>
  onFullStore(async (store, walSync) => {
    const gc = new GroupCommit(store.db);
    const before = walSync.syncCount;
    const failing = gc.run(async () => {
      throw new Error('refused');
    });
    await assert.rejects(failing, /refused/);
    assert.equal(walSync.syncCount, before);
    const [ok, refused] = await Promise.allSettled([
      gc.run(insert('kept')),
      gc.run(async () => {
        throw new Error('refused');
      }),
    ]);
    assert.deepEqual(ok, { status: 'fulfilled', value: 'kept' });
    assert.equal(refused.status, 'rejected');
    assert.equal(walSync.syncCount - before, 1);
  }));

test('a write outside group commit is synced before its statement returns', () =>
  onFullStore(async (store, walSync) => {
    let before = walSync.syncCount;
    await sql`insert into probe (v) values ('alone')`.execute(store.db);
    assert.equal(walSync.syncCount - before, 1);
    // A transaction of its own that writes: synced at its commit, not at each statement.
    before = walSync.syncCount;
    await store.db.transaction().execute(async (trx) => {
      await insert('one')(trx);
      await insert('two')(trx);
      assert.equal(walSync.syncCount, before);
    });
    assert.equal(walSync.syncCount - before, 1);
  }));

test('a database reached through a symbolic link has the WAL beside its file synced', async () => {
  const file = join(dir, `db-${++files}.sqlite3`);
  const link = join(dir, `link-${files}.sqlite3`);
  symlinkSync(file, link);
  const store = openSqlite({ source: link, synchronous: 'FULL' });
  try {
    const walSync = walSyncOf(store.db)!;
    await sql`create table probe (id integer primary key, v text not null)`.execute(store.db);
    const before = walSync.syncCount;
    await sql`insert into probe (v) values ('linked')`.execute(store.db);
    assert.equal(walSync.syncCount - before, 1);
    const rows = await sql<{ v: string }>`select v from probe`.execute(store.db);
    assert.deepEqual(rows.rows, [{ v: 'linked' }]);
  } finally {
    await store.close();
  }
});

test('reads, in a transaction or not, sync nothing', () =>
  onFullStore(async (store, walSync) => {
    await sql`insert into probe (v) values ('x')`.execute(store.db);
    const before = walSync.syncCount;
    await sql`select * from probe`.execute(store.db);
    await store.db.transaction().execute((trx) => sql`select * from probe`.execute(trx));
    assert.equal(walSync.syncCount, before);
  }));

/** What the serving connection reports of a transaction that writes and is group commit's. */
function deferredCommit(walSync: WalSync): void {
  walSync.afterStatement(true, false, true); // BEGIN
  walSync.afterStatement(false, true, true); // INSERT
  walSync.deferCommit();
  walSync.afterStatement(true, true, false); // COMMIT
}

test('answers keep the order of their commits when a later sync ends first', async () => {
  const file = join(dir, 'order.sqlite3');
  const store = openSqlite({ source: file });
  try {
    await sql`create table probe (id integer primary key)`.execute(store.db);
    // Syncs that end in the reverse of the order they started in.
    const pending: Array<() => void> = [];
    const walSync = new WalSync(`${file}-wal`, (_fd, done) => pending.push(() => done(null)));
    const order: string[] = [];
    deferredCommit(walSync);
    const first = walSync.flush().then(() => order.push('first'));
    deferredCommit(walSync);
    const second = walSync.flush().then(() => order.push('second'));
    assert.equal(pending.length, 2);
    pending[1]();
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(order, []);
    pending[0]();
    await Promise.all([first, second]);
    assert.deepEqual(order, ['first', 'second']);
    walSync.close();
  } finally {
    await store.close();
  }
});

test('a failed sync fails its commit and every later one', async () => {
  const file = join(dir, 'failing.sqlite3');
  const store = openSqlite({ source: file });
  try {
    await sql`create table probe (id integer primary key)`.execute(store.db);
    // The disk's answer to a sync, which no test can make fail for real.
    const walSync = new WalSync(`${file}-wal`, (_fd, done) =>
      done(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' })),
    );
    deferredCommit(walSync);
    const failed = { message: 'syncing the SQLite WAL failed: EIO: i/o error, fdatasync' };
    await assert.rejects(walSync.flush(), { ...failed, code: 'EIO' });
    // Nothing new to sync: still refused, and a write on its own throws.
    await assert.rejects(walSync.flush(), failed);
    assert.throws(() => walSync.afterStatement(false, false, false), failed);
    walSync.close();
  } finally {
    await store.close();
  }
});
