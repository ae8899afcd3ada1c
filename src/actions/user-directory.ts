// Reading users as a given viewer sees them.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { presentUser } from '../lib/presenters/users.ts';
import type { UserRow } from '../store/schema.ts';
import * as usersStore from '../store/users.ts';
import { accessibleUserIds } from './user-access.ts';

export interface DirectoryOptions {
  clientGravatar: boolean;
  includeProfileData: boolean;
  userIds?: number[];
}

/** Custom profile data by user id (filled in by custom profile fields). */
export async function loadProfileData(
  _ctx: AppContext,
  _userIds: number[],
): Promise<Map<number, Record<string, unknown>>> {
  return new Map();
}

export async function presentUsersFor(
  ctx: AppContext,
  actor: Actor,
  opts: DirectoryOptions,
): Promise<Record<string, unknown>[]> {
  let rows = opts.userIds
    ? await usersStore.listUsersByIds(ctx.db, actor.realm.id, opts.userIds)
    : await usersStore.listUsers(ctx.db, actor.realm.id);
  const visible = await accessibleUserIds(ctx.db, actor.realm, actor.user);
  if (visible) rows = rows.filter((u) => visible.has(u.id));
  const profiles = opts.includeProfileData
    ? await loadProfileData(
        ctx,
        rows.map((u) => u.id),
      )
    : new Map();
  return rows.map((u) =>
    presentUser(u, actor.user, {
      clientGravatar: opts.clientGravatar,
      includeProfileData: opts.includeProfileData,
      profileData: profiles.get(u.id),
    }),
  );
}

export async function presentUserFor(
  ctx: AppContext,
  actor: Actor,
  target: UserRow,
  opts: Omit<DirectoryOptions, 'userIds'>,
): Promise<Record<string, unknown>> {
  const profiles = opts.includeProfileData ? await loadProfileData(ctx, [target.id]) : new Map();
  return presentUser(target, actor.user, {
    clientGravatar: opts.clientGravatar,
    includeProfileData: opts.includeProfileData,
    profileData: profiles.get(target.id),
  });
}
