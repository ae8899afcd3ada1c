// Per-client event queues. (Filled in by the event-system work: register, long-poll,
// shaping, expiry, persistence.) Actions reach queues only through the bus.
import type { Notice } from './types.ts';

export class EventQueues {
  deliver(_notices: Notice[]): void {}

  /** Drop every queue of a user (deactivation, revoked credentials). */
  dropUserQueues(_userId: number): void {}

  async shutdown(): Promise<void> {}
}
