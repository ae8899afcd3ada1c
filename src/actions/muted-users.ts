// Muted users: a user hides another user's messages from themselves. Muting marks the
// muted user's existing messages read for the muter; every change sends the whole list
// (with the time each user was muted) to the muter's clients as muted_users.
import type { AppContext } from '../context.ts';
import { unixNow } from '../infra/clock.ts';
import type { Actor } from '../lib/actor.ts';
import { badRequest } from '../lib/errors.ts';
import type { Q } from '../store/db.ts';
import * as mutedStore from '../store/muted-users.ts';
import * as usersStore from '../store/users.ts';
import type { UserRow } from '../store/schema.ts';
import { markRead } from './message-flags.ts';
import { accessCurrentActor } from './permissions.ts';
import { withTransaction, type Work } from './transaction.ts';
import { canAccessUser, isUserId } from './user-access.ts';

export type MutedUser = mutedStore.MutedUser;

/**
 * The user to mute or unmute: any user of the realm the actor can access, bots and
 * deactivated users included. One message for absent and inaccessible users, so the
 * answer does not reveal who exists.
 */
async function accessMutableUser(db: Q, actor: Actor, id: number): Promise<UserRow> {
  const user = isUserId(id) ? await usersStore.getUserById(db, actor.realm.id, id) : undefined;
  if (!user || !(await canAccessUser(db, actor.realm, actor.user, user))) {
    throw badRequest('No such user');
  }
  return user;
}

export async function listMutedUsers(db: Q, userId: number): Promise<MutedUser[]> {
  return mutedStore.listMutedUsers(db, userId);
}

export async function muteUser(ctx: AppContext, actor: Actor, mutedUserId: number): Promise<void> {
  if (mutedUserId === actor.user.id) throw badRequest('Cannot mute self');
  await withTransaction(ctx, actor.realm.id, async (work) => {
    // Whom the actor may see is decided by their role as it is now (a guest by now may not).
    const me = await accessCurrentActor(work.db, actor);
    const target = await accessMutableUser(work.db, me, mutedUserId);
    if (await mutedStore.isMuted(work.db, actor.user.id, target.id)) {
      throw badRequest('User already muted');
    }
    await mutedStore.insertMutedUser(work.db, actor.user.id, target.id, unixNow(ctx.clock));
    await markRead(work, me, { senderId: target.id });
    await emitMutedUsers(work, actor.user.id);
  });
}

export async function unmuteUser(
  ctx: AppContext,
  actor: Actor,
  mutedUserId: number,
): Promise<void> {
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const me = await accessCurrentActor(work.db, actor);
    const target = await accessMutableUser(work.db, me, mutedUserId);
    if (!(await mutedStore.isMuted(work.db, actor.user.id, target.id))) {
      throw badRequest('User is not muted');
    }
    await mutedStore.deleteMutedUser(work.db, actor.user.id, target.id);
    await emitMutedUsers(work, actor.user.id);
  });
}

async function emitMutedUsers(work: Work, userId: number): Promise<void> {
  const list = await mutedStore.listMutedUsers(work.db, userId);
  work.emitOnCommit({ type: 'muted_users', muted_users: list }, [userId]);
}
