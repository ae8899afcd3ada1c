// Who can see whom, and looking users up under those rules. Guests may be limited by
// can_access_all_users_group to the users they share a conversation with; everyone else
// sees every user of the organization, and everyone sees every bot.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { badRequest } from '../lib/errors.ts';
import { canSeeDeliveryEmail } from '../lib/presenters/users.ts';
import { fakeEmailDomain } from '../lib/realm-url.ts';
import { isAdmin, isGuest } from '../lib/roles.ts';
import { accessRealmSettings } from './permissions.ts';
import * as channelsStore from '../store/channels.ts';
import type { Q } from '../store/db.ts';
import type { RealmRow, UserRow } from '../store/schema.ts';
import * as groups from '../store/user-groups.ts';
import * as usersStore from '../store/users.ts';

/** Whether the organization lets guests see every user, as its settings stand in db. */
export async function guestsSeeEveryone(db: Q, realmId: number): Promise<boolean> {
  const groupId = (await accessRealmSettings(db, realmId)).can_access_all_users_group;
  const group =
    typeof groupId === 'number' ? await groups.getGroup(db, realmId, groupId) : undefined;
  return group?.name === 'role:everyone';
}

/** Users sharing an active channel subscription or a direct-message conversation with the user. */
async function conversationMates(db: Q, userId: number): Promise<Set<number>> {
  return new Set([
    ...(await channelsStore.listUsersSharingChannels(db, userId)),
    ...(await usersStore.listDirectMessagePartners(db, userId)),
  ]);
}

/**
 * The human users a limited guest can access: themselves and the active users they share
 * a channel subscription or a direct-message conversation with.
 */
export async function accessibleUserIdsForLimitedGuest(
  db: Q,
  guest: Pick<UserRow, 'id' | 'realm_id'>,
): Promise<Set<number>> {
  const mates = await usersStore.listUsersByIds(db, guest.realm_id, [
    ...(await conversationMates(db, guest.id)),
  ]);
  return new Set([guest.id, ...mates.filter((u) => u.is_active === 1).map((u) => u.id)]);
}

/** Whether viewer may access target's profile. */
export async function canAccessUser(
  db: Q,
  realm: RealmRow,
  viewer: UserRow,
  target: UserRow,
): Promise<boolean> {
  if (viewer.id === target.id || target.is_bot === 1 || !isGuest(viewer)) return true;
  if (await guestsSeeEveryone(db, realm.id)) return true;
  return (await accessibleUserIdsForLimitedGuest(db, viewer)).has(target.id);
}

/**
 * The human users the viewer can access, or null for "everyone". Bots are always
 * accessible and are not listed.
 */
export async function accessibleUserIds(
  db: Q,
  realm: RealmRow,
  viewer: UserRow,
): Promise<Set<number> | null> {
  if (!isGuest(viewer) || (await guestsSeeEveryone(db, realm.id))) return null;
  return accessibleUserIdsForLimitedGuest(db, viewer);
}

/**
 * Active users who can access the target (the recipients of realm_user events about it),
 * as the target's state is now: a deactivated user is in no guest's reach, and is not a
 * recipient either.
 */
export async function usersWhoCanAccess(
  db: Q,
  realm: RealmRow,
  targetId: number,
): Promise<number[]> {
  const users = await usersStore.listUsers(db, realm.id);
  const active = users.filter((u) => u.is_active === 1);
  const target = users.find((u) => u.id === targetId);
  if (!target || target.is_bot === 1 || (await guestsSeeEveryone(db, realm.id))) {
    return active.map((u) => u.id);
  }
  const mates = target.is_active === 1 ? await conversationMates(db, target.id) : new Set();
  return active
    .filter((u) => !isGuest(u) || u.id === target.id || mates.has(u.id))
    .map((u) => u.id);
}

export interface AccessUserOptions {
  /** Bots count as users (default true). */
  allowBots?: boolean;
  /** Deactivated users count as users (default true). */
  allowDeactivated?: boolean;
  /** The actor must be able to administer the user: an administrator, or the bot's owner. */
  forAdmin?: boolean;
}

/** Whether the actor may administer the user (the reference server's can_admin_user). */
function canAdminUser(actor: Actor, target: UserRow): boolean {
  return target.bot_owner_id === actor.user.id || isAdmin(actor.user);
}

async function checkUserAccess(
  ctx: AppContext,
  actor: Actor,
  user: UserRow,
  opts: AccessUserOptions,
): Promise<UserRow> {
  if (opts.allowBots === false && user.is_bot) throw badRequest('No such user');
  if (opts.allowDeactivated === false && !user.is_active) throw badRequest('User is deactivated');
  const allowed = opts.forAdmin
    ? canAdminUser(actor, user)
    : await canAccessUser(ctx.db, actor.realm, actor.user, user);
  if (!allowed) throw badRequest('Insufficient permission');
  return user;
}

/** Whether n can be a user id (ids are 32-bit; larger numbers would upset PostgreSQL). */
export function isUserId(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 1 && n <= 2147483647;
}

/** A user of the actor's realm by id, checked as the reference server's access_user_by_id does. */
export async function accessUserById(
  ctx: AppContext,
  actor: Actor,
  id: number,
  opts: AccessUserOptions = {},
): Promise<UserRow> {
  const user = isUserId(id) ? await usersStore.getUserById(ctx.db, actor.realm.id, id) : undefined;
  if (!user) throw badRequest('No such user');
  return checkUserAccess(ctx, actor, user, opts);
}

/**
 * A user by email: their API email; their real address when the actor may see it; or the
 * user<id>@<organization host> form, which names any user.
 */
export async function accessUserByEmail(
  ctx: AppContext,
  actor: Actor,
  email: string,
  opts: AccessUserOptions = {},
): Promise<UserRow> {
  const realmId = actor.realm.id;
  let user = await usersStore.getUserByApiEmail(ctx.db, realmId, email);
  if (!user) {
    const real = await usersStore.getUserByDeliveryEmail(ctx.db, realmId, email);
    if (real && canSeeDeliveryEmail(actor.user, real)) user = real;
  }
  if (!user) {
    const domain = fakeEmailDomain(ctx.config.externalUrl, actor.realm.string_id);
    const match = /^user(\d{1,10})@(.+)$/i.exec(email);
    const id = match ? Number(match[1]) : 0;
    if (match && match[2].toLowerCase() === domain.toLowerCase() && isUserId(id)) {
      user = await usersStore.getUserById(ctx.db, realmId, id);
    }
  }
  if (!user) throw badRequest('No such user');
  return checkUserAccess(ctx, actor, user, opts);
}
