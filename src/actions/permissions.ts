// The one permission helper: roles, and membership in the group a setting names.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { JsonableError, mustBeAdmin, mustBeOwner, unauthorized } from '../lib/errors.ts';
import {
  readRealmSettings,
  type RealmSettingName,
  type RealmSettings,
} from '../lib/realm-settings.ts';
import { isAdmin, isOwner } from '../lib/roles.ts';
import type { Q } from '../store/db.ts';
import type { UserRow } from '../store/schema.ts';
import { getRealmById } from '../store/realms.ts';
import * as groups from '../store/user-groups.ts';
import { getUserById } from '../store/users.ts';

/**
 * The actor as db holds them now, not as authentication read them: inside a transaction, a
 * change checked against this sees any role change or deactivation committed before it, as
 * the same requests one after another would. Answers as authentication would for an actor
 * deactivated since.
 */
export async function accessCurrentActor(db: Q, actor: Actor): Promise<Actor> {
  const realm = await getRealmById(db, actor.realm.id);
  const user = await getUserById(db, actor.realm.id, actor.user.id);
  if (!realm || realm.deactivated) throw unauthorized('This organization has been deactivated');
  if (!user?.is_active) throw unauthorized('Account is deactivated');
  return { user, realm };
}

/**
 * accessCurrentActor for changes only administrators make. An action may also refuse early
 * with checkAdmin(actor), before costly work (a refusal changes nothing, so it answers as in
 * turn); this is the check that decides.
 */
export async function accessCurrentAdmin(db: Q, actor: Actor): Promise<Actor> {
  const me = await accessCurrentActor(db, actor);
  checkAdmin(me);
  return me;
}

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

/**
 * The organization's settings as db holds them now: inside a change, what committed before
 * it, not what authentication read (architecture.md, Actions). A kept read while the
 * organization's row is unchanged (store/realms.ts), so cheap enough for every check.
 */
export async function accessRealmSettings(
  db: Q,
  realmId: number,
): Promise<Readonly<RealmSettings>> {
  const realm = await getRealmById(db, realmId);
  if (!realm) throw unauthorized('This organization has been deactivated');
  return readRealmSettings(realm.settings);
}

/** Whether the group the user's organization names in the setting holds the user. */
export async function hasRealmPermission(
  db: Q,
  user: UserRow,
  setting: RealmSettingName,
): Promise<boolean> {
  const groupId = (await accessRealmSettings(db, user.realm_id))[setting];
  return typeof groupId === 'number' && isUserInGroup(db, user, groupId);
}

export async function checkRealmPermission(
  ctx: AppContext,
  actor: Actor,
  setting: RealmSettingName,
  msg = 'Insufficient permission',
): Promise<void> {
  if (!(await hasRealmPermission(ctx.db, actor.user, setting))) {
    throw new JsonableError(msg, 'UNAUTHORIZED_PRINCIPAL', 400);
  }
}
