// PATCH /realm: organization settings.
import { Type, type TSchema } from 'typebox';
import { updateRealmSettings } from '../../actions/realms.ts';
import {
  REALM_SETTINGS,
  type RealmSettingName,
  type RealmSettingSpec,
} from '../../lib/realm-settings.ts';
import { defineRoute } from '../route.ts';
import { GroupSettingUpdate } from '../schemas/common.ts';

function realmSettingSchema(spec: RealmSettingSpec): TSchema {
  if (spec.kind === 'group') return Type.Optional(GroupSettingUpdate);
  const base =
    spec.type === 'bool'
      ? Type.Boolean()
      : spec.type === 'int'
        ? Type.Integer()
        : Type.String({ maxLength: spec.maxLength ?? 200 });
  return Type.Optional(spec.nullable ? Type.Union([base, Type.Null()]) : base);
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
      name: Type.Optional(Type.String({ maxLength: 200 })),
      description: Type.Optional(Type.String({ maxLength: 10000 })),
      ...settingParams,
    }),
    handler: async ({ ctx, actor, params }) => {
      const { name, description, ...rest } = params as Record<string, unknown>;
      const settings = Object.fromEntries(
        Object.entries(rest).filter(([k]) => k in REALM_SETTINGS),
      ) as Partial<Record<RealmSettingName, unknown>>;
      await updateRealmSettings(ctx, actor, {
        name: name as string | undefined,
        description: description as string | undefined,
        settings,
      });
      return {};
    },
  }),
];
