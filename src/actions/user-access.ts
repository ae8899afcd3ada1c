// Who can see whom. Guests may be limited by can_access_all_users_group to the users
// they share a conversation with; everyone else sees every user of the organization.
import { readRealmSettings } from '../lib/realm-settings.ts';
import { isGuest } from '../lib/roles.ts';
import type { Q } from '../store/db.ts';
import type { RealmRow, UserRow } from '../store/schema.ts';
import * as groups from '../store/user-groups.ts';
import * as usersStore from '../store/users.ts';

/** Whether the realm lets guests see every user. */
export async function guestsSeeEveryone(db: Q, realm: RealmRow): Promise<boolean> {
  const groupId = readRealmSettings(realm.settings).can_access_all_users_group;
  const group =
    typeof groupId === 'number' ? await groups.getGroup(db, realm.id, groupId) : undefined;
  return group?.name === 'role:everyone';
}

/**
 * The users a limited guest can access: themselves and the users they share a
 * conversation with. Channels and direct messages extend this as they land.
 */
export async function accessibleUserIdsForLimitedGuest(
  _db: Q,
  guest: UserRow,
): Promise<Set<number>> {
  return new Set([guest.id]);
}

/** Whether viewer may access target's profile. */
export async function canAccessUser(
  db: Q,
  realm: RealmRow,
  viewer: UserRow,
  target: UserRow,
): Promise<boolean> {
  if (viewer.id === target.id || !isGuest(viewer)) return true;
  if (await guestsSeeEveryone(db, realm)) return true;
  return (await accessibleUserIdsForLimitedGuest(db, viewer)).has(target.id);
}

/** The set of user ids the viewer can access, or null for "everyone". */
export async function accessibleUserIds(
  db: Q,
  realm: RealmRow,
  viewer: UserRow,
): Promise<Set<number> | null> {
  if (!isGuest(viewer) || (await guestsSeeEveryone(db, realm))) return null;
  return accessibleUserIdsForLimitedGuest(db, viewer);
}

/** Active users who can access the target (the recipients of realm_user events about it). */
export async function usersWhoCanAccess(
  db: Q,
  realm: RealmRow,
  targetId: number,
): Promise<number[]> {
  const users = await usersStore.listUsers(db, realm.id);
  const active = users.filter((u) => u.is_active === 1);
  if (await guestsSeeEveryone(db, realm)) return active.map((u) => u.id);
  const out: number[] = [];
  for (const u of active) {
    if (
      !isGuest(u) ||
      u.id === targetId ||
      (await accessibleUserIdsForLimitedGuest(db, u)).has(targetId)
    )
      out.push(u.id);
  }
  return out;
}
