// Invitations as GET /invites shows them: email invitations carry the email, reusable
// links the link; the two kinds have separate id sets.
import type { EmailInviteRow, MultiuseInviteRow } from '../../store/schema.ts';

/** Where an invitation's key is used; POST /api/v1/invites/accept takes the key. */
export const inviteLink = (realmUrl: string, key: string): string => `${realmUrl}/join/${key}/`;

const common = (row: EmailInviteRow | MultiuseInviteRow) => ({
  id: row.id,
  invited_by_user_id: row.referred_by_id,
  invited: row.created,
  expiry_date: row.expiry,
  invited_as: row.invited_as,
  notify_referrer_on_join: row.notify_referrer_on_join === 1,
});

export function presentEmailInvite(row: EmailInviteRow): Record<string, unknown> {
  return { ...common(row), email: row.email, is_multiuse: false };
}

export function presentMultiuseInvite(
  row: MultiuseInviteRow,
  realmUrl: string,
): Record<string, unknown> {
  return { ...common(row), link_url: inviteLink(realmUrl, row.invite_key), is_multiuse: true };
}
