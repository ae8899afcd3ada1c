// Captures the notices actions publish on the event bus, so tests can assert the exact
// events of an action and their exact recipients without going through event queues.
import type { TestApp } from './app.ts';
import type { Notice, ParleyEvent } from '../../src/events/types.ts';

/** One published event and who it is for (user ids sorted). */
export interface Sent {
  event: ParleyEvent;
  users: number[];
}

const MARKER = '__test_notices_marker__';

export interface NoticeLog {
  /** Everything published since the last take(), in order, and forget it. */
  take(): Promise<Sent[]>;
  /** The raw notices published since the last take() (with realmId and seq). */
  takeRaw(): Promise<Notice[]>;
}

/**
 * Subscribe to the app's bus. With the Redis bus delivery is asynchronous, so take()
 * first publishes a marker and waits for it: everything published before it has arrived.
 */
export function captureNotices(t: TestApp, opts: { exclude?: string[] } = {}): NoticeLog {
  // A suite about one area may leave other areas' event types to their own suites.
  const excluded = new Set(opts.exclude ?? []);
  let seen: Notice[] = [];
  const waiting = new Map<string, () => void>();
  t.ctx.bus.subscribe((notices) => {
    for (const n of notices) {
      if (n.event.type === MARKER) waiting.get(String(n.event.token))?.();
      else if (!excluded.has(n.event.type)) seen.push(n);
    }
  });
  let counter = 0;
  const flush = async (): Promise<Notice[]> => {
    const token = `${process.pid}-${++counter}`;
    const arrived = new Promise<void>((resolve) => waiting.set(token, resolve));
    await t.ctx.bus.publish([{ event: { type: MARKER, token }, users: [] }]);
    await arrived;
    waiting.delete(token);
    const out = seen;
    seen = [];
    return out;
  };
  return {
    takeRaw: flush,
    async take() {
      return (await flush()).map((n) => ({
        event: n.event,
        users: [...n.users].sort((a, b) => a - b),
      }));
    },
  };
}

/** Sorted ids, for writing expected recipient lists. */
export const ids = (...users: Array<{ id: number }>): number[] =>
  users.map((u) => u.id).sort((a, b) => a - b);
