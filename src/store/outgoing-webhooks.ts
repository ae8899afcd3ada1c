// Pending outgoing-webhook deliveries: enqueued with the message, claimed by the worker,
// rescheduled after a retryable failure, deleted when finished.
import { compiledQuery } from './compiled.ts';
import type { Q } from './db.ts';
import type { OutgoingWebhookDeliveryRow } from './schema.ts';

export interface NewDelivery {
  realm_id: number;
  bot_id: number;
  message_id: number;
  trigger: string;
  next_attempt_at: number;
}

export async function insertDeliveries(db: Q, rows: NewDelivery[]): Promise<void> {
  if (rows.length === 0) return;
  await db.insertInto('outgoing_webhook_deliveries').values(rows).execute();
}

/**
 * Compiled once: the worker asks every second, on an idle server too, where building the
 * query through Kysely each time was half of an idle server's own work (docs/performance.md,
 * session 45).
 */
const dueDeliveries = compiledQuery(2, (db, now: number, limit: number) =>
  db
    .selectFrom('outgoing_webhook_deliveries')
    .selectAll()
    .where('next_attempt_at', '<=', now)
    .orderBy('next_attempt_at')
    .orderBy('id')
    .limit(limit),
);

export async function listDueDeliveries(
  db: Q,
  now: number,
  limit: number,
): Promise<OutgoingWebhookDeliveryRow[]> {
  return dueDeliveries.all(db, now, limit);
}

export async function listDeliveries(db: Q): Promise<OutgoingWebhookDeliveryRow[]> {
  return db.selectFrom('outgoing_webhook_deliveries').selectAll().orderBy('id').execute();
}

/**
 * Take a due delivery for one attempt by pushing its time past the attempt's end; false when
 * another worker took it first.
 */
export async function claimDelivery(
  db: Q,
  row: OutgoingWebhookDeliveryRow,
  leaseUntil: number,
): Promise<boolean> {
  const result = await db
    .updateTable('outgoing_webhook_deliveries')
    .set({ next_attempt_at: leaseUntil })
    .where('id', '=', row.id)
    .where('next_attempt_at', '=', row.next_attempt_at)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function rescheduleDelivery(
  db: Q,
  id: number,
  attempts: number,
  nextAttemptAt: number,
): Promise<void> {
  await db
    .updateTable('outgoing_webhook_deliveries')
    .set({ attempts, next_attempt_at: nextAttemptAt })
    .where('id', '=', id)
    .execute();
}

export async function deleteDelivery(db: Q, id: number): Promise<void> {
  await db.deleteFrom('outgoing_webhook_deliveries').where('id', '=', id).execute();
}
