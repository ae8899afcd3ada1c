// The only place user rows become API JSON.
import { createHash } from 'node:crypto';
import type { UserRow } from '../../store/schema.ts';
import { isAdmin, isGuest, isModerator, ROLE } from '../roles.ts';
import { memoByText } from '../memo.ts';
import { EMAIL_ADDRESS_VISIBILITY, readUserSettings } from '../user-settings.ts';

export interface Viewer {
  id: number;
  role: number;
}

/** Whether the viewer may see the target's real email address. */
export function canSeeDeliveryEmail(viewer: Viewer | null, target: UserRow): boolean {
  if (target.is_bot) return true;
  if (viewer === null) return false;
  if (viewer.id === target.id) return true;
  const visibility = readUserSettings(target.settings).email_address_visibility;
  switch (visibility) {
    case EMAIL_ADDRESS_VISIBILITY.everyone:
      return true;
    case EMAIL_ADDRESS_VISIBILITY.members:
      return !isGuest(viewer);
    case EMAIL_ADDRESS_VISIBILITY.moderators:
      return isModerator(viewer);
    case EMAIL_ADDRESS_VISIBILITY.admins:
      return isAdmin(viewer);
    default:
      return false;
  }
}

const gravatarHash = memoByText(
  (email: string) => createHash('md5').update(email.trim().toLowerCase()).digest('hex'),
  10_000,
);

export function gravatarUrl(email: string, version: number): string {
  return `https://secure.gravatar.com/avatar/${gravatarHash(email)}?d=identicon&version=${version}`;
}

export function avatarUrl(user: UserRow, medium = false): string {
  // Uploaded avatars are not supported yet; every avatar comes from Gravatar.
  const url = gravatarUrl(user.delivery_email, user.avatar_version);
  return medium ? `${url}&s=500` : url;
}

export interface PresentUserOptions {
  clientGravatar?: boolean;
  /** Custom profile data (field id -> value object), present only for non-bots. */
  profileData?: Record<string, unknown>;
  includeProfileData?: boolean;
}

export function presentUser(
  target: UserRow,
  viewer: Viewer | null,
  opts: PresentUserOptions = {},
): Record<string, unknown> {
  const seesEmail = canSeeDeliveryEmail(viewer, target);
  const out: Record<string, unknown> = {
    user_id: target.id,
    delivery_email: seesEmail ? target.delivery_email : null,
    email: target.email,
    full_name: target.full_name,
    date_joined: new Date(target.date_joined * 1000).toISOString(),
    is_active: target.is_active === 1,
    is_owner: target.role === ROLE.owner,
    is_admin: target.role <= ROLE.administrator,
    is_guest: target.role === ROLE.guest,
    is_bot: target.is_bot === 1,
    bot_type: target.bot_type,
    bot_owner_id: target.bot_owner_id,
    role: target.role,
    timezone: readUserSettings(target.settings).timezone,
    avatar_url:
      opts.clientGravatar && seesEmail && target.avatar_source === 'G' ? null : avatarUrl(target),
    avatar_version: target.avatar_version,
  };
  if (target.is_bot === 0 && opts.includeProfileData !== false) {
    out.profile_data = opts.profileData ?? {};
  }
  return out;
}

export const INACCESSIBLE_USER_NAME = 'Unknown user';

/**
 * What a guest limited by can_access_all_users_group learns of a user they cannot access:
 * that the id exists, with a placeholder name, address and avatar.
 */
export function presentInaccessibleUser(
  userId: number,
  fakeEmailDomain: string,
  placeholderAvatarUrl: string,
): Record<string, unknown> {
  return {
    user_id: userId,
    delivery_email: null,
    email: `user${userId}@${fakeEmailDomain}`,
    full_name: INACCESSIBLE_USER_NAME,
    date_joined: new Date(0).toISOString(),
    is_active: true,
    is_owner: false,
    is_admin: false,
    is_guest: false,
    is_bot: false,
    bot_type: null,
    bot_owner_id: null,
    role: ROLE.member,
    timezone: '',
    avatar_url: placeholderAvatarUrl,
    avatar_version: 1,
    profile_data: {},
  };
}
