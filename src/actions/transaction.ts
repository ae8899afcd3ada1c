// Every write runs in one transaction; its events are queued on the transaction and
// published only after commit, so a rolled-back change emits nothing.
import type { AppContext } from '../context.ts';
import type { Tx } from '../store/db.ts';
import type { Notice, ParleyEvent } from '../events/types.ts';

export interface Work {
  db: Tx;
  /** Queue an event for these users, sent after the transaction commits. */
  emitOnCommit(
    event: ParleyEvent,
    users: Iterable<number>,
    extra?: Omit<Notice, 'event' | 'users'>,
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

export async function withTransaction<T>(
  ctx: AppContext,
  fn: (work: Work) => Promise<T>,
): Promise<T> {
  const notices: Notice[] = [];
  const result = await ctx.db.transaction().execute(async (trx) => {
    const work: Work = {
      db: trx,
      emitOnCommit(event, users, extra) {
        const ids = [...new Set(users)];
        if (ids.length > 0 || extra?.realmWide) notices.push({ event, users: ids, ...extra });
      },
    };
    return fn(work);
  });
  // The change is committed: a bus failure must not turn it into an error for the client.
  if (notices.length > 0) {
    await ctx.bus
      .publish(notices)
      .catch((err: unknown) => ctx.log.error({ err }, 'event bus publish failed'));
  }
  return result;
}
