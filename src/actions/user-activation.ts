// Deactivating and reactivating users (and, with a person, the bots they own), never the
// organization's last user or last owner, and the events each emits.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { badRequest, JsonableError, mustBeOwner } from '../lib/errors.ts';
import { INACCESSIBLE_USER_NAME, presentUser } from '../lib/presenters/users.ts';
import { isOwner, ROLE } from '../lib/roles.ts';
import type { Q } from '../store/db.ts';
import type { RealmRow, UserRow } from '../store/schema.ts';
import * as usersStore from '../store/users.ts';
import { doAnnounceSubscriberActivation } from './channels.ts';
import { accessCurrentActor } from './permissions.ts';
import { readingIn, withTransaction, type Work } from './transaction.ts';
import { accessUserById, usersWhoCanAccess } from './user-access.ts';
import { doAnnounceGroupDepartures, doAnnounceGroupMemberships } from './user-groups.ts';
import { emitBotUpdate, emitPerViewer } from './users.ts';

/** What deactivation and role errors call the only owner, as the reference server does. */
const LAST_OWNER_ENTITY = 'organization owner';

function lastUserError(isLastOwner: boolean): JsonableError {
  const entity = isLastOwner ? LAST_OWNER_ENTITY : 'user';
  return new JsonableError(
    `Cannot deactivate the only ${entity}`,
    'CANNOT_DEACTIVATE_LAST_USER',
    400,
    {
      is_last_owner: isLastOwner,
      entity,
    },
  );
}

async function isLastOwner(db: Q, realmId: number, user: UserRow): Promise<boolean> {
  return (
    user.role === ROLE.owner &&
    !user.is_bot &&
    user.is_active === 1 &&
    (await usersStore.countActiveOwners(db, realmId)) <= 1
  );
}

/**
 * Deactivate a user and, first, the bots they own. Returns the ids deactivated, whose
 * event queues the caller drops after commit. Deactivating an inactive user does nothing.
 */
export async function doDeactivate(
  ctx: AppContext,
  work: Work,
  realm: RealmRow,
  target: UserRow,
): Promise<number[]> {
  const current = await usersStore.getUserById(work.db, realm.id, target.id);
  if (!current?.is_active) return [];
  if (await isLastOwner(work.db, realm.id, current)) throw lastUserError(true);
  const done: number[] = [];
  // A person's bots stop with them, before they do.
  if (!current.is_bot) {
    for (const bot of await usersStore.listBotsOwnedBy(work.db, current.id)) {
      done.push(...(await doDeactivate(ctx, work, realm, bot)));
    }
  }
  const before = await usersWhoCanAccess(work.db, realm, current.id);
  await usersStore.updateUser(work.db, current.id, { is_active: 0 });
  await doAnnounceSubscriberActivation(work, realm, current, false);
  const after = await usersWhoCanAccess(work.db, realm, current.id);
  work.emitOnCommit(
    { type: 'realm_user', op: 'update', person: { user_id: current.id, is_active: false } },
    after,
  );
  await doAnnounceGroupDepartures(work, realm, current.id, after);
  // Guests who could see the user only through a shared conversation lose them.
  const kept = new Set([...after, current.id]);
  const lost = before.filter((id) => !kept.has(id));
  work.emitOnCommit(
    {
      type: 'realm_user',
      op: 'remove',
      person: { user_id: current.id, full_name: INACCESSIBLE_USER_NAME },
    },
    lost,
  );
  if (current.is_bot) await emitBotUpdate(work, realm, current, { is_active: false });
  done.push(current.id);
  return done;
}

/** DELETE /users/{id}: administrators; only owners deactivate owners; never the last owner. */
export async function deactivateUser(
  ctx: AppContext,
  actor: Actor,
  targetId: number,
): Promise<void> {
  // The queue layer drops the user's queues, in every process, when the event arrives.
  await withTransaction(ctx, actor.realm.id, async (work) => {
    // Checked inside: a deactivation, a promotion to owner or a change of the actor's role
    // committed since counts as it would in turn (one success, never an owner by an admin).
    const me = await accessCurrentActor(work.db, actor);
    const target = await accessUserById(readingIn(ctx, work), me, targetId, {
      forAdmin: true,
      allowBots: false,
      allowDeactivated: false,
    });
    if (target.role === ROLE.owner && !isOwner(me.user)) throw mustBeOwner();
    return doDeactivate(ctx, work, me.realm, target);
  });
}

/** DELETE /users/me: anyone but the organization's last user or last owner. */
export async function deactivateSelf(ctx: AppContext, actor: Actor): Promise<void> {
  await withTransaction(ctx, actor.realm.id, async (work) => {
    // Deactivated since, the actor is answered as authentication would answer them.
    const { realm, user: me } = await accessCurrentActor(work.db, actor);
    if ((await usersStore.countActiveUsers(work.db, realm.id)) <= 1) throw lastUserError(false);
    if (await isLastOwner(work.db, realm.id, me)) throw lastUserError(true);
    return doDeactivate(ctx, work, realm, me);
  });
}

/** POST /users/{id}/reactivate: administrators, or a bot's owner for their bot. */
export async function reactivateUser(
  ctx: AppContext,
  actor: Actor,
  targetId: number,
): Promise<void> {
  await withTransaction(ctx, actor.realm.id, async (work) => {
    // Checked inside: another request may have reactivated them since (one change, one
    // event), or changed the bot's owner or the actor's role.
    const me = await accessCurrentActor(work.db, actor);
    const realm = me.realm;
    const target = await accessUserById(readingIn(ctx, work), me, targetId, { forAdmin: true });
    if (target.is_active) throw badRequest('User is already active');
    if (target.is_bot && target.bot_owner_id) {
      const owner = await usersStore.getUserById(work.db, realm.id, target.bot_owner_id);
      if (!owner?.is_active) throw badRequest('Cannot reactivate a bot whose owner is deactivated');
    }
    const before = new Set(await usersWhoCanAccess(work.db, realm, target.id));
    await usersStore.updateUser(work.db, target.id, { is_active: 1 });
    const reactivated: UserRow = { ...target, is_active: 1 };
    await doAnnounceSubscriberActivation(work, realm, reactivated, true);
    const after = await usersWhoCanAccess(work.db, realm, target.id);
    // Guests who regain access through a shared conversation learn of the user afresh.
    const gained = await usersStore.listUsersByIds(
      work.db,
      realm.id,
      after.filter((id) => !before.has(id) && id !== target.id),
    );
    emitPerViewer(work, gained, (viewer) => ({
      type: 'realm_user',
      op: 'add',
      person: presentUser(reactivated, viewer),
    }));
    work.emitOnCommit(
      { type: 'realm_user', op: 'update', person: { user_id: target.id, is_active: true } },
      after,
    );
    await doAnnounceGroupMemberships(work, realm, target.id);
    if (target.is_bot) await emitBotUpdate(work, realm, target, { is_active: true });
  });
}
