// Per-client event queues. (Filled in by the event-system work: register, long-poll,
// shaping, expiry, persistence.) Actions reach queues only through the bus.
import type { Notice } from './types.ts';

export class EventQueues {
  deliver(_notices: Notice[]): void {}

  /** Drop every queue of a user (deactivation, revoked credentials). */
  dropUserQueues(_userId: number): void {}

  /** Finish parked polls and stop timers (graceful shutdown). */
  async shutdown(): Promise<void> {}

  /** Write every queue with its pending events to a file (SIGTERM). */
  async saveTo(_file: string): Promise<void> {}

  /** Load queues saved by saveTo, then push a restart event to each. Returns how many. */
  async restoreFrom(_file: string): Promise<number> {
    return 0;
  }
}
