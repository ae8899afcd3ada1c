// Presence: clients report the user's status every minute and read everyone else's.
//
// A report moves the user's stored times (never for users who turned presence sharing
// off) and stamps the row with the realm's next presence update id, so that a client
// passing the last id it saw gets only newer rows. Only coming online is pushed as an
// event, and only in organizations small enough for that to be cheap; everything else is
// learnt by polling.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { badRequest } from '../lib/errors.ts';
import {
  applyPresenceReport,
  DEFAULT_PRESENCE_HISTORY_DAYS,
  legacyClientPresence,
  legacyPresence,
  modernPresence,
  USER_LIMIT_FOR_SENDING_PRESENCE_UPDATE_EVENTS,
} from '../lib/presence.ts';
import { readRealmSettings } from '../lib/realm-settings.ts';
import { PRESENCE_OFFLINE_THRESHOLD_SECONDS } from '../lib/server-limits.ts';
import { readUserSettings } from '../lib/user-settings.ts';
import { unixNow } from '../infra/clock.ts';
import type { Q } from '../store/db.ts';
import * as presenceStore from '../store/presence.ts';
import type { RealmRow, UserRow } from '../store/schema.ts';
import * as usersStore from '../store/users.ts';
import { accessCurrentActor } from './permissions.ts';
import { withTransaction } from './transaction.ts';
import { accessibleUserIds, canAccessUser, isUserId, usersWhoCanAccess } from './user-access.ts';

export interface UpdatePresenceParams {
  status: string;
  lastUpdateId?: number;
  historyLimitDays?: number;
  pingOnly?: boolean;
  newUserInput?: boolean;
  slimPresence?: boolean;
}

export interface PresenceQuery {
  /** Keys are user ids with the modern form, else API emails with the legacy form. */
  modern: boolean;
  lastUpdateId?: number;
  historyLimitDays?: number | null;
  now: number;
  /** CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE. */
  limitToAccessible: boolean;
}

export interface PresenceData {
  presences: Record<string, unknown>;
  lastUpdateId: number;
}

const presenceDisabled = (realm: RealmRow): boolean =>
  readRealmSettings(realm.settings).presence_disabled === true;
const sharesPresence = (settings: string): boolean =>
  readUserSettings(settings).presence_enabled !== false;

/**
 * The organization's presence data for the viewer: rows changed after lastUpdateId, and
 * unless the client already has data (lastUpdateId > 0), only users connected within the
 * history window.
 */
export async function fetchPresences(
  db: Q,
  actor: Actor,
  query: PresenceQuery,
): Promise<PresenceData> {
  const nothing = { presences: {}, lastUpdateId: query.lastUpdateId ?? -1 };
  if (presenceDisabled(actor.realm)) return nothing;
  const days = query.historyLimitDays ?? DEFAULT_PRESENCE_HISTORY_DAYS;
  const windowed = query.lastUpdateId === undefined || query.lastUpdateId <= 0;
  const rows = await presenceStore.listPresences(db, actor.realm.id, {
    afterUpdateId: query.lastUpdateId,
    connectedSince: windowed ? query.now - days * 86400 : undefined,
  });
  const reachable = query.limitToAccessible
    ? await accessibleUserIds(db, actor.realm, actor.user)
    : null;
  const presences: Record<string, unknown> = {};
  let max = -1;
  for (const row of rows) {
    if (!sharesPresence(row.settings)) continue;
    if (reachable && !reachable.has(row.user_id)) continue;
    max = Math.max(max, row.last_update_id);
    if (query.modern) presences[String(row.user_id)] = modernPresence(row, row.date_joined);
    else presences[row.email] = legacyPresence(row, row.date_joined);
  }
  return { presences, lastUpdateId: max >= 0 ? max : nothing.lastUpdateId };
}

/** Store a report of the user's status; the presence event when they came online. */
async function recordPresence(
  ctx: AppContext,
  actor: Actor,
  active: boolean,
  now: number,
): Promise<void> {
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const stored = await presenceStore.getPresence(work.db, actor.user.id);
    const change = applyPresenceReport(stored, active, now, PRESENCE_OFFLINE_THRESHOLD_SECONDS);
    // A report that moves nothing writes nothing, so it answers as it would have before any
    // change since, without reading the user again: of several open clients' reports, only
    // the first in a minute moves the times.
    if (!change.changed) return;
    // As they are now: deactivated since, they report nothing; no longer sharing presence,
    // their times stay as they were (architecture.md, Actions).
    const me = await accessCurrentActor(work.db, actor);
    if (!sharesPresence(me.user.settings)) return;
    const { user, realm } = me;
    const updateId = await presenceStore.nextPresenceUpdateId(work.db, realm.id);
    const row = { user_id: user.id, realm_id: realm.id, ...change.times, last_update_id: updateId };
    await presenceStore.upsertPresence(work.db, row);
    // The organization may have turned presence off since the report was accepted.
    if (!change.cameOnline || presenceDisabled(realm)) return;
    const recipients = ctx.config.canAccessAllUsersGroupLimitsPresence
      ? await usersWhoCanAccess(work.db, realm, user.id)
      : await usersStore.listActiveUserIds(work.db, realm.id);
    if (recipients.length > USER_LIMIT_FOR_SENDING_PRESENCE_UPDATE_EVENTS) return;
    const website = legacyClientPresence(row, user.date_joined);
    work.emitOnCommit(
      {
        type: 'presence',
        user_id: user.id,
        email: user.email,
        server_timestamp: ctx.clock.nowMs() / 1000,
        presence: { website },
        presences: { [String(user.id)]: modernPresence(row, user.date_joined) },
      },
      recipients,
    );
  });
}

/** POST /users/me/presence. */
export async function doUpdatePresence(
  ctx: AppContext,
  actor: Actor,
  params: UpdatePresenceParams,
): Promise<Record<string, unknown>> {
  if (params.status !== 'active' && params.status !== 'idle') {
    throw badRequest(`Invalid status: ${params.status}`);
  }
  const now = unixNow(ctx.clock);
  if (sharesPresence(actor.user.settings)) {
    await recordPresence(ctx, actor, params.status === 'active', now);
  }
  const out: Record<string, unknown> = {};
  if (!params.pingOnly) {
    const data = await fetchPresences(ctx.db, actor, {
      // Passing last_update_id is how a modern client says it reads the modern form.
      modern: params.slimPresence === true || params.lastUpdateId !== undefined,
      lastUpdateId: params.lastUpdateId,
      historyLimitDays: params.historyLimitDays,
      now,
      limitToAccessible: ctx.config.canAccessAllUsersGroupLimitsPresence,
    });
    out.presences = data.presences;
    out.server_timestamp = ctx.clock.nowMs() / 1000;
    out.presence_last_update_id = data.lastUpdateId;
  }
  // Only zephyr-mirroring organizations ever had it true; Parley has none.
  out.zephyr_mirror_active = false;
  return out;
}

/** GET /realm/presence: everyone's presence in the legacy form. */
export async function fetchRealmPresence(
  ctx: AppContext,
  actor: Actor,
): Promise<Record<string, unknown>> {
  const data = await fetchPresences(ctx.db, actor, {
    modern: false,
    now: unixNow(ctx.clock),
    limitToAccessible: ctx.config.canAccessAllUsersGroupLimitsPresence,
  });
  return { server_timestamp: ctx.clock.nowMs() / 1000, presences: data.presences };
}

async function findUser(ctx: AppContext, actor: Actor, idOrEmail: string): Promise<UserRow> {
  const asId = /^\d+$/.test(idOrEmail) ? Number(idOrEmail) : null;
  const user =
    asId !== null
      ? isUserId(asId)
        ? await usersStore.getUserById(ctx.db, actor.realm.id, asId)
        : undefined
      : await usersStore.getUserByApiEmail(ctx.db, actor.realm.id, idOrEmail);
  if (!user) throw badRequest('No such user');
  return user;
}

/**
 * GET /users/{user_id_or_email}/presence: one user's status and its time, "offline" once
 * the offline threshold has passed.
 */
export async function fetchUserPresence(
  ctx: AppContext,
  actor: Actor,
  idOrEmail: string,
): Promise<Record<string, unknown>> {
  const target = await findUser(ctx, actor, idOrEmail);
  if (target.is_bot === 1) throw badRequest('Presence is not supported for bot users.');
  if (
    ctx.config.canAccessAllUsersGroupLimitsPresence &&
    !(await canAccessUser(ctx.db, actor.realm, actor.user, target))
  ) {
    throw badRequest('Insufficient permission');
  }
  const row = await presenceStore.getPresence(ctx.db, target.id);
  if (!row || presenceDisabled(actor.realm) || !sharesPresence(target.settings)) {
    throw badRequest(`No presence data for ${idOrEmail}`);
  }
  const { website } = legacyPresence(row, target.date_joined);
  const now = unixNow(ctx.clock);
  const offline = now - website.timestamp > PRESENCE_OFFLINE_THRESHOLD_SECONDS;
  return {
    presence: {
      aggregated: { status: offline ? 'offline' : website.status, timestamp: website.timestamp },
      website: { status: website.status, timestamp: website.timestamp },
    },
  };
}
