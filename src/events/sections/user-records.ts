// Register snapshot sections of issue 6's records: muted users, custom profile fields,
// code playgrounds and onboarding steps.
import type { SnapshotSection } from '../initial-state.ts';
// The snapshot composes these areas' read-only helpers, as initial-state.ts does.
// eslint-disable-next-line no-restricted-imports
import { listMutedUsers } from '../../actions/muted-users.ts';
// eslint-disable-next-line no-restricted-imports
import { listProfileFields } from '../../actions/profile-fields.ts';
// eslint-disable-next-line no-restricted-imports
import { listPlaygrounds } from '../../actions/playgrounds.ts';
// eslint-disable-next-line no-restricted-imports
import { listOnboardingSteps } from '../../actions/onboarding.ts';
import { FIELD_TYPES } from '../../lib/profile-fields.ts';

const wanted = (type: string) => (req: { fetch: readonly string[] | null }) =>
  req.fetch === null || req.fetch.includes(type);

export const USER_RECORD_SECTIONS: SnapshotSection[] = [
  {
    include: wanted('muted_users'),
    build: async (ctx, req) => ({ muted_users: await listMutedUsers(ctx.db, req.actor.user.id) }),
  },
  {
    include: wanted('custom_profile_fields'),
    build: async (ctx, req) => ({
      custom_profile_fields: await listProfileFields(ctx.db, req.actor.realm.id),
      custom_profile_field_types: FIELD_TYPES,
    }),
  },
  {
    include: wanted('realm_playgrounds'),
    build: async (ctx, req) => ({
      realm_playgrounds: await listPlaygrounds(ctx.db, req.actor.realm.id),
    }),
  },
  {
    include: wanted('onboarding_steps'),
    build: async (ctx, req) => ({
      onboarding_steps: await listOnboardingSteps(ctx.db, req.actor.user.id),
      // Parley has no navigation tour video.
      navigation_tour_video_url: null,
    }),
  },
];
