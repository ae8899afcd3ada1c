// Register snapshot section of user groups: deactivated ones only for clients that declared
// include_deactivated_groups.
import type { SnapshotSection } from '../initial-state.ts';
// The snapshot composes the groups area's read-only helper, as initial-state.ts does.
// eslint-disable-next-line no-restricted-imports
import { listUserGroups } from '../../actions/user-groups.ts';

export const USER_GROUPS_SECTION: SnapshotSection = {
  include: (req) => req.fetch === null || req.fetch.includes('realm_user_groups'),
  build: async (ctx, req) => ({
    realm_user_groups: await listUserGroups(
      ctx.db,
      req.actor.realm,
      req.client.capabilities.include_deactivated_groups,
    ),
  }),
};
