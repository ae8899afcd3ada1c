// Invitations: email invitations and reusable links, in two tables with separate ids.
import type { Insertable } from 'kysely';
import type { Q } from './db.ts';
import type {
  EmailInviteRow,
  EmailInviteTable,
  InviteColumns,
  MultiuseInviteRow,
} from './schema.ts';

export const INVITE_PENDING = 0;
export const INVITE_USED = 1;
export const INVITE_REVOKED = 2;

export type InviteTable = 'email_invites' | 'multiuse_invites';

export async function insertEmailInvite(
  db: Q,
  row: Insertable<EmailInviteTable>,
): Promise<EmailInviteRow> {
  return db.insertInto('email_invites').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function insertMultiuseInvite(
  db: Q,
  row: Insertable<InviteColumns>,
): Promise<MultiuseInviteRow> {
  return db.insertInto('multiuse_invites').values(row).returningAll().executeTakeFirstOrThrow();
}

/** Pending, unexpired invitations; of one referrer, or of everyone (referrerId null). */
export async function listPendingEmailInvites(
  db: Q,
  realmId: number,
  referrerId: number | null,
  now: number,
): Promise<EmailInviteRow[]> {
  let q = db
    .selectFrom('email_invites')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('status', '=', INVITE_PENDING)
    .where((eb) => eb.or([eb('expiry', 'is', null), eb('expiry', '>', now)]));
  if (referrerId !== null) q = q.where('referred_by_id', '=', referrerId);
  return q.orderBy('id').execute();
}

export async function listPendingMultiuseInvites(
  db: Q,
  realmId: number,
  referrerId: number | null,
  now: number,
): Promise<MultiuseInviteRow[]> {
  let q = db
    .selectFrom('multiuse_invites')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('status', '=', INVITE_PENDING)
    .where((eb) => eb.or([eb('expiry', 'is', null), eb('expiry', '>', now)]));
  if (referrerId !== null) q = q.where('referred_by_id', '=', referrerId);
  return q.orderBy('id').execute();
}

export async function getEmailInvite(
  db: Q,
  realmId: number,
  id: number,
): Promise<EmailInviteRow | undefined> {
  return db
    .selectFrom('email_invites')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function getMultiuseInvite(
  db: Q,
  realmId: number,
  id: number,
): Promise<MultiuseInviteRow | undefined> {
  return db
    .selectFrom('multiuse_invites')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function getEmailInviteByKey(
  db: Q,
  realmId: number,
  key: string,
): Promise<EmailInviteRow | undefined> {
  return db
    .selectFrom('email_invites')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('invite_key', '=', key)
    .executeTakeFirst();
}

export async function getMultiuseInviteByKey(
  db: Q,
  realmId: number,
  key: string,
): Promise<MultiuseInviteRow | undefined> {
  return db
    .selectFrom('multiuse_invites')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('invite_key', '=', key)
    .executeTakeFirst();
}

export async function setInviteStatus(
  db: Q,
  table: InviteTable,
  id: number,
  status: number,
): Promise<void> {
  await db.updateTable(table).set({ status }).where('id', '=', id).execute();
}

/** Resending restarts the invitation's clock, as the reference server does. */
export async function setEmailInviteCreated(db: Q, id: number, created: number): Promise<void> {
  await db.updateTable('email_invites').set({ created }).where('id', '=', id).execute();
}

/** Pending email invitations to an address, which one signup uses up together. */
export async function listPendingInvitesForEmail(
  db: Q,
  realmId: number,
  email: string,
): Promise<EmailInviteRow[]> {
  return db
    .selectFrom('email_invites')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('status', '=', INVITE_PENDING)
    .where('email', '=', email)
    .execute();
}
