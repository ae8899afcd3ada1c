// Invitations: email invitations and reusable links (list, create, revoke, resend), and
// the signup that turns one into an account.
import { Type, type Static } from 'typebox';
import {
  acceptInvite,
  createMultiuseInvite,
  DEFAULT_INVITE_EXPIRY_MINUTES,
  inviteUsers,
  listInvites,
  resendEmailInvite,
  revokeEmailInvite,
  revokeMultiuseInvite,
  type InviteParams,
} from '../../actions/invites.ts';
import { defineRoute } from '../route.ts';

const InviteId = Type.Object({ invite_id: Type.Integer({ minimum: 0, maximum: 2147483647 }) });
const Ids = () => Type.Array(Type.Integer({ minimum: 0, maximum: 2147483647 }), { maxItems: 1000 });

const inviteFields = {
  invite_expires_in_minutes: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  invite_as: Type.Integer({ default: 400 }),
  stream_ids: Ids(),
  group_ids: Type.Optional(Ids()),
  include_realm_default_subscriptions: Type.Boolean({ default: false }),
  notify_referrer_on_join: Type.Boolean({ default: true }),
};
const InviteFields = Type.Object(inviteFields);

function inviteParams(p: Static<typeof InviteFields>): InviteParams {
  return {
    inviteExpiresInMinutes:
      p.invite_expires_in_minutes === undefined
        ? DEFAULT_INVITE_EXPIRY_MINUTES
        : p.invite_expires_in_minutes,
    inviteAs: p.invite_as,
    streamIds: p.stream_ids,
    groupIds: p.group_ids ?? [],
    includeRealmDefaultSubscriptions: p.include_realm_default_subscriptions,
    notifyReferrerOnJoin: p.notify_referrer_on_join,
  };
}

export const invitesRoutes = [
  defineRoute({
    method: 'GET',
    url: '/invites',
    summary: 'Pending invitations the caller may manage (administrators: all)',
    tags: ['invites'],
    auth: 'user',
    handler: async ({ ctx, actor }) => ({ invites: await listInvites(ctx, actor) }),
  }),
  defineRoute({
    method: 'POST',
    url: '/invites',
    summary: 'Invite people by email',
    tags: ['invites'],
    auth: 'user',
    params: Type.Object({ invitee_emails: Type.String({ maxLength: 100000 }), ...inviteFields }),
    handler: async ({ ctx, actor, params }) => {
      await inviteUsers(ctx, actor, params.invitee_emails, inviteParams(params));
      return {};
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/invites/multiuse',
    summary: 'Create a reusable invitation link',
    tags: ['invites'],
    auth: 'user',
    params: InviteFields,
    handler: async ({ ctx, actor, params }) =>
      createMultiuseInvite(ctx, actor, inviteParams(params)),
  }),
  defineRoute({
    method: 'DELETE',
    url: '/invites/:invite_id',
    summary: 'Revoke an email invitation (its inviter or an administrator)',
    tags: ['invites'],
    auth: 'user',
    path: InviteId,
    handler: async ({ ctx, actor, path }) => {
      await revokeEmailInvite(ctx, actor, path.invite_id as number);
      return {};
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/invites/multiuse/:invite_id',
    summary: 'Revoke a reusable invitation link (its creator or an administrator)',
    tags: ['invites'],
    auth: 'user',
    path: InviteId,
    handler: async ({ ctx, actor, path }) => {
      await revokeMultiuseInvite(ctx, actor, path.invite_id as number);
      return {};
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/invites/:invite_id/resend',
    summary: 'Send an email invitation again (its inviter or an administrator)',
    tags: ['invites'],
    auth: 'user',
    path: InviteId,
    handler: async ({ ctx, actor, path }) => {
      await resendEmailInvite(ctx, actor, path.invite_id as number);
      return {};
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/invites/accept',
    summary:
      "Create an account from an invitation's key (email required for a reusable link); returns its API key",
    tags: ['invites'],
    auth: 'none',
    params: Type.Object({
      key: Type.String({ maxLength: 100 }),
      full_name: Type.String({ maxLength: 1000 }),
      password: Type.String({ maxLength: 1000 }),
      email: Type.Optional(Type.String({ maxLength: 1000 })),
    }),
    handler: async ({ ctx, realm, params }) =>
      acceptInvite(ctx, realm, {
        key: params.key,
        fullName: params.full_name,
        password: params.password,
        email: params.email,
      }),
  }),
];
