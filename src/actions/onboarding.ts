// Onboarding steps: one-time notices a client shows a user once (a banner, an intro
// dialog). The server only remembers which ones the user has seen; /register and the
// onboarding_steps event list those still to show. Parley knows a small fixed set of
// notice names (those of the reference web app's one-time notices that a client may show
// on its own); hotspots (guided tours) are not supported.
import type { AppContext } from '../context.ts';
import { unixNow } from '../infra/clock.ts';
import type { Actor } from '../lib/actor.ts';
import { badRequest } from '../lib/errors.ts';
import type { Q } from '../store/db.ts';
import * as onboardingStore from '../store/onboarding.ts';
import { accessCurrentActor } from './permissions.ts';
import { withTransaction } from './transaction.ts';

export const ONE_TIME_NOTICES = [
  'visibility_policy_banner',
  'intro_inbox_view_modal',
  'intro_recent_view_modal',
  'first_stream_created_banner',
  'jump_to_conversation_banner',
  'non_interleaved_view_messages_fading',
  'interleaved_view_messages_fading',
] as const;

export interface OnboardingStep {
  type: 'one_time_notice';
  name: string;
}

/** The notices the user has not seen yet, in the fixed order above. */
export async function listOnboardingSteps(db: Q, userId: number): Promise<OnboardingStep[]> {
  const seen = new Set(await onboardingStore.listSeenSteps(db, userId));
  return ONE_TIME_NOTICES.filter((name) => !seen.has(name)).map((name) => ({
    type: 'one_time_notice',
    name,
  }));
}

/** Mark a notice seen; the user's clients get the remaining list (even when unchanged). */
export async function markOnboardingStepSeen(
  ctx: AppContext,
  actor: Actor,
  name: string,
): Promise<void> {
  if (actor.user.is_bot) throw badRequest('This endpoint does not accept bot requests.');
  if (!(ONE_TIME_NOTICES as readonly string[]).includes(name)) {
    throw badRequest(`Unknown onboarding_step: ${name}`);
  }
  await withTransaction(ctx, actor.realm.id, async (work) => {
    // A user deactivated since marks nothing (architecture.md, Actions).
    const me = await accessCurrentActor(work.db, actor);
    await onboardingStore.markStepSeen(work.db, me.user.id, name, unixNow(ctx.clock));
    work.emitOnCommit(
      {
        type: 'onboarding_steps',
        onboarding_steps: await listOnboardingSteps(work.db, me.user.id),
      },
      [me.user.id],
    );
  });
}
