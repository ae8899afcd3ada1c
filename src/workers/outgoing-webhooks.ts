// The outgoing-webhook worker: polls the stored deliveries that are due, claims each one
// (so several processes on one database do not send it twice) and runs a bounded number of
// attempts at a time. Sending a message never waits for it.
import type { AppContext } from '../context.ts';
import { unixNow } from '../infra/clock.ts';
import {
  processOutgoingWebhook,
  recordUnexpectedDeliveryFailure,
} from '../actions/outgoing-webhooks.ts';
import * as deliveriesStore from '../store/outgoing-webhooks.ts';

export interface OutgoingWebhookWorkerOptions {
  /** Requests in flight at once. */
  concurrency?: number;
  /** Deliveries taken per poll. */
  batchSize?: number;
  pollMs?: number;
}

export interface OutgoingWebhookWorker {
  /** Attempt every delivery due now; resolves with how many were attempted. */
  runOnce(): Promise<number>;
  start(): void;
  /** Stop polling and wait for attempts in flight. */
  stop(): Promise<void>;
}

/** A claimed delivery is left alone this long past its timeout, then taken again. */
const LEASE_MARGIN_SECONDS = 60;

export function createOutgoingWebhookWorker(
  ctx: AppContext,
  opts: OutgoingWebhookWorkerOptions = {},
): OutgoingWebhookWorker {
  const concurrency = opts.concurrency ?? 4;
  const batchSize = opts.batchSize ?? 50;
  const pollMs = opts.pollMs ?? 1000;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<unknown> = Promise.resolve();
  let stopped = true;

  async function runOnce(): Promise<number> {
    const now = unixNow(ctx.clock);
    const due = await deliveriesStore.listDueDeliveries(ctx.db, now, batchSize);
    const lease =
      now + Math.ceil(ctx.config.outgoingWebhookTimeoutMs / 1000) + LEASE_MARGIN_SECONDS;
    const claimed: typeof due = [];
    for (const row of due) {
      if (await deliveriesStore.claimDelivery(ctx.db, row, lease)) claimed.push(row);
    }
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < claimed.length) {
        const row = claimed[next++];
        try {
          await processOutgoingWebhook(ctx, row);
        } catch (err) {
          const again = await recordUnexpectedDeliveryFailure(ctx, row).catch(() => true);
          ctx.log.error(
            { err, delivery: row.id, attempts: row.attempts + 1, willRetry: again },
            'outgoing webhook delivery failed',
          );
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, claimed.length) }, lane));
    return claimed.length;
  }

  const tick = (): void => {
    running = runOnce()
      .catch((err: unknown) => ctx.log.error({ err }, 'outgoing webhook worker poll failed'))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, pollMs);
      });
  };

  return {
    runOnce,
    start() {
      if (!stopped) return;
      stopped = false;
      timer = setTimeout(tick, 0);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await running;
    },
  };
}
