// Invitations: email invitations (one address, used once) and reusable links, each carrying
// the role, channels and groups of the account they create. Nothing is deleted: revoked and
// used invitations keep their rows, and expired ones are simply never listed or accepted.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { badRequest, JsonableError, mustBeAdmin, mustBeOwner } from '../lib/errors.ts';
import {
  inviteLink,
  presentEmailInvite,
  presentMultiuseInvite,
} from '../lib/presenters/invites.ts';
import { realmUrl } from '../lib/realm-url.ts';
import { isAdmin, isGuest, isOwner, ROLE, ROLES } from '../lib/roles.ts';
import { isValidEmail } from '../lib/validation.ts';
import { unixNow } from '../infra/clock.ts';
import * as channelsStore from '../store/channels.ts';
import type { Q } from '../store/db.ts';
import * as groups from '../store/user-groups.ts';
import * as invites from '../store/invites.ts';
import type { EmailInviteRow, MultiuseInviteRow, RealmRow, UserRow } from '../store/schema.ts';
import * as usersStore from '../store/users.ts';
import { getChannelAccess } from './channel-access.ts';
import { doSubscribeUsers } from './channels.ts';
import { listDefaultChannels } from './default-channels.ts';
import { notificationBot } from './message-reports.ts';
import { sendInternalDirectMessage } from './messages.ts';
import { accessCurrentActor, hasRealmPermission } from './permissions.ts';
import { withTransaction, type Work } from './transaction.ts';
import { doCreateUser, hashNewPassword } from './users.ts';

/** The reference server's default: ten days. */
export const DEFAULT_INVITE_EXPIRY_MINUTES = 10 * 24 * 60;
const INVITE_KEY_LENGTH = 24;

export interface InviteParams {
  inviteExpiresInMinutes: number | null;
  inviteAs: number;
  streamIds: number[];
  groupIds: number[];
  includeRealmDefaultSubscriptions: boolean;
  notifyReferrerOnJoin: boolean;
}

const noSuchInvitation = () => badRequest('No such invitation');
const insufficient = () => new JsonableError('Insufficient permission', 'UNAUTHORIZED_PRINCIPAL');

/** Invitations are for human members: not guests, not bots. */
function checkMemberOrAdmin(actor: Actor): void {
  if (actor.user.is_bot) throw badRequest('This endpoint does not accept bot requests.');
  if (isGuest(actor.user)) throw badRequest('Not allowed for guest users');
}

/** Administrators, moderators and owners may be invited only by administrators (owners by owners). */
function checkInviteAs(actor: Actor, role: number): void {
  if (!(ROLES as number[]).includes(role)) throw badRequest('Invalid invite_as');
  if (role === ROLE.owner && !isOwner(actor.user)) throw mustBeOwner();
  if ((role === ROLE.administrator || role === ROLE.moderator) && !isAdmin(actor.user)) {
    throw mustBeAdmin();
  }
}

/**
 * Whether the actor may invite as the role, under the setting: checked early on the actor as
 * authentication read them, and again, deciding, on the actor as the transaction reads them.
 */
async function checkMayInvite(
  db: Q,
  actor: Actor,
  setting: 'can_invite_users_group' | 'create_multiuse_invite_group',
  role: number,
): Promise<void> {
  checkMemberOrAdmin(actor);
  if (!(await hasRealmPermission(db, actor.user, setting))) throw insufficient();
  checkInviteAs(actor, role);
}

/** The channels and groups an invitation carries must exist and be the inviter's to give. */
async function checkChannelsAndGroups(work: Work, actor: Actor, p: InviteParams): Promise<void> {
  for (const id of p.streamIds) {
    const channel = await channelsStore.getChannel(work.db, actor.realm.id, id);
    const access = channel && (await getChannelAccess(work.db, actor.user, channel));
    if (!channel || !access?.metadata || channel.is_archived === 1) {
      throw badRequest(`Invalid channel ID ${id}. No invites were sent.`);
    }
  }
  const found = await groups.listGroupsByIds(work.db, actor.realm.id, p.groupIds);
  for (const id of p.groupIds) {
    const group = found.find((g) => g.id === id);
    if (!group || group.is_system_group === 1 || group.deactivated === 1) {
      throw badRequest(`Invalid user group ID: ${id}`);
    }
  }
}

function expiryOf(ctx: AppContext, minutes: number | null): number | null {
  if (minutes === null) return null;
  if (!Number.isInteger(minutes) || minutes <= 0) {
    throw badRequest('Invalid invite_expires_in_minutes');
  }
  return unixNow(ctx.clock) + minutes * 60;
}

const inviteColumns = (ctx: AppContext, actor: Actor, p: InviteParams, expiry: number | null) => ({
  realm_id: actor.realm.id,
  referred_by_id: actor.user.id,
  invited_as: p.inviteAs,
  created: unixNow(ctx.clock),
  expiry,
  notify_referrer_on_join: p.notifyReferrerOnJoin ? 1 : 0,
  channel_ids: JSON.stringify(p.streamIds),
  group_ids: JSON.stringify(p.groupIds),
  include_realm_default_subscriptions: p.includeRealmDefaultSubscriptions ? 1 : 0,
  invite_key: ctx.random.alphanumeric(INVITE_KEY_LENGTH),
  status: invites.INVITE_PENDING,
});

/** invites_changed carries nothing: administrators and the inviter refetch GET /invites. */
async function emitInvitesChanged(work: Work, realmId: number, referrerId: number): Promise<void> {
  const admins = await usersStore.listActiveAdminIds(work.db, realmId);
  work.emitOnCommit({ type: 'invites_changed' }, [...new Set([...admins, referrerId])]);
}

/** "a@x.com, Name <b@y.com>\nc@z.com" → the addresses, in order, without duplicates. */
export function parseInviteeEmails(raw: string): string[] {
  const out: string[] = [];
  for (const piece of raw.split(/[,\n]/)) {
    const trimmed = piece.trim();
    if (trimmed === '') continue;
    const angled = /<([^<>]*)>\s*$/.exec(trimmed);
    const email = (angled ? angled[1] : trimmed).trim();
    if (!out.includes(email)) out.push(email);
  }
  return out;
}

async function sendInviteMail(
  ctx: AppContext,
  realm: RealmRow,
  referrer: UserRow,
  invite: EmailInviteRow,
): Promise<void> {
  const link = inviteLink(realmUrl(ctx.config.externalUrl, realm.string_id), invite.invite_key);
  await ctx.mailer.send({
    to: invite.email,
    subject: `${referrer.full_name} invited you to join ${realm.name}`,
    text:
      `${referrer.full_name} invited you to join ${realm.name}.\n\n` +
      `Create your account: ${link}\n` +
      `(Clients: POST /api/v1/invites/accept with key=${invite.invite_key}.)\n`,
  });
}

/** GET /invites: one's own pending invitations; administrators see everyone's. */
export async function listInvites(
  ctx: AppContext,
  actor: Actor,
): Promise<Record<string, unknown>[]> {
  checkMemberOrAdmin(actor);
  const referrer = isAdmin(actor.user) ? null : actor.user.id;
  const now = unixNow(ctx.clock);
  const url = realmUrl(ctx.config.externalUrl, actor.realm.string_id);
  const emails = await invites.listPendingEmailInvites(ctx.db, actor.realm.id, referrer, now);
  const links = await invites.listPendingMultiuseInvites(ctx.db, actor.realm.id, referrer, now);
  return [
    ...emails.map(presentEmailInvite),
    ...links.map((row) => presentMultiuseInvite(row, url)),
  ];
}

/** POST /invites. Invalid addresses stop everything; existing accounts are skipped. */
export async function inviteUsers(
  ctx: AppContext,
  actor: Actor,
  rawEmails: string,
  p: InviteParams,
): Promise<void> {
  await checkMayInvite(ctx.db, actor, 'can_invite_users_group', p.inviteAs);
  const expiry = expiryOf(ctx, p.inviteExpiresInMinutes);
  const emails = parseInviteeEmails(rawEmails);
  if (emails.length === 0) throw badRequest('You must specify at least one email address.');
  const created = await withTransaction(ctx, actor.realm.id, async (work) => {
    const me = await accessCurrentActor(work.db, actor);
    await checkMayInvite(work.db, me, 'can_invite_users_group', p.inviteAs);
    await checkChannelsAndGroups(work, me, p);
    const invalid = emails.filter((e) => !isValidEmail(e));
    if (invalid.length > 0) {
      throw invitationFailed(
        "Some emails did not validate, so we didn't send any invitations.",
        invalid.map((e) => [e, 'Invalid address.', false]),
        false,
      );
    }
    const skipped: Array<[string, string, boolean]> = [];
    const rows: EmailInviteRow[] = [];
    for (const email of emails.map((e) => e.toLowerCase())) {
      const existing = await usersStore.getUserByDeliveryEmail(work.db, actor.realm.id, email);
      if (existing) {
        skipped.push(
          existing.is_active
            ? [email, 'Already has an account.', false]
            : [email, 'Account has been deactivated.', true],
        );
        continue;
      }
      rows.push(
        await invites.insertEmailInvite(work.db, {
          ...inviteColumns(ctx, me, p, expiry),
          email,
        }),
      );
    }
    if (rows.length === 0) {
      throw invitationFailed("We weren't able to invite anyone.", skipped, false);
    }
    await emitInvitesChanged(work, me.realm.id, me.user.id);
    return { rows, skipped, me };
  });
  for (const row of created.rows) await sendInviteMail(ctx, created.me.realm, created.me.user, row);
  if (created.skipped.length > 0) {
    throw invitationFailed(
      "Some of those addresses are already using Parley, so we didn't send them an invitation. We did send invitations to everyone else!",
      created.skipped,
      true,
    );
  }
}

function invitationFailed(
  msg: string,
  errors: Array<[string, string, boolean]>,
  sent: boolean,
): JsonableError {
  return new JsonableError(msg, 'INVITATION_FAILED', 400, {
    errors,
    sent_invitations: sent,
    license_limit_reached: false,
    daily_limit_reached: false,
  });
}

/** POST /invites/multiuse: a reusable link. */
export async function createMultiuseInvite(
  ctx: AppContext,
  actor: Actor,
  p: InviteParams,
): Promise<{ invite_link: string }> {
  await checkMayInvite(ctx.db, actor, 'create_multiuse_invite_group', p.inviteAs);
  const expiry = expiryOf(ctx, p.inviteExpiresInMinutes);
  const row = await withTransaction(ctx, actor.realm.id, async (work) => {
    const me = await accessCurrentActor(work.db, actor);
    await checkMayInvite(work.db, me, 'create_multiuse_invite_group', p.inviteAs);
    await checkChannelsAndGroups(work, me, p);
    const row = await invites.insertMultiuseInvite(work.db, inviteColumns(ctx, me, p, expiry));
    await emitInvitesChanged(work, me.realm.id, me.user.id);
    return row;
  });
  return {
    invite_link: inviteLink(
      realmUrl(ctx.config.externalUrl, actor.realm.string_id),
      row.invite_key,
    ),
  };
}

/** The inviter or an administrator may manage an invitation. */
function checkManage(actor: Actor, row: EmailInviteRow | MultiuseInviteRow): void {
  if (!isAdmin(actor.user) && row.referred_by_id !== actor.user.id) throw mustBeAdmin();
}

/** DELETE /invites/{id}. */
export async function revokeEmailInvite(ctx: AppContext, actor: Actor, id: number): Promise<void> {
  checkMemberOrAdmin(actor);
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const me = await accessCurrentActor(work.db, actor);
    checkMemberOrAdmin(me);
    const row = await invites.getEmailInvite(work.db, actor.realm.id, id);
    if (!row || row.status !== invites.INVITE_PENDING) throw noSuchInvitation();
    checkManage(me, row);
    await invites.setInviteStatus(work.db, 'email_invites', row.id, invites.INVITE_REVOKED);
    await emitInvitesChanged(work, actor.realm.id, row.referred_by_id);
  });
}

/** DELETE /invites/multiuse/{id}. */
export async function revokeMultiuseInvite(
  ctx: AppContext,
  actor: Actor,
  id: number,
): Promise<void> {
  checkMemberOrAdmin(actor);
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const me = await accessCurrentActor(work.db, actor);
    checkMemberOrAdmin(me);
    const row = await invites.getMultiuseInvite(work.db, actor.realm.id, id);
    if (!row) throw noSuchInvitation();
    checkManage(me, row);
    if (row.status === invites.INVITE_REVOKED) {
      throw badRequest('Invitation has already been revoked');
    }
    await invites.setInviteStatus(work.db, 'multiuse_invites', row.id, invites.INVITE_REVOKED);
    await emitInvitesChanged(work, actor.realm.id, row.referred_by_id);
  });
}

/** POST /invites/{id}/resend: mail it again and restart its clock. */
export async function resendEmailInvite(ctx: AppContext, actor: Actor, id: number): Promise<void> {
  checkMemberOrAdmin(actor);
  const now = unixNow(ctx.clock);
  const { row, referrer } = await withTransaction(ctx, actor.realm.id, async (work) => {
    const me = await accessCurrentActor(work.db, actor);
    checkMemberOrAdmin(me);
    const row = await invites.getEmailInvite(work.db, actor.realm.id, id);
    if (
      !row ||
      row.status !== invites.INVITE_PENDING ||
      (row.expiry !== null && row.expiry <= now)
    ) {
      throw noSuchInvitation();
    }
    checkManage(me, row);
    await invites.setEmailInviteCreated(work.db, row.id, now);
    await emitInvitesChanged(work, actor.realm.id, row.referred_by_id);
    const referrer = await usersStore.getUserById(work.db, actor.realm.id, row.referred_by_id);
    return { row: { ...row, created: now }, referrer: referrer! };
  });
  await sendInviteMail(ctx, actor.realm, referrer, row);
}

export interface AcceptParams {
  key: string;
  fullName: string;
  password: string;
  /** Required for a reusable link; an email invitation carries its address. */
  email?: string;
}

const invalidKey = () => badRequest('The invitation is invalid or has expired.');

/** The pending, unexpired invitation with this key whose inviter is still active. */
async function accessPendingInvite(
  db: Q,
  realm: RealmRow,
  key: string,
  now: number,
): Promise<{
  invite: EmailInviteRow | MultiuseInviteRow;
  byEmail: EmailInviteRow | undefined;
  referrer: UserRow;
}> {
  const byEmail = await invites.getEmailInviteByKey(db, realm.id, key);
  const invite = byEmail ?? (await invites.getMultiuseInviteByKey(db, realm.id, key));
  if (!invite || invite.status !== invites.INVITE_PENDING) throw invalidKey();
  if (invite.expiry !== null && invite.expiry <= now) throw invalidKey();
  const referrer = await usersStore.getUserById(db, realm.id, invite.referred_by_id);
  // An invitation dies with its inviter's account.
  if (!referrer || !referrer.is_active) throw invalidKey();
  return { invite, byEmail, referrer };
}

/**
 * POST /invites/accept: create the account an invitation describes, with its role,
 * channels and groups, and tell the referrer if the invitation asks to.
 */
export async function acceptInvite(
  ctx: AppContext,
  realm: RealmRow | undefined,
  p: AcceptParams,
): Promise<{ user_id: number; email: string; api_key: string }> {
  if (!realm || realm.deactivated) throw invalidKey();
  const now = unixNow(ctx.clock);
  // Refused before the password is hashed (tens of milliseconds, for anyone who asks), and
  // checked again inside the transaction: the invitation may be used or revoked meanwhile.
  await accessPendingInvite(ctx.db, realm, p.key, now);
  const passwordHash = await hashNewPassword(ctx, p.password);
  return withTransaction(ctx, realm.id, async (work) => {
    const { invite, byEmail, referrer } = await accessPendingInvite(work.db, realm, p.key, now);
    let email: string;
    if (byEmail) {
      email = byEmail.email;
    } else {
      if (p.email === undefined) throw badRequest('Missing email');
      email = p.email;
    }
    const user = await doCreateUser(ctx, work, realm, {
      email,
      fullName: p.fullName,
      role: invite.invited_as,
      passwordHash,
    });
    // Every pending email invitation to the address is used up by the signup.
    for (const row of await invites.listPendingInvitesForEmail(
      work.db,
      realm.id,
      user.delivery_email,
    )) {
      await invites.setInviteStatus(work.db, 'email_invites', row.id, invites.INVITE_USED);
      if (row.referred_by_id !== invite.referred_by_id) {
        await emitInvitesChanged(work, realm.id, row.referred_by_id);
      }
    }
    const channelIds = new Set(JSON.parse(invite.channel_ids) as number[]);
    if (invite.include_realm_default_subscriptions) {
      for (const id of await listDefaultChannels(work.db, realm)) channelIds.add(id);
    }
    for (const id of channelIds) {
      const channel = await channelsStore.getChannel(work.db, realm.id, id);
      // A channel archived since the invitation was sent is skipped.
      if (channel && channel.is_archived === 0) {
        await doSubscribeUsers(ctx, work, realm, channel, [user]);
      }
    }
    await addToGroups(work, realm, user, JSON.parse(invite.group_ids) as number[]);
    await emitInvitesChanged(work, realm.id, invite.referred_by_id);
    if (invite.notify_referrer_on_join) {
      const bot = await notificationBot(ctx, work, realm);
      await sendInternalDirectMessage(
        ctx,
        work,
        realm,
        bot,
        [referrer],
        `@_**${user.full_name}|${user.id}** accepted your invitation to join ${realm.name}!`,
      );
    }
    return { user_id: user.id, email: user.email, api_key: user.api_key };
  });
}

/** Groups deactivated since the invitation was sent are skipped. */
async function addToGroups(
  work: Work,
  realm: RealmRow,
  user: UserRow,
  groupIds: number[],
): Promise<void> {
  const everyone = await usersStore.listActiveUserIds(work.db, realm.id);
  for (const group of await groups.listGroupsByIds(work.db, realm.id, groupIds)) {
    if (group.deactivated === 1) continue;
    await groups.addGroupMembers(work.db, group.id, [user.id]);
    work.emitOnCommit(
      { type: 'user_group', op: 'add_members', group_id: group.id, user_ids: [user.id] },
      everyone,
    );
  }
}
