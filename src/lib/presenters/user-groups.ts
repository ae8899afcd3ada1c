// User groups as the API shows them: named groups only (anonymous groups appear as
// group-setting values), with direct members that are active users.
import type { UserGroupRow } from '../../store/schema.ts';

export type PresentedSettingValue =
  number | { direct_members: number[]; direct_subgroups: number[] };

export const USER_GROUP_SETTING_NAMES = [
  'can_add_members_group',
  'can_join_group',
  'can_leave_group',
  'can_manage_group',
  'can_mention_group',
  'can_remove_members_group',
] as const;
export type UserGroupSettingName = (typeof USER_GROUP_SETTING_NAMES)[number];

export interface PresentedUserGroup {
  id: number;
  name: string;
  description: string;
  members: number[];
  direct_subgroup_ids: number[];
  is_system_group: boolean;
  date_created: number;
  creator_id: number | null;
  deactivated: boolean;
  can_add_members_group: PresentedSettingValue;
  can_join_group: PresentedSettingValue;
  can_leave_group: PresentedSettingValue;
  can_manage_group: PresentedSettingValue;
  can_mention_group: PresentedSettingValue;
  can_remove_members_group: PresentedSettingValue;
}

export function presentUserGroup(
  row: UserGroupRow,
  members: number[],
  subgroupIds: number[],
  settings: Record<UserGroupSettingName, PresentedSettingValue>,
): PresentedUserGroup {
  return {
    id: row.id,
    name: row.name ?? '',
    description: row.description,
    members: [...members].sort((a, b) => a - b),
    direct_subgroup_ids: [...subgroupIds].sort((a, b) => a - b),
    is_system_group: row.is_system_group === 1,
    date_created: row.date_created,
    creator_id: row.creator_id,
    deactivated: row.deactivated === 1,
    ...settings,
  };
}
