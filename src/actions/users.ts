// Users: creation, profile and role changes, deactivation, and the events each emits.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { badRequest, JsonableError, mustBeOwner, resourceNotFound } from '../lib/errors.ts';
import { canSeeDeliveryEmail, presentUser } from '../lib/presenters/users.ts';
import { fakeEmailDomain } from '../lib/realm-url.ts';
import { isOwner, isRole, ROLE, systemGroupForRole } from '../lib/roles.ts';
import {
  EMAIL_ADDRESS_VISIBILITY,
  readUserSettings,
  writeUserSettings,
} from '../lib/user-settings.ts';
import { checkEmail, checkFullName, checkPassword, API_KEY_LENGTH } from '../lib/validation.ts';
import { unixNow } from '../infra/clock.ts';
import type { Q } from '../store/db.ts';
import type { RealmRow, UserRow } from '../store/schema.ts';
import * as groups from '../store/user-groups.ts';
import * as usersStore from '../store/users.ts';
import { checkAdmin } from './permissions.ts';
import { canAccessUser, usersWhoCanAccess } from './user-access.ts';
import { withTransaction, type Work } from './transaction.ts';

export interface NewUserParams {
  email: string;
  fullName: string;
  role: number;
  password?: string | null;
  isBot?: boolean;
  botType?: number | null;
  botOwnerId?: number | null;
  /** Personal settings to start with (bots created by the API, invitations). */
  settings?: Record<string, unknown>;
}

/** The API email a user should have under their email_address_visibility. */
function apiEmailFor(
  ctx: AppContext,
  realm: RealmRow,
  user: Pick<UserRow, 'id' | 'delivery_email' | 'is_bot' | 'settings'>,
): string {
  const visibility = readUserSettings(user.settings).email_address_visibility;
  if (user.is_bot || visibility === EMAIL_ADDRESS_VISIBILITY.everyone) return user.delivery_email;
  return `user${user.id}@${fakeEmailDomain(ctx.config.externalUrl, realm.string_id)}`;
}

/** Create a user inside the caller's transaction and queue the events announcing it. */
export async function doCreateUser(
  ctx: AppContext,
  work: Work,
  realm: RealmRow,
  params: NewUserParams,
): Promise<UserRow> {
  const email = checkEmail(params.email);
  const fullName = checkFullName(params.fullName);
  if (!isRole(params.role)) throw badRequest('Invalid role');
  if (await usersStore.getUserByEmail(work.db, realm.id, email)) {
    throw badRequest(`Email '${email}' already in use`);
  }
  const passwordHash = params.password
    ? await ctx.passwords.hash(checkPassword(params.password))
    : null;
  const now = unixNow(ctx.clock);
  const settings = writeUserSettings(readUserSettings(JSON.stringify(params.settings ?? {})));
  const inserted = await usersStore.insertUser(work.db, {
    realm_id: realm.id,
    // Placeholder until the id is known; unique because api keys are.
    email: `pending-${ctx.random.alphanumeric(24)}@invalid`,
    delivery_email: email,
    full_name: fullName,
    role: params.role,
    is_active: 1,
    is_bot: params.isBot ? 1 : 0,
    bot_type: params.isBot ? (params.botType ?? 1) : null,
    bot_owner_id: params.isBot ? (params.botOwnerId ?? null) : null,
    api_key: ctx.random.alphanumeric(API_KEY_LENGTH),
    password_hash: passwordHash,
    date_joined: now,
    avatar_source: 'G',
    avatar_version: 1,
    settings,
  });
  const apiEmail = apiEmailFor(ctx, realm, inserted);
  await usersStore.updateUser(work.db, inserted.id, { email: apiEmail });
  const user: UserRow = { ...inserted, email: apiEmail };

  const systemGroup = await systemGroupId(work.db, realm.id, systemGroupForRole(user.role));
  await groups.addGroupMembers(work.db, systemGroup, [user.id]);

  const everyone = await usersStore.listActiveUserIds(work.db, realm.id);
  await emitRealmUserAdd(work, realm, user);
  work.emitOnCommit(
    { type: 'user_group', op: 'add_members', group_id: systemGroup, user_ids: [user.id] },
    everyone,
  );
  return user;
}

/** realm_user add, presented per recipient (email visibility differs between viewers). */
async function emitRealmUserAdd(work: Work, realm: RealmRow, user: UserRow): Promise<void> {
  const recipients = await usersStore.listUsersByIds(
    work.db,
    realm.id,
    await usersWhoCanAccess(work.db, realm, user.id),
  );
  emitPerViewer(work, recipients, (viewer) => ({
    type: 'realm_user',
    op: 'add',
    person: presentUser(user, viewer),
  }));
}

/** Queue one event per distinct presentation, so viewers only get what they may see. */
export function emitPerViewer(
  work: Work,
  viewers: UserRow[],
  build: (viewer: UserRow) => { type: string; op?: string; [k: string]: unknown },
): void {
  const byShape = new Map<string, { event: ReturnType<typeof build>; users: number[] }>();
  for (const viewer of viewers) {
    const event = build(viewer);
    const key = JSON.stringify(event);
    const entry = byShape.get(key) ?? { event, users: [] };
    entry.users.push(viewer.id);
    byShape.set(key, entry);
  }
  for (const { event, users } of byShape.values()) work.emitOnCommit(event, users);
}

async function systemGroupId(db: Q, realmId: number, name: string): Promise<number> {
  const all = await groups.listSystemGroups(db, realmId);
  const group = all.find((g) => g.name === name);
  if (!group) throw new Error(`system group ${name} missing in realm ${realmId}`);
  return group.id;
}

export async function createUser(
  ctx: AppContext,
  realm: RealmRow,
  params: NewUserParams,
): Promise<UserRow> {
  return withTransaction(ctx, realm.id, (work) => doCreateUser(ctx, work, realm, params));
}

/** POST /users: administrators create a member account. */
export async function createUserByAdmin(
  ctx: AppContext,
  actor: Actor,
  params: { email: string; password: string; full_name: string },
): Promise<UserRow> {
  checkAdmin(actor);
  return createUser(ctx, actor.realm, {
    email: params.email,
    fullName: params.full_name,
    password: params.password,
    role: ROLE.member,
  });
}

/** Find a user of the actor's realm that the actor may see, or fail as if it did not exist. */
export async function accessUserById(
  ctx: AppContext,
  actor: Actor,
  id: number,
  opts: { allowBots?: boolean; allowDeactivated?: boolean } = {},
): Promise<UserRow> {
  const user = await usersStore.getUserById(ctx.db, actor.realm.id, id);
  if (!user || !(await canAccessUser(ctx.db, actor.realm, actor.user, user)))
    throw badRequest('No such user');
  if (opts.allowBots === false && user.is_bot) throw badRequest('No such user');
  if (opts.allowDeactivated === false && !user.is_active) throw badRequest('User is deactivated');
  return user;
}

export async function accessUserByEmail(
  ctx: AppContext,
  actor: Actor,
  email: string,
): Promise<UserRow> {
  const user = await usersStore.getUserByEmail(ctx.db, actor.realm.id, email);
  if (!user || !(await canAccessUser(ctx.db, actor.realm, actor.user, user)))
    throw badRequest('No such user');
  return user;
}

/** Emit a realm_user update to everyone who can access the user. */
async function emitPersonUpdate(
  work: Work,
  realm: RealmRow,
  userId: number,
  person: Record<string, unknown>,
): Promise<void> {
  work.emitOnCommit(
    { type: 'realm_user', op: 'update', person: { user_id: userId, ...person } },
    await usersWhoCanAccess(work.db, realm, userId),
  );
}

/** realm_bot update to the bot's owner and the organization's administrators. */
export async function emitBotUpdate(
  work: Work,
  realm: RealmRow,
  bot: UserRow,
  fields: Record<string, unknown>,
): Promise<void> {
  const admins = await usersStore.listActiveAdminIds(work.db, realm.id);
  const to = bot.bot_owner_id ? [...admins, bot.bot_owner_id] : admins;
  work.emitOnCommit({ type: 'realm_bot', op: 'update', bot: { user_id: bot.id, ...fields } }, to);
}

export async function doChangeFullName(
  work: Work,
  realm: RealmRow,
  user: UserRow,
  raw: string,
): Promise<void> {
  const fullName = checkFullName(raw);
  if (fullName === user.full_name) return;
  await usersStore.updateUser(work.db, user.id, { full_name: fullName });
  await emitPersonUpdate(work, realm, user.id, { full_name: fullName });
  if (user.is_bot) await emitBotUpdate(work, realm, user, { full_name: fullName });
}

async function doChangeRole(
  work: Work,
  realm: RealmRow,
  user: UserRow,
  role: number,
): Promise<void> {
  if (role === user.role) return;
  if (
    user.role === ROLE.owner &&
    role !== ROLE.owner &&
    (await usersStore.countActiveOwners(work.db, realm.id)) <= 1 &&
    !user.is_bot
  ) {
    throw new JsonableError(
      'The owner permission cannot be removed from the only organization owner.',
      'CANNOT_DEACTIVATE_LAST_USER',
      400,
      {
        is_last_owner: true,
        entity: user.full_name,
      },
    );
  }
  const before = await usersStore.listUsers(work.db, realm.id);
  await usersStore.updateUser(work.db, user.id, { role });
  const changed: UserRow = { ...user, role };
  const oldGroup = await systemGroupId(work.db, realm.id, systemGroupForRole(user.role));
  const newGroup = await systemGroupId(work.db, realm.id, systemGroupForRole(role));
  const everyone = await usersStore.listActiveUserIds(work.db, realm.id);
  if (oldGroup !== newGroup) {
    await groups.removeGroupMembers(work.db, oldGroup, [user.id]);
    await groups.addGroupMembers(work.db, newGroup, [user.id]);
    work.emitOnCommit(
      { type: 'user_group', op: 'remove_members', group_id: oldGroup, user_ids: [user.id] },
      everyone,
    );
    work.emitOnCommit(
      { type: 'user_group', op: 'add_members', group_id: newGroup, user_ids: [user.id] },
      everyone,
    );
  }
  await emitPersonUpdate(work, realm, user.id, { role });
  if (user.is_bot) await emitBotUpdate(work, realm, user, { role });
  // The user's own view of others' real addresses may change with the role.
  for (const other of before) {
    if (other.id === user.id || !changed.is_active) continue;
    const could = canSeeDeliveryEmail(user, other);
    const can = canSeeDeliveryEmail(changed, other);
    if (could !== can) {
      work.emitOnCommit(
        {
          type: 'realm_user',
          op: 'update',
          person: { user_id: other.id, delivery_email: can ? other.delivery_email : null },
        },
        [user.id],
      );
    }
  }
}

/** PATCH /users/{id}: administrators change names and roles; only owners touch owners. */
export async function updateUserByAdmin(
  ctx: AppContext,
  actor: Actor,
  targetId: number,
  params: { full_name?: string; role?: number },
): Promise<void> {
  checkAdmin(actor);
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const target = await usersStore.getUserById(work.db, actor.realm.id, targetId);
    if (!target) throw badRequest('No such user');
    if (params.role !== undefined) {
      if (!isRole(params.role)) throw badRequest('Invalid role');
      if ((params.role === ROLE.owner || target.role === ROLE.owner) && !isOwner(actor.user))
        throw mustBeOwner();
    }
    if (params.full_name !== undefined)
      await doChangeFullName(work, actor.realm, target, params.full_name);
    if (params.role !== undefined)
      await doChangeRole(
        work,
        actor.realm,
        (await usersStore.getUserById(work.db, actor.realm.id, targetId))!,
        params.role,
      );
  });
}

async function doDeactivate(
  ctx: AppContext,
  work: Work,
  realm: RealmRow,
  target: UserRow,
): Promise<void> {
  if (!target.is_active) throw badRequest('User is already deactivated');
  if (
    target.role === ROLE.owner &&
    !target.is_bot &&
    (await usersStore.countActiveOwners(work.db, realm.id)) <= 1
  ) {
    throw new JsonableError(
      'Cannot deactivate the only organization owner',
      'CANNOT_DEACTIVATE_LAST_USER',
      400,
      {
        is_last_owner: true,
        entity: target.full_name,
      },
    );
  }
  const before = await usersWhoCanAccess(work.db, realm, target.id);
  await usersStore.updateUser(work.db, target.id, { is_active: 0 });
  const after = new Set(await usersWhoCanAccess(work.db, realm, target.id));
  // The deactivated user's own clients are told too, before their queues go.
  work.emitOnCommit(
    { type: 'realm_user', op: 'update', person: { user_id: target.id, is_active: false } },
    [...before, target.id],
  );
  const lost = before.filter((id) => !after.has(id) && id !== target.id);
  if (lost.length > 0) {
    work.emitOnCommit(
      {
        type: 'realm_user',
        op: 'remove',
        person: { user_id: target.id, full_name: target.full_name },
      },
      lost,
    );
  }
  if (target.is_bot) await emitBotUpdate(work, realm, target, { is_active: false });
  // A person's bots stop with them.
  for (const bot of await usersStore.listBotsOwnedBy(work.db, target.id)) {
    if (bot.is_active) await doDeactivate(ctx, work, realm, bot);
  }
}

/** DELETE /users/{id}: administrators; only owners may deactivate owners. */
export async function deactivateUser(
  ctx: AppContext,
  actor: Actor,
  targetId: number,
): Promise<void> {
  checkAdmin(actor);
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const target = await usersStore.getUserById(work.db, actor.realm.id, targetId);
    if (!target) throw badRequest('No such user');
    if (target.role === ROLE.owner && !isOwner(actor.user)) throw mustBeOwner();
    await doDeactivate(ctx, work, actor.realm, target);
  });
  ctx.queues.dropUserQueues(targetId);
}

/** DELETE /users/me. */
export async function deactivateSelf(ctx: AppContext, actor: Actor): Promise<void> {
  await withTransaction(ctx, actor.realm.id, async (work) => {
    await doDeactivate(
      ctx,
      work,
      actor.realm,
      (await usersStore.getUserById(work.db, actor.realm.id, actor.user.id))!,
    );
  });
  ctx.queues.dropUserQueues(actor.user.id);
}

/** POST /users/{id}/reactivate: administrators. */
export async function reactivateUser(
  ctx: AppContext,
  actor: Actor,
  targetId: number,
): Promise<void> {
  checkAdmin(actor);
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const target = await usersStore.getUserById(work.db, actor.realm.id, targetId);
    if (!target) throw badRequest('No such user');
    if (target.is_active) throw badRequest('User is already active');
    if (target.role === ROLE.owner && !isOwner(actor.user)) throw mustBeOwner();
    if (target.is_bot && target.bot_owner_id) {
      const owner = await usersStore.getUserById(work.db, actor.realm.id, target.bot_owner_id);
      if (!owner?.is_active) throw badRequest('Cannot reactivate a bot whose owner is deactivated');
    }
    await usersStore.updateUser(work.db, target.id, { is_active: 1 });
    const to = await usersWhoCanAccess(work.db, actor.realm, target.id);
    work.emitOnCommit(
      { type: 'realm_user', op: 'update', person: { user_id: target.id, is_active: true } },
      to,
    );
    if (target.is_bot) await emitBotUpdate(work, actor.realm, target, { is_active: true });
  });
}

/** Apply a change of the user's API email (when their email visibility changes) and announce it. */
export async function doRefreshApiEmail(
  ctx: AppContext,
  work: Work,
  realm: RealmRow,
  user: UserRow,
): Promise<void> {
  const email = apiEmailFor(ctx, realm, user);
  if (email === user.email) return;
  await usersStore.updateUser(work.db, user.id, { email });
  await emitPersonUpdate(work, realm, user.id, { new_email: email });
}

/** Users whose real address the viewer's visibility change exposes or hides, and to whom. */
export async function doAnnounceDeliveryEmailVisibility(
  work: Work,
  realm: RealmRow,
  before: UserRow,
  after: UserRow,
): Promise<void> {
  const viewers = await usersStore.listUsersByIds(
    work.db,
    realm.id,
    await usersWhoCanAccess(work.db, realm, after.id),
  );
  for (const viewer of viewers) {
    if (viewer.id === after.id) continue;
    const could = canSeeDeliveryEmail(viewer, before);
    const can = canSeeDeliveryEmail(viewer, after);
    if (could !== can) {
      work.emitOnCommit(
        {
          type: 'realm_user',
          op: 'update',
          person: { user_id: after.id, delivery_email: can ? after.delivery_email : null },
        },
        [viewer.id],
      );
    }
  }
}

/** POST /fetch_api_key: email (or API email) and password give the API key. */
export async function fetchApiKey(
  ctx: AppContext,
  realm: RealmRow | undefined,
  username: string,
  password: string,
): Promise<{ api_key: string; email: string; user_id: number }> {
  const failed = new JsonableError(
    'Your username or password is incorrect',
    'AUTHENTICATION_FAILED',
    401,
  );
  if (!realm) throw failed;
  const user = await usersStore.getUserByEmail(ctx.db, realm.id, username);
  if (!user?.password_hash || !(await ctx.passwords.verify(user.password_hash, password)))
    throw failed;
  if (realm.deactivated)
    throw new JsonableError('This organization has been deactivated', 'REALM_DEACTIVATED', 401);
  if (!user.is_active) throw new JsonableError('Account is deactivated', 'USER_DEACTIVATED', 401);
  return { api_key: user.api_key, email: user.email, user_id: user.id };
}

/** A fresh API key (CLI change-api-key, and bots through bots.ts). */
export async function regenerateApiKey(
  ctx: AppContext,
  realm: RealmRow,
  userId: number,
): Promise<string> {
  const apiKey = ctx.random.alphanumeric(API_KEY_LENGTH);
  await withTransaction(ctx, realm.id, async (work) => {
    const user = await usersStore.getUserById(work.db, realm.id, userId);
    if (!user) throw resourceNotFound('No such user');
    await usersStore.updateUser(work.db, userId, { api_key: apiKey });
    if (user.is_bot) await emitBotUpdate(work, realm, user, { api_key: apiKey });
  });
  // Old credentials no longer work, so neither do queues bound to them.
  return apiKey;
}
