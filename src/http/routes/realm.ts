// PATCH /realm: organization settings.
import { Type, type TSchema } from 'typebox';
import { updateRealmSettings } from '../../actions/realms.ts';
import {
  REALM_DESCRIPTION_MAX_LENGTH,
  REALM_NAME_MAX_LENGTH,
  REALM_SETTINGS,
  type RealmSettingName,
  type RealmSettingSpec,
} from '../../lib/realm-settings.ts';
import { defineRoute } from '../route.ts';
import { GroupSettingUpdate } from '../schemas/common.ts';

// Lengths here only bound the request; the setting's own checks word the error.
const MAX_TEXT = 1000;

function realmSettingSchema(spec: RealmSettingSpec): TSchema {
  if (spec.kind === 'group') return Type.Optional(GroupSettingUpdate);
  const aliases = spec.aliases ? { 'x-aliases': [...spec.aliases] } : {};
  if (spec.type === 'bool') return Type.Optional(Type.Boolean(aliases));
  if (spec.type === 'string')
    return Type.Optional(Type.String({ maxLength: MAX_TEXT, ...aliases }));
  // Numbers, or a word such as "unlimited" for the settings that take one.
  return Type.Optional(
    spec.special
      ? Type.Union([Type.Integer(), Type.String({ maxLength: MAX_TEXT })], aliases)
      : Type.Integer(aliases),
  );
}

const settingParams = Object.fromEntries(
  Object.entries(REALM_SETTINGS).map(([name, spec]) => [
    name,
    realmSettingSchema(spec as RealmSettingSpec),
  ]),
);

export const realmRoutes = [
  defineRoute({
    method: 'PATCH',
    url: '/realm',
    summary: "Update the organization's settings (administrators; owners for owner-only settings)",
    tags: ['server_and_organizations'],
    auth: 'user',
    params: Type.Object({
      name: Type.Optional(Type.String({ maxLength: REALM_NAME_MAX_LENGTH })),
      description: Type.Optional(Type.String({ maxLength: REALM_DESCRIPTION_MAX_LENGTH })),
      ...settingParams,
    }),
    handler: async ({ ctx, actor, params }) => {
      const { name, description, ...rest } = params as Record<string, unknown>;
      const settings = Object.fromEntries(
        Object.entries(rest).filter(([k]) => Object.hasOwn(REALM_SETTINGS, k)),
      ) as Partial<Record<RealmSettingName, unknown>>;
      return updateRealmSettings(ctx, actor, {
        name: name as string | undefined,
        description: description as string | undefined,
        settings,
      });
    },
  }),
];
