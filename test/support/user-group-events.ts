// What a client does with user_group events to its register snapshot (realm_user_groups),
// and the declared shapes of those events. Written from the API description,
// independently of the server, for the event-contract suite.
import { Type, type TSchema } from 'typebox';

type Obj = Record<string, unknown>;
type State = Obj;

const GroupSettingValue = Type.Union([
  Type.Integer(),
  Type.Object(
    { direct_members: Type.Array(Type.Integer()), direct_subgroups: Type.Array(Type.Integer()) },
    { additionalProperties: false },
  ),
]);

const SETTINGS = [
  'can_add_members_group',
  'can_join_group',
  'can_leave_group',
  'can_manage_group',
  'can_mention_group',
  'can_remove_members_group',
];

const Group = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    description: Type.String(),
    members: Type.Array(Type.Integer()),
    direct_subgroup_ids: Type.Array(Type.Integer()),
    is_system_group: Type.Boolean(),
    date_created: Type.Integer(),
    creator_id: Type.Union([Type.Integer(), Type.Null()]),
    deactivated: Type.Boolean(),
    ...Object.fromEntries(SETTINGS.map((s) => [s, GroupSettingValue])),
  },
  { additionalProperties: false },
);

const eventOf = (op: string, fields: Record<string, TSchema>): TSchema =>
  Type.Object(
    { id: Type.Integer(), type: Type.Literal('user_group'), op: Type.Literal(op), ...fields },
    { additionalProperties: false },
  );

const UpdateData = Type.Union([
  Type.Object({ name: Type.String() }, { additionalProperties: false }),
  Type.Object({ description: Type.String() }, { additionalProperties: false }),
  Type.Object({ deactivated: Type.Boolean() }, { additionalProperties: false }),
  ...SETTINGS.map((s) => Type.Object({ [s]: GroupSettingValue }, { additionalProperties: false })),
]);

export const USER_GROUP_EVENT_SHAPES: Record<string, TSchema[]> = {
  user_group: [
    eventOf('add', { group: Group }),
    eventOf('update', { group_id: Type.Integer(), data: UpdateData }),
    eventOf('add_members', { group_id: Type.Integer(), user_ids: Type.Array(Type.Integer()) }),
    eventOf('remove_members', { group_id: Type.Integer(), user_ids: Type.Array(Type.Integer()) }),
    eventOf('add_subgroups', {
      group_id: Type.Integer(),
      direct_subgroup_ids: Type.Array(Type.Integer()),
    }),
    eventOf('remove_subgroups', {
      group_id: Type.Integer(),
      direct_subgroup_ids: Type.Array(Type.Integer()),
    }),
    eventOf('remove', { group_id: Type.Integer() }),
  ],
};

const sorted = (ids: number[]): number[] => [...new Set(ids)].sort((a, b) => a - b);

/** Apply a user_group event to realm_user_groups. */
export function applyUserGroupEvent(state: State, e: Obj): void {
  if (!('realm_user_groups' in state)) return;
  let list = state.realm_user_groups as Obj[];
  if (e.op === 'add') {
    list.push(structuredClone(e.group as Obj));
    list.sort((a, b) => (a.id as number) - (b.id as number));
    return;
  }
  if (e.op === 'remove') {
    list = list.filter((g) => g.id !== e.group_id);
    state.realm_user_groups = list;
    return;
  }
  const group = list.find((g) => g.id === e.group_id);
  if (!group) throw new Error(`user_group ${String(e.op)} for unknown group ${String(e.group_id)}`);
  switch (e.op) {
    case 'update':
      Object.assign(group, structuredClone(e.data as Obj));
      return;
    case 'add_members':
      group.members = sorted([...(group.members as number[]), ...(e.user_ids as number[])]);
      return;
    case 'remove_members': {
      const gone = new Set(e.user_ids as number[]);
      group.members = (group.members as number[]).filter((id) => !gone.has(id));
      return;
    }
    case 'add_subgroups':
      group.direct_subgroup_ids = sorted([
        ...(group.direct_subgroup_ids as number[]),
        ...(e.direct_subgroup_ids as number[]),
      ]);
      return;
    case 'remove_subgroups': {
      const gone = new Set(e.direct_subgroup_ids as number[]);
      group.direct_subgroup_ids = (group.direct_subgroup_ids as number[]).filter(
        (id) => !gone.has(id),
      );
      return;
    }
    default:
      throw new Error(`user_group event op ${String(e.op)} not handled`);
  }
}

/** A deactivated user is no longer shown in any group: clients drop them on deactivation. */
export function dropDeactivatedFromGroups(state: State, e: Obj): void {
  if (!('realm_user_groups' in state) || e.op !== 'update') return;
  const person = e.person as Obj;
  if (person.is_active !== false) return;
  for (const group of state.realm_user_groups as Obj[]) {
    group.members = (group.members as number[]).filter((id) => id !== person.user_id);
  }
}
