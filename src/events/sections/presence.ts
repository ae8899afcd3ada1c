// Register snapshot section of presence: everyone's presence within the history window,
// the update id to poll from, and the time it was read. Clients that read the modern form
// (slim_presence, or simplified presence events) get it keyed by user id.
import type { AppContext } from '../../context.ts';
// The snapshot reads presence as the endpoint does (initial-state.ts may read actions/).
// eslint-disable-next-line no-restricted-imports
import { fetchPresences } from '../../actions/presence.ts';
import { unixNow } from '../../infra/clock.ts';
import type { SnapshotRequest, SnapshotSection } from '../initial-state.ts';

async function presenceSection(
  ctx: AppContext,
  req: SnapshotRequest,
): Promise<Record<string, unknown>> {
  const data = await fetchPresences(ctx.db, req.actor, {
    modern: req.client.slimPresence || req.client.capabilities.simplified_presence_events,
    historyLimitDays: req.presenceHistoryLimitDays,
    now: unixNow(ctx.clock),
    limitToAccessible: ctx.config.canAccessAllUsersGroupLimitsPresence,
  });
  return {
    presences: data.presences,
    presence_last_update_id: data.lastUpdateId,
    server_timestamp: ctx.clock.nowMs() / 1000,
  };
}

export const PRESENCE_SECTIONS: SnapshotSection[] = [
  {
    include: (req) => req.fetch === null || req.fetch.includes('presence'),
    build: presenceSection,
  },
];
