// Roles and the system groups that mirror them. Every permission setting refers to a
// group, so the system groups exist in every organization from its creation.

export const ROLE = {
  owner: 100,
  administrator: 200,
  moderator: 300,
  member: 400,
  guest: 600,
} as const;
export type Role = (typeof ROLE)[keyof typeof ROLE];
export const ROLES: Role[] = [100, 200, 300, 400, 600];
export const ROLE_NAMES: Record<string, Role> = {
  owner: 100,
  admin: 200,
  administrator: 200,
  moderator: 300,
  member: 400,
  guest: 600,
};

export const isRole = (v: number): v is Role => (ROLES as number[]).includes(v);

export interface HasRole {
  role: number;
}
export const isOwner = (u: HasRole): boolean => u.role === ROLE.owner;
export const isAdmin = (u: HasRole): boolean => u.role <= ROLE.administrator;
export const isModerator = (u: HasRole): boolean => u.role <= ROLE.moderator;
export const isGuest = (u: HasRole): boolean => u.role === ROLE.guest;

export const SYSTEM_GROUP = {
  owners: 'role:owners',
  administrators: 'role:administrators',
  moderators: 'role:moderators',
  fullmembers: 'role:fullmembers',
  members: 'role:members',
  everyone: 'role:everyone',
  internet: 'role:internet',
  nobody: 'role:nobody',
} as const;
export type SystemGroupName = (typeof SYSTEM_GROUP)[keyof typeof SYSTEM_GROUP];

/**
 * The system groups in creation order, each with its description and the next-wider group
 * it is a subgroup of (owners ⊂ administrators ⊂ moderators ⊂ full members ⊂ members ⊂
 * everyone ⊂ internet). Users are direct members of the group of their own role only.
 */
export const SYSTEM_GROUPS: Array<{
  name: SystemGroupName;
  description: string;
  within: SystemGroupName | null;
}> = [
  {
    name: 'role:owners',
    description: 'Owners of this organization',
    within: 'role:administrators',
  },
  {
    name: 'role:administrators',
    description: 'Administrators of this organization, including owners',
    within: 'role:moderators',
  },
  {
    name: 'role:moderators',
    description: 'Moderators of this organization, including administrators',
    within: 'role:fullmembers',
  },
  {
    name: 'role:fullmembers',
    description: 'Members of this organization, not including new accounts and guests',
    within: 'role:members',
  },
  {
    name: 'role:members',
    description: 'Members of this organization, not including guests',
    within: 'role:everyone',
  },
  {
    name: 'role:everyone',
    description: 'Everyone in this organization, including guests',
    within: 'role:internet',
  },
  { name: 'role:internet', description: 'Everyone on the Internet', within: null },
  { name: 'role:nobody', description: 'Nobody', within: null },
];

/**
 * The system group a user of this role is a direct member of. Parley has no waiting
 * period for full membership yet, so members are full members from the start.
 */
export function systemGroupForRole(role: number): SystemGroupName {
  switch (role) {
    case ROLE.owner:
      return 'role:owners';
    case ROLE.administrator:
      return 'role:administrators';
    case ROLE.moderator:
      return 'role:moderators';
    case ROLE.guest:
      return 'role:everyone';
    default:
      return 'role:fullmembers';
  }
}
