// Parameter schemas shared by several areas.
import { Type } from 'typebox';

export const UserIdPath = Type.Object({
  user_id: Type.Integer({ minimum: 1, maximum: 2147483647 }),
});
export const ClientGravatar = Type.Boolean({ default: true });
export const IncludeCustomProfileFields = Type.Boolean({ default: false });

/** A group-setting value: a group id, or {direct_members, direct_subgroups}. */
export const GroupSettingValue = Type.Union([
  Type.Integer(),
  Type.Object(
    {
      direct_members: Type.Array(Type.Integer(), { maxItems: 10000 }),
      direct_subgroups: Type.Array(Type.Integer(), { maxItems: 1000 }),
    },
    { additionalProperties: false },
  ),
]);

/** A change of a group-setting value, with the value the client believes is current. */
export const GroupSettingUpdate = Type.Object(
  { new: GroupSettingValue, old: Type.Optional(GroupSettingValue) },
  { additionalProperties: false },
);
