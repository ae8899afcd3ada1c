// The caller's one-time notices (listed by /register).
import { Type } from 'typebox';
import { markOnboardingStepSeen } from '../../actions/onboarding.ts';
import { defineRoute } from '../route.ts';

export const onboardingRoutes = [
  defineRoute({
    method: 'POST',
    url: '/users/me/onboarding_steps',
    summary: 'Mark a one-time notice seen',
    tags: ['users'],
    auth: 'user',
    params: Type.Object({ onboarding_step: Type.String({ maxLength: 100 }) }),
    handler: async ({ ctx, actor, params }) => {
      await markOnboardingStepSeen(ctx, actor, params.onboarding_step);
      return {};
    },
  }),
];
