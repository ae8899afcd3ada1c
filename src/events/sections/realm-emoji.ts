// Register snapshot section of custom emoji: the same map as GET /realm/emoji.
// The snapshot reads emoji as the endpoint does (initial-state.ts may read actions/).
// eslint-disable-next-line no-restricted-imports
import { listRealmEmoji } from '../../actions/custom-emoji.ts';
import type { SnapshotSection } from '../initial-state.ts';

export const REALM_EMOJI_SECTION: SnapshotSection = {
  include: (req) => req.fetch === null || req.fetch.includes('realm_emoji'),
  build: async (ctx, req) => ({ realm_emoji: await listRealmEmoji(ctx, req.actor) }),
};
