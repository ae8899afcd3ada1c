// Every write runs in one transaction; its events are queued on the transaction and
// published only after commit, so a rolled-back change emits nothing.
//
// Register consistency: an evented transaction advances its realm's commit sequence and
// stamps its notices with it; /register reads its snapshot in one read transaction together
// with the current sequence, and the new queue drops notices the snapshot already reflects.
import type { AppContext } from '../context.ts';
import {
  commitOnPostgres,
  isLostPostgresRace,
  readVersionInTransaction,
  type Db,
  type Tx,
} from '../store/db.ts';
import { groupCommitFor } from './group-commit.ts';
import {
  advanceEventSeqStatement,
  currentEventSeq,
  eventSeqOf,
  lockRealmChanges,
  nextEventSeq,
} from '../store/realms.ts';
import type { Notice, ParleyEvent } from '../events/types.ts';

export interface Work {
  db: Tx;
  /** Queue an event for these users, sent after the transaction commits. */
  emitOnCommit(
    event: ParleyEvent,
    users: Iterable<number>,
    extra?: Pick<Notice, 'perUser' | 'realmWide'>,
  ): void;
}

/** A hook tests use to inject a failure inside a transaction (see test/hardening). */
export type FaultHook = (point: string) => void;
let faultHook: FaultHook | null = null;
export function setFaultHook(hook: FaultHook | null): void {
  faultHook = hook;
}
/** Actions call this at named points; it throws only when a test armed the hook. */
export function checkpoint(point: string): void {
  faultHook?.(point);
}

/**
 * ctx with its reads going through the transaction: for checks written for either, such as
 * accessUserById, made inside a change so that what committed before it counts.
 */
export function readingIn(ctx: AppContext, work: Work): AppContext {
  return { ...ctx, db: work.db };
}

/**
 * Let the event loop turn in the middle of long work inside a transaction. On SQLite a
 * transaction runs in one macrotask unless it yields: a send to 10,000 subscribers would
 * hold every other request for its whole length. Requests that need the database wait for
 * the commit anyway (the connection is the transaction's); the others, answered from memory
 * (authentication, server settings, parked polls), go on meanwhile.
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Run fn in a transaction of the realm. realmId is null only for work that emits nothing
 * (creating an organization).
 */
export async function withTransaction<T>(
  ctx: AppContext,
  realmId: number | null,
  fn: (work: Work) => Promise<T>,
): Promise<T> {
  if (ctx.store.dialect === 'postgres') {
    // A change checks what it changes inside its transaction (a name is free, a group is
    // active, an owner is left). Under READ COMMITTED two changes would each check before
    // the other commits: the realm's changes take turns instead, as SQLite's one writer
    // makes them (sends are batched apart, writeSends in messages.ts). One that still loses
    // a race (a unique index, a deadlock with a send) runs again once, and its checks then
    // answer as they would have.
    const run = () =>
      withSharedTransaction(ctx, realmId, 1, async (trx, [work]) => {
        await lockRealmChanges(trx, realmId ?? 0);
        return fn(work);
      });
    return run().catch((err: unknown) => (isLostPostgresRace(err) ? run() : Promise.reject(err)));
  }
  // SQLite has one writer: concurrent changes commit together, one sync for many
  // (group-commit.ts).
  const notices: Notice[] = [];
  const result = await groupCommitFor(ctx.db).run(async (trx) => {
    const value = await fn(workIn(trx, notices));
    if (notices.length > 0) stamp(notices, realmId, await nextEventSeq(trx, needRealm(realmId)));
    checkpoint('before-commit');
    return value;
  });
  await publishCommitted(ctx, notices);
  return result;
}

/** The realm of a transaction that emits events; organization creation emits none. */
function needRealm(realmId: number | null): number {
  if (realmId === null) throw new Error('a transaction that emits events must name its realm');
  return realmId;
}

function stamp(notices: Notice[], realmId: number | null, seq: number): void {
  for (const n of notices) Object.assign(n, { realmId, seq });
}

/** A change's view of its transaction: its events are gathered in notices. */
function workIn(trx: Tx, notices: Notice[]): Work {
  return {
    db: trx,
    emitOnCommit(event, users, extra) {
      const ids = [...new Set(users)];
      if (ids.length > 0 || extra?.realmWide) notices.push({ event, users: ids, ...extra });
    },
  };
}

/** The change is committed: a bus failure must not turn it into an error for the client. */
async function publishCommitted(ctx: AppContext, notices: Notice[]): Promise<void> {
  if (notices.length === 0) return;
  await ctx.bus.publish(notices).catch((err: unknown) => {
    ctx.log.error({ err }, 'event bus publish failed');
    // Not even this process's queues may get them: those that would miss them are dropped.
    ctx.queues.expectNotices(notices);
  });
}

/** What a caller of withSharedTransaction may add around its commit. */
export interface SharedCommitHooks {
  /** Called when the changes' work is done and only the commit is left. */
  committing?: () => void;
  /** The events are published only after this has settled (an earlier batch's publication). */
  publishAfter?: Promise<unknown>;
}

/**
 * Run several changes of one realm in one PostgreSQL transaction, each with its own Work:
 * they commit together, with one advance of the realm's commit sequence (a register
 * snapshot sees all of them or none), and their events are published after the commit in
 * the order of the changes. A failure anywhere rolls all of them back. The sequence's row
 * lock orders the realm's evented commits; advancing it in the COMMIT's round trip holds
 * that lock for the commit alone (commitOnPostgres).
 */
export async function withSharedTransaction<T>(
  ctx: AppContext,
  realmId: number | null,
  changes: number,
  fn: (trx: Tx, works: Work[]) => Promise<T>,
  hooks: SharedCommitHooks = {},
): Promise<T> {
  const noticesOf: Notice[][] = Array.from({ length: changes }, () => []);
  const notices = (): Notice[] => noticesOf.flat();
  const done = await commitOnPostgres(
    ctx.db,
    (trx) =>
      fn(
        trx,
        noticesOf.map((n) => workIn(trx, n)),
      ),
    () => {
      const evented = notices().length > 0 ? needRealm(realmId) : null;
      checkpoint('before-commit');
      hooks.committing?.();
      return evented === null ? null : advanceEventSeqStatement(evented);
    },
  );
  const all = notices();
  if (all.length > 0) stamp(all, realmId, eventSeqOf(done.rows, realmId!));
  await hooks.publishAfter;
  await publishCommitted(ctx, all);
  return done.value;
}

/**
 * Publish an ephemeral event (typing) now: it changes no stored state, so it has no
 * transaction and no commit sequence, and no register snapshot can already reflect it.
 */
export async function emitNow(
  ctx: AppContext,
  event: ParleyEvent,
  users: Iterable<number>,
): Promise<void> {
  const ids = [...new Set(users)];
  if (ids.length === 0) return;
  await ctx.bus
    .publish([{ event, users: ids }])
    .catch((err: unknown) => ctx.log.error({ err }, 'event bus publish failed'));
}

/**
 * Read a consistent snapshot of the realm: fn's reads and the returned sequence see the
 * same committed state.
 */
export async function withReadSnapshot<T>(
  ctx: AppContext,
  realmId: number,
  fn: (db: Db) => Promise<T>,
): Promise<{ seq: number; value: T }> {
  // SQLite transactions are serializable already; PostgreSQL needs one snapshot for all reads.
  const builder =
    ctx.store.dialect === 'postgres'
      ? ctx.db.transaction().setIsolationLevel('repeatable read')
      : ctx.db.transaction();
  return builder.execute(async (trx) => {
    // Cached reads must not be older than the snapshot (the queue drops the events of
    // changes a snapshot already shows).
    await readVersionInTransaction(trx);
    const seq = await currentEventSeq(trx, realmId);
    return { seq, value: await fn(trx) };
  });
}
