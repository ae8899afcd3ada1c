// One-time notices a user has seen.
import type { Q } from './db.ts';

export async function listSeenSteps(db: Q, userId: number): Promise<string[]> {
  const rows = await db
    .selectFrom('onboarding_steps')
    .select('name')
    .where('user_id', '=', userId)
    .execute();
  return rows.map((r) => r.name);
}

export async function markStepSeen(db: Q, userId: number, name: string, now: number) {
  await db
    .insertInto('onboarding_steps')
    .values({ user_id: userId, name, date_seen: now })
    .onConflict((oc) => oc.columns(['user_id', 'name']).doNothing())
    .execute();
}
