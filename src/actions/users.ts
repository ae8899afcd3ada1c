// Users: creation, profile and role changes, API emails and keys, and the events each emits.
// Deactivation and reactivation: user-activation.ts.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import {
  badRequest,
  JsonableError,
  mustBeAdmin,
  mustBeOwner,
  resourceNotFound,
} from '../lib/errors.ts';
import {
  avatarUrl,
  canSeeDeliveryEmail,
  INACCESSIBLE_USER_NAME,
  presentUser,
} from '../lib/presenters/users.ts';
import { fakeEmailDomain } from '../lib/realm-url.ts';
import { isAdmin, isGuest, isOwner, isRole, ROLE, systemGroupForRole } from '../lib/roles.ts';
import {
  EMAIL_ADDRESS_VISIBILITY,
  readUserSettings,
  writeUserSettings,
} from '../lib/user-settings.ts';
import {
  API_KEY_LENGTH,
  checkEmail,
  checkFullName,
  checkPassword,
  isStrongPassword,
  isValidEmail,
} from '../lib/validation.ts';
import { unixNow } from '../infra/clock.ts';
import type { Q } from '../store/db.ts';
import type { RealmRow, UserRow } from '../store/schema.ts';
import * as groups from '../store/user-groups.ts';
import * as usersStore from '../store/users.ts';
import {
  accessRealmSettings,
  accessCurrentActor,
  accessCurrentAdmin,
  checkAdmin,
} from './permissions.ts';
import { accessibleUserIds, accessUserById, usersWhoCanAccess } from './user-access.ts';
import { presentInaccessibleUserFor } from './user-directory.ts';
import { doUpdateProfileData } from './profile-fields.ts';
import { readingIn, withTransaction, type Work } from './transaction.ts';
import { doAnnounceBotManagement } from './bot-directory.ts';
import { doAnnounceChannelVisibility, visibleChannelIds } from './channels.ts';

// Looking users up with access checks lives with the access rules.
export { accessUserByEmail, accessUserById, isUserId } from './user-access.ts';

export interface NewUserParams {
  email: string;
  fullName: string;
  role: number;
  /**
   * From hashNewPassword, before the transaction: hashing takes tens of milliseconds, and a
   * transaction holds up every other change to the organization while it is open.
   */
  passwordHash?: string | null;
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

/** Under require_unique_names, no two users may share a name (compared case-insensitively). */
async function checkNameAvailable(
  db: Q,
  realm: RealmRow,
  fullName: string,
  exceptUserId: number | null,
): Promise<void> {
  if ((await accessRealmSettings(db, realm.id)).require_unique_names !== true) return;
  const key = (s: string): string => s.normalize('NFKC').toLowerCase();
  const users = await usersStore.listUsers(db, realm.id);
  if (users.some((u) => u.id !== exceptUserId && key(u.full_name) === key(fullName))) {
    throw badRequest('Unique names required in this organization.');
  }
}

/** Create a user inside the caller's transaction and queue the events announcing it. */
export async function doCreateUser(
  ctx: AppContext,
  work: Work,
  realm: RealmRow,
  params: NewUserParams,
): Promise<UserRow> {
  const fullName = checkFullName(params.fullName);
  const email = checkEmail(params.email);
  if (!isRole(params.role)) throw badRequest('Invalid role');
  if (await usersStore.getUserByEmail(work.db, realm.id, email)) {
    throw badRequest(`Email '${email}' already in use`);
  }
  await checkNameAvailable(work.db, realm, fullName, null);
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
    password_hash: params.passwordHash ?? null,
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
  await emitRealmUserAdd(ctx, work, realm, user);
  work.emitOnCommit(
    { type: 'user_group', op: 'add_members', group_id: systemGroup, user_ids: [user.id] },
    everyone,
  );
  return user;
}

/**
 * realm_user add, presented per recipient (email visibility differs between viewers). Users
 * who cannot access the new user (limited guests) learn only that the id exists, as the
 * "Unknown user" their snapshot would list, unless their client handles an incomplete user
 * list (user_list_incomplete), in which case their snapshot leaves the user out too.
 */
async function emitRealmUserAdd(
  ctx: AppContext,
  work: Work,
  realm: RealmRow,
  user: UserRow,
): Promise<void> {
  const accessors = await usersWhoCanAccess(work.db, realm, user.id);
  const recipients = await usersStore.listUsersByIds(work.db, realm.id, accessors);
  emitPerViewer(work, recipients, (viewer) => ({
    type: 'realm_user',
    op: 'add',
    person: presentUser(user, viewer),
  }));
  const allowed = new Set(accessors);
  const others = (await usersStore.listActiveUserIds(work.db, realm.id)).filter(
    (id) => !allowed.has(id),
  );
  work.emitOnCommit(
    {
      type: 'realm_user',
      op: 'add',
      person: presentInaccessibleUserFor(ctx, realm, user.id),
      __unless_user_list_incomplete: true,
    },
    others,
  );
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

/** A new account's password checked and hashed, outside any transaction (see NewUserParams). */
export async function hashNewPassword(
  ctx: AppContext,
  password: string | null | undefined,
): Promise<string | null> {
  return password ? ctx.passwords.hash(checkPassword(password)) : null;
}

export async function createUser(
  ctx: AppContext,
  realm: RealmRow,
  params: Omit<NewUserParams, 'passwordHash'> & { password?: string | null },
): Promise<UserRow> {
  const { password, ...account } = params;
  const passwordHash = await hashNewPassword(ctx, password);
  return withTransaction(ctx, realm.id, (work) =>
    doCreateUser(ctx, work, realm, { ...account, passwordHash }),
  );
}

/** POST /users: administrators create a member account, checked in the reference server's order. */
export async function createUserByAdmin(
  ctx: AppContext,
  actor: Actor,
  params: { email: string; password: string; full_name: string },
): Promise<UserRow> {
  checkAdmin(actor);
  const fullName = checkFullName(params.full_name);
  if (!isValidEmail(params.email)) throw badRequest('Bad name or username');
  const email = params.email.trim().toLowerCase();
  if (await usersStore.getUserByEmail(ctx.db, actor.realm.id, email)) {
    throw badRequest(`Email '${params.email}' already in use`);
  }
  if (!isStrongPassword(params.password)) throw badRequest('The password is too weak.');
  const passwordHash = await hashNewPassword(ctx, params.password);
  return withTransaction(ctx, actor.realm.id, async (work) => {
    const { realm } = await accessCurrentAdmin(work.db, actor);
    return doCreateUser(ctx, work, realm, {
      email,
      fullName,
      passwordHash,
      role: ROLE.member,
    });
  });
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
  await checkNameAvailable(work.db, realm, fullName, user.id);
  await usersStore.updateUser(work.db, user.id, { full_name: fullName });
  await emitPersonUpdate(work, realm, user.id, { full_name: fullName });
  if (user.is_bot) await emitBotUpdate(work, realm, user, { full_name: fullName });
}

/**
 * The avatar form of realm_user update (avatars come from the address, so they follow it),
 * to everyone who can access the user, or only to these viewers.
 */
export async function doAnnounceAvatar(
  work: Work,
  realm: RealmRow,
  user: UserRow,
  viewers?: number[],
): Promise<void> {
  const fields = {
    avatar_source: user.avatar_source,
    avatar_url: avatarUrl(user),
    avatar_url_medium: avatarUrl(user, true),
    avatar_version: user.avatar_version,
  };
  if (viewers) {
    work.emitOnCommit(
      { type: 'realm_user', op: 'update', person: { user_id: user.id, ...fields } },
      viewers,
    );
    return;
  }
  await emitPersonUpdate(work, realm, user.id, fields);
  if (user.is_bot) await emitBotUpdate(work, realm, user, { avatar_url: fields.avatar_url });
}

/** Change a role and its system-group membership. Callers check who may do it. */
export async function doChangeRole(
  work: Work,
  realm: RealmRow,
  user: UserRow,
  role: number,
): Promise<void> {
  if (role === user.role) return;
  if (!isRole(role)) throw badRequest('Invalid role');
  if (
    user.role === ROLE.owner &&
    !user.is_bot &&
    (await usersStore.countActiveOwners(work.db, realm.id)) <= 1
  ) {
    throw badRequest('The owner permission cannot be removed from the only organization owner.');
  }
  const before = await usersStore.listUsers(work.db, realm.id);
  const channelsSeen = await visibleChannelIds(work.db, realm, user);
  await usersStore.updateUser(work.db, user.id, { role });
  const changed: UserRow = { ...user, role };
  await emitPersonUpdate(work, realm, user.id, { role });
  const oldGroup = await systemGroupId(work.db, realm.id, systemGroupForRole(user.role));
  const newGroup = await systemGroupId(work.db, realm.id, systemGroupForRole(role));
  if (oldGroup !== newGroup) {
    await groups.removeGroupMembers(work.db, oldGroup, [user.id]);
    await groups.addGroupMembers(work.db, newGroup, [user.id]);
  }
  // Clients dropped a deactivated user from every group; a reactivation shows them in their
  // groups again (doAnnounceGroupMemberships), the new system group included.
  if (oldGroup !== newGroup && changed.is_active) {
    const everyone = await usersStore.listActiveUserIds(work.db, realm.id);
    work.emitOnCommit(
      { type: 'user_group', op: 'remove_members', group_id: oldGroup, user_ids: [user.id] },
      everyone,
    );
    work.emitOnCommit(
      { type: 'user_group', op: 'add_members', group_id: newGroup, user_ids: [user.id] },
      everyone,
    );
  }
  if (!changed.is_active) return;
  await doAnnounceChannelVisibility(work, realm, changed, channelsSeen);
  await doAnnounceBotManagement(work, realm, user, changed);
  await doAnnounceAccessChange(work, realm, user, changed, before);
  // The user's own view of others' real addresses may change with the role.
  for (const other of before) {
    if (other.id === user.id) continue;
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

/**
 * Becoming or ceasing to be a guest changes whom a user can access when guests are
 * limited: they learn of users they gain (realm_user add) and forget those they lose.
 */
async function doAnnounceAccessChange(
  work: Work,
  realm: RealmRow,
  before: UserRow,
  after: UserRow,
  users: readonly UserRow[],
): Promise<void> {
  if (isGuest(before) === isGuest(after)) return;
  const could = await accessibleUserIds(work.db, realm, before);
  const can = await accessibleUserIds(work.db, realm, after);
  if (could === null && can === null) return;
  const sees = (set: Set<number> | null, u: UserRow): boolean =>
    set === null || u.is_bot === 1 || set.has(u.id);
  for (const other of users) {
    if (other.id === after.id || sees(could, other) === sees(can, other)) continue;
    work.emitOnCommit(
      sees(can, other)
        ? { type: 'realm_user', op: 'add', person: presentUser(other, after) }
        : {
            type: 'realm_user',
            op: 'remove',
            person: { user_id: other.id, full_name: INACCESSIBLE_USER_NAME },
          },
      [after.id],
    );
  }
}

/**
 * PATCH /users/{id}: administrators change names and roles; only owners grant or remove
 * the owner role. A bot's owner may rename their bot. A blank name is ignored, as the
 * reference server does.
 */
export async function updateUserByAdmin(
  ctx: AppContext,
  actor: Actor,
  targetId: number,
  params: {
    full_name?: string;
    role?: number;
    profile_data?: Array<{ id: number; value: unknown }>;
  },
): Promise<void> {
  await withTransaction(ctx, actor.realm.id, async (work) => {
    // Checked inside: a promotion to owner or a change of the actor's role committed since
    // counts as it would in turn (never an owner changed by an administrator).
    const me = await accessCurrentActor(work.db, actor);
    const target = await accessUserById(readingIn(ctx, work), me, targetId, { forAdmin: true });
    // Bots have no profile data (their user objects carry none).
    if (params.profile_data !== undefined && target.is_bot) {
      throw badRequest('Bots have no custom profile fields');
    }
    if (params.role !== undefined && params.role !== target.role) {
      if ((params.role === ROLE.owner || target.role === ROLE.owner) && !isOwner(me.user))
        throw mustBeOwner();
      if (!isAdmin(me.user)) throw mustBeAdmin();
    }
    const current = async (): Promise<UserRow> =>
      (await usersStore.getUserById(work.db, me.realm.id, targetId))!;
    if (params.role !== undefined) await doChangeRole(work, me.realm, target, params.role);
    if (params.full_name !== undefined && params.full_name.trim() !== '') {
      await doChangeFullName(work, me.realm, await current(), params.full_name);
    }
    if (params.profile_data !== undefined) {
      await doUpdateProfileData(ctx, work, me, await current(), params.profile_data);
    }
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

/**
 * Users whose real address the viewer's visibility change exposes or hides, and to whom;
 * returns the viewers whose access changed.
 */
export async function doAnnounceDeliveryEmailVisibility(
  work: Work,
  realm: RealmRow,
  before: UserRow,
  after: UserRow,
): Promise<number[]> {
  const viewers = await usersStore.listUsersByIds(
    work.db,
    realm.id,
    await usersWhoCanAccess(work.db, realm, after.id),
  );
  const changed: number[] = [];
  for (const viewer of viewers) {
    if (viewer.id === after.id) continue;
    const could = canSeeDeliveryEmail(viewer, before);
    const can = canSeeDeliveryEmail(viewer, after);
    if (could !== can) {
      changed.push(viewer.id);
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
  return changed;
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
  return withTransaction(ctx, realm.id, async (work) => {
    const user = await usersStore.getUserById(work.db, realm.id, userId);
    if (!user) throw resourceNotFound('No such user');
    return doRegenerateApiKey(ctx, work, realm, user);
  });
}

/** A fresh API key for the user, inside the caller's transaction; the caller checks who may. */
export async function doRegenerateApiKey(
  ctx: AppContext,
  work: Work,
  realm: RealmRow,
  user: UserRow,
): Promise<string> {
  const apiKey = ctx.random.alphanumeric(API_KEY_LENGTH);
  await usersStore.updateUser(work.db, user.id, { api_key: apiKey });
  if (user.is_bot) await emitBotUpdate(work, realm, user, { api_key: apiKey });
  return apiKey;
}
