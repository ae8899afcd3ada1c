// The one permission helper: roles, and membership in the group a setting names.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { JsonableError, mustBeAdmin, mustBeOwner } from '../lib/errors.ts';
import { readRealmSettings, type RealmSettingName } from '../lib/realm-settings.ts';
import { isAdmin, isOwner } from '../lib/roles.ts';
import type { Q } from '../store/db.ts';
import type { RealmRow, UserRow } from '../store/schema.ts';
import * as groups from '../store/user-groups.ts';

export function checkAdmin(actor: Actor): void {
  if (!isAdmin(actor.user)) throw mustBeAdmin();
}

export function checkOwner(actor: Actor): void {
  if (!isOwner(actor.user)) throw mustBeOwner();
}

/** Whether the user is in the group, directly or through subgroups. */
export async function isUserInGroup(db: Q, user: UserRow, groupId: number): Promise<boolean> {
  if (!user.is_active) return false;
  const ids = await groups.listGroupIdsContainingUser(db, user.id);
  return ids.includes(groupId);
}

/** Whether the organization setting's group holds the user. */
export async function hasRealmPermission(
  db: Q,
  realm: RealmRow,
  user: UserRow,
  setting: RealmSettingName,
): Promise<boolean> {
  const groupId = readRealmSettings(realm.settings)[setting];
  return typeof groupId === 'number' && isUserInGroup(db, user, groupId);
}

export async function checkRealmPermission(
  ctx: AppContext,
  actor: Actor,
  setting: RealmSettingName,
  msg = 'Insufficient permission',
): Promise<void> {
  if (!(await hasRealmPermission(ctx.db, actor.realm, actor.user, setting))) {
    throw new JsonableError(msg, 'UNAUTHORIZED_PRINCIPAL', 400);
  }
}
