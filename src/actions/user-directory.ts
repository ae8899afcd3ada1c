// Reading users as a given viewer sees them.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { badRequest } from '../lib/errors.ts';
import { presentInaccessibleUser, presentUser } from '../lib/presenters/users.ts';
import { fakeEmailDomain, realmUrl } from '../lib/realm-url.ts';
import type { RealmRow, UserRow } from '../store/schema.ts';
import * as usersStore from '../store/users.ts';
import { accessibleUserIds, isUserId } from './user-access.ts';
import { listProfileData } from './profile-fields.ts';

export interface DirectoryOptions {
  clientGravatar: boolean;
  includeProfileData: boolean;
  userIds?: number[];
  /**
   * Leave out users the viewer cannot access instead of listing them as "Unknown user"
   * (clients with the user_list_incomplete capability).
   */
  userListIncomplete?: boolean;
}

/** Custom profile data by user id: field id -> {value, rendered_value for Markdown types}. */
export async function loadProfileData(
  ctx: AppContext,
  realmId: number,
  userIds: number[],
): Promise<Map<number, Record<string, unknown>>> {
  return listProfileData(ctx.db, realmId, userIds);
}

/** The placeholder a limited guest sees for a user they cannot access. */
export function presentInaccessibleUserFor(
  ctx: AppContext,
  realm: RealmRow,
  userId: number,
): Record<string, unknown> {
  const base = realmUrl(ctx.config.externalUrl, realm.string_id);
  return presentInaccessibleUser(
    userId,
    fakeEmailDomain(ctx.config.externalUrl, realm.string_id),
    `${base}/static/images/unknown-user-avatar.png`,
  );
}

/** Every user of the organization (bots and deactivated users included) as the actor sees them. */
export async function presentUsersFor(
  ctx: AppContext,
  actor: Actor,
  opts: DirectoryOptions,
): Promise<Record<string, unknown>[]> {
  let rows: readonly UserRow[];
  if (opts.userIds) {
    const ids = [...new Set(opts.userIds)];
    rows = await usersStore.listUsersByIds(ctx.db, actor.realm.id, ids.filter(isUserId));
    const missing = ids.find((id) => !rows.some((u) => u.id === id));
    if (missing !== undefined) throw badRequest(`Invalid user ID: ${missing}`);
  } else {
    rows = await usersStore.listUsers(ctx.db, actor.realm.id);
  }
  const visible = await accessibleUserIds(ctx.db, actor.realm, actor.user);
  const canSee = (u: UserRow): boolean => visible === null || u.is_bot === 1 || visible.has(u.id);
  const profiles = opts.includeProfileData
    ? await loadProfileData(
        ctx,
        actor.realm.id,
        rows.filter(canSee).map((u) => u.id),
      )
    : new Map();
  const out: Record<string, unknown>[] = [];
  for (const u of rows) {
    if (canSee(u)) {
      out.push(
        presentUser(u, actor.user, {
          clientGravatar: opts.clientGravatar,
          includeProfileData: opts.includeProfileData,
          profileData: profiles.get(u.id),
        }),
      );
    } else if (!opts.userListIncomplete) {
      out.push(presentInaccessibleUserFor(ctx, actor.realm, u.id));
    }
  }
  return out;
}

export async function presentUserFor(
  ctx: AppContext,
  actor: Actor,
  target: UserRow,
  opts: Omit<DirectoryOptions, 'userIds' | 'userListIncomplete'>,
): Promise<Record<string, unknown>> {
  const profiles = opts.includeProfileData
    ? await loadProfileData(ctx, actor.realm.id, [target.id])
    : new Map();
  return presentUser(target, actor.user, {
    clientGravatar: opts.clientGravatar,
    includeProfileData: opts.includeProfileData,
    profileData: profiles.get(target.id),
  });
}

/** GET /users/me: the caller's own user object and the legacy max_message_id. */
export async function presentOwnUser(
  ctx: AppContext,
  actor: Actor,
): Promise<Record<string, unknown>> {
  return {
    ...(await presentUserFor(ctx, actor, actor.user, {
      clientGravatar: false,
      includeProfileData: true,
    })),
    max_message_id: await usersStore.maxMessageIdForUser(ctx.db, actor.user.id),
  };
}
