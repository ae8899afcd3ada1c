// Presence data in its API forms. The server keeps two times per user: the last time a
// client reported the user active, and the last time any client was connected. The
// modern form gives both; the legacy form collapses them into one status per client, and
// since the server no longer tracks clients, the one client is always "website".

/** Presence pushed as events only in organizations up to this many active users. */
export const USER_LIMIT_FOR_SENDING_PRESENCE_UPDATE_EVENTS = 100;
/** Repeated pings within this many seconds do not move a stored time. */
export const PRESENCE_UPDATE_MIN_FREQ_SECONDS = 55;
/** Legacy status is "active" when activity is at most this much older than the last connection. */
const LEGACY_ACTIVITY_OFFSET_SECONDS = 70;
export const DEFAULT_PRESENCE_HISTORY_DAYS = 14;

export interface PresenceTimes {
  last_active_time: number | null;
  last_connected_time: number | null;
}

export interface ModernPresence {
  active_timestamp: number;
  idle_timestamp: number;
}

export interface LegacyClientPresence {
  client: 'website';
  status: 'active' | 'idle';
  timestamp: number;
  pushable: false;
}

export interface LegacyPresence {
  aggregated: { client: 'website'; status: 'active' | 'idle'; timestamp: number };
  website: LegacyClientPresence;
}

/** Times never reported count as the user's joining time. */
function timesOf(p: PresenceTimes, dateJoined: number): [active: number, connected: number] {
  return [p.last_active_time ?? dateJoined, p.last_connected_time ?? dateJoined];
}

export function modernPresence(p: PresenceTimes, dateJoined: number): ModernPresence {
  const [active, connected] = timesOf(p, dateJoined);
  return { active_timestamp: active, idle_timestamp: connected };
}

export function legacyClientPresence(p: PresenceTimes, dateJoined: number): LegacyClientPresence {
  const [active, connected] = timesOf(p, dateJoined);
  const isActive = active + LEGACY_ACTIVITY_OFFSET_SECONDS >= connected;
  return {
    client: 'website',
    status: isActive ? 'active' : 'idle',
    timestamp: isActive ? active : connected,
    pushable: false,
  };
}

export function legacyPresence(p: PresenceTimes, dateJoined: number): LegacyPresence {
  const website = legacyClientPresence(p, dateJoined);
  return {
    aggregated: { client: website.client, status: website.status, timestamp: website.timestamp },
    website,
  };
}

export interface PresenceChange {
  /** Whether the times are to be stored (a first report, or a time moved). */
  changed: boolean;
  /** Whether the user just came online: a first report, or active after being offline. */
  cameOnline: boolean;
  times: { last_active_time: number | null; last_connected_time: number };
}

/**
 * A client's report at `now`. Times move only when the stored one is older than the
 * minimum update interval (several open clients ping independently); coming online means
 * reporting active after the offline threshold passed since the last active report.
 */
export function applyPresenceReport(
  stored: PresenceTimes | undefined,
  active: boolean,
  now: number,
  offlineThresholdSeconds: number,
): PresenceChange {
  if (!stored) {
    return {
      changed: true,
      cameOnline: true,
      times: { last_active_time: active ? now : null, last_connected_time: now },
    };
  }
  const sinceActive = stored.last_active_time === null ? Infinity : now - stored.last_active_time;
  const sinceConnected =
    stored.last_connected_time === null ? Infinity : now - stored.last_connected_time;
  let lastActive = stored.last_active_time;
  let lastConnected = stored.last_connected_time ?? now;
  let changed = false;
  if (sinceConnected > PRESENCE_UPDATE_MIN_FREQ_SECONDS) {
    lastConnected = now;
    changed = true;
  }
  if (active && sinceActive > PRESENCE_UPDATE_MIN_FREQ_SECONDS) {
    lastActive = now;
    // Connected is never older than active.
    if (now > lastConnected) lastConnected = now;
    changed = true;
  }
  return {
    changed,
    cameOnline: active && sinceActive > offlineThresholdSeconds,
    times: { last_active_time: lastActive, last_connected_time: lastConnected },
  };
}
