// Organizations created from the command line or on the first start of an empty server:
// the organization and its first owner, through the same actions the API uses.
import type { AppContext } from '../context.ts';
import { ROLE } from '../lib/roles.ts';
import { checkEmail, checkFullName, checkPassword } from '../lib/validation.ts';
import * as realmsStore from '../store/realms.ts';
import * as usersStore from '../store/users.ts';
import type { RealmRow, UserRow } from '../store/schema.ts';
import { createRealm } from './realms.ts';
import { createUser } from './users.ts';

export interface NewOrganizationParams {
  name: string;
  stringId: string;
  ownerEmail: string;
  ownerFullName: string;
  /** null: the owner signs in with the API key only. */
  ownerPassword: string | null;
}

export interface NewOrganization {
  realm: RealmRow;
  owner: UserRow;
}

/**
 * Create an organization and its owner. Two transactions: the owner's events need the
 * organization's id to order them. firstStart() finishes an organization left without
 * an owner by a crash in between.
 */
export async function createOrganization(
  ctx: AppContext,
  params: NewOrganizationParams,
): Promise<NewOrganization> {
  // Fail before creating anything when the owner's details are unusable.
  checkEmail(params.ownerEmail);
  checkFullName(params.ownerFullName);
  if (params.ownerPassword) checkPassword(params.ownerPassword);
  const realm = await createRealm(ctx, { name: params.name, stringId: params.stringId });
  const owner = await createOwner(ctx, realm, params);
  return { realm, owner };
}

async function createOwner(
  ctx: AppContext,
  realm: RealmRow,
  params: Pick<NewOrganizationParams, 'ownerEmail' | 'ownerFullName' | 'ownerPassword'>,
): Promise<UserRow> {
  return createUser(ctx, realm, {
    email: params.ownerEmail,
    fullName: params.ownerFullName,
    role: ROLE.owner,
    password: params.ownerPassword,
  });
}

export const FIRST_REALM_NAME = 'Parley';
export const FIRST_OWNER_NAME = 'Owner';
export const FIRST_PASSWORD_LENGTH = 20;

export interface FirstStart extends NewOrganization {
  /** Shown once; only its hash is stored. */
  password: string;
}

/** owner@<host of the external URL>, or owner@localhost when that host cannot be an address. */
export function firstOwnerEmail(externalUrl: URL): string {
  try {
    return checkEmail(`owner@${externalUrl.hostname}`);
  } catch {
    return 'owner@localhost';
  }
}

/**
 * On a server without organizations, create the default one (subdomain "") and its owner
 * with a random password. Returns null when there is nothing to do.
 */
export async function firstStart(ctx: AppContext): Promise<FirstStart | null> {
  const realms = await realmsStore.listRealms(ctx.db);
  const existing = realms.length === 1 && realms[0].string_id === '' ? realms[0] : null;
  if (realms.length > 0 && !existing) return null;
  if (existing && (await usersStore.listUsers(ctx.db, existing.id)).length > 0) return null;

  const password = ctx.random.alphanumeric(FIRST_PASSWORD_LENGTH);
  const owner = {
    ownerEmail: firstOwnerEmail(ctx.config.externalUrl),
    ownerFullName: FIRST_OWNER_NAME,
    ownerPassword: password,
  };
  if (existing)
    return { realm: existing, owner: await createOwner(ctx, existing, owner), password };
  const created = await createOrganization(ctx, {
    name: FIRST_REALM_NAME,
    stringId: '',
    ...owner,
  });
  return { ...created, password };
}
