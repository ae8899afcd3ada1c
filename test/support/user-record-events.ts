// What a client does with muted_users, custom_profile_fields, realm_playgrounds and
// onboarding_steps events and with realm_user custom_profile_field updates to its register
// snapshot, and the declared shapes of those events. Written from the API description,
// independently of the server, for the event-contract suite.
import { Type, type TSchema } from 'typebox';

type Obj = Record<string, unknown>;

/** Each of these events carries the whole new list of its snapshot key. */
const WHOLE_LIST: Record<string, [eventKey: string, stateKey: string]> = {
  muted_users: ['muted_users', 'muted_users'],
  custom_profile_fields: ['fields', 'custom_profile_fields'],
  realm_playgrounds: ['realm_playgrounds', 'realm_playgrounds'],
  onboarding_steps: ['onboarding_steps', 'onboarding_steps'],
};

/** Apply one of these events; returns false for other types. */
export function applyUserRecordEvent(state: Obj, e: Obj): boolean {
  const keys = WHOLE_LIST[String(e.type)];
  if (!keys) return false;
  const [eventKey, stateKey] = keys;
  if (stateKey in state) state[stateKey] = structuredClone(e[eventKey]);
  if (e.type === 'custom_profile_fields') dropValuesOfDeletedFields(state, e.fields as Obj[]);
  return true;
}

/** A client forgets users' values of fields that no longer exist. */
function dropValuesOfDeletedFields(state: Obj, fields: Obj[]): void {
  if (!('realm_users' in state)) return;
  const known = new Set(fields.map((f) => String(f.id)));
  for (const person of [
    ...(state.realm_users as Obj[]),
    ...((state.realm_non_active_users as Obj[] | undefined) ?? []),
  ]) {
    const data = person.profile_data as Obj | undefined;
    if (!data) continue;
    for (const key of Object.keys(data)) if (!known.has(key)) delete data[key];
  }
}

/** A realm_user update with custom_profile_field sets (or, with a null value, clears) one value. */
export function applyProfileFieldValue(state: Obj, e: Obj): void {
  const person = e.person as Obj | undefined;
  const change = person?.custom_profile_field as Obj | undefined;
  if (e.op !== 'update' || !change || !('realm_users' in state)) return;
  const everyone = [
    ...(state.realm_users as Obj[]),
    ...((state.realm_non_active_users as Obj[] | undefined) ?? []),
  ];
  const target = everyone.find((p) => p.user_id === person!.user_id);
  if (!target || !target.profile_data) return;
  const data = target.profile_data as Obj;
  const key = String(change.id);
  if (change.value === null) {
    delete data[key];
  } else {
    data[key] = {
      value: change.value,
      ...(change.rendered_value !== undefined ? { rendered_value: change.rendered_value } : {}),
    };
  }
}

const strict = (fields: Record<string, TSchema>) =>
  Type.Object(fields, { additionalProperties: false });
const eventOf = (type: string, fields: Record<string, TSchema>) =>
  strict({ id: Type.Integer({ minimum: 0 }), type: Type.Literal(type), ...fields });

const ProfileField = strict({
  id: Type.Integer(),
  name: Type.String(),
  type: Type.Union([1, 2, 3, 4, 5, 6, 7, 8].map((v) => Type.Literal(v))),
  order: Type.Integer(),
  hint: Type.String(),
  field_data: Type.String(),
  required: Type.Boolean(),
  editable_by_user: Type.Boolean(),
  display_in_profile_summary: Type.Optional(Type.Boolean()),
});

export const USER_RECORD_EVENT_SHAPES: Record<string, TSchema[]> = {
  muted_users: [
    eventOf('muted_users', {
      muted_users: Type.Array(strict({ id: Type.Integer(), timestamp: Type.Integer() })),
    }),
  ],
  custom_profile_fields: [eventOf('custom_profile_fields', { fields: Type.Array(ProfileField) })],
  realm_playgrounds: [
    eventOf('realm_playgrounds', {
      realm_playgrounds: Type.Array(
        strict({
          id: Type.Integer(),
          name: Type.String(),
          pygments_language: Type.String(),
          url_template: Type.String(),
        }),
      ),
    }),
  ],
  onboarding_steps: [
    eventOf('onboarding_steps', {
      onboarding_steps: Type.Array(
        strict({ type: Type.Literal('one_time_notice'), name: Type.String() }),
      ),
    }),
  ],
};
