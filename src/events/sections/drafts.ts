// Register snapshot section of drafts: the newest ones, as GET /drafts presents them.
import type { SnapshotSection } from '../initial-state.ts';
// The snapshot composes the drafts area's read-only helper, as initial-state.ts does.
// eslint-disable-next-line no-restricted-imports
import { listDraftsForRegister } from '../../actions/drafts.ts';

export const DRAFTS_SECTION: SnapshotSection = {
  include: (req) => req.fetch === null || req.fetch.includes('drafts'),
  build: async (ctx, req) => ({ drafts: await listDraftsForRegister(ctx.db, req.actor.user) }),
};
