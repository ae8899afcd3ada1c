// PATCH /settings: the caller's own account and personal settings.
import { Type, type TSchema } from 'typebox';
import { updateSettings } from '../../actions/settings.ts';
import { USER_SETTINGS, type SettingSpec, type UserSettingName } from '../../lib/user-settings.ts';
import { defineRoute } from '../route.ts';

// Lengths here only bound the request; the setting's own checks word the error.
const MAX_TEXT = 1000;

function settingSchema(spec: SettingSpec): TSchema {
  if (spec.type === 'bool') return Type.Optional(Type.Boolean());
  if (spec.type === 'int') return Type.Optional(Type.Integer());
  return Type.Optional(Type.String({ maxLength: MAX_TEXT }));
}

const settingParams = Object.fromEntries(
  Object.entries(USER_SETTINGS).map(([name, spec]) => [name, settingSchema(spec as SettingSpec)]),
);

export const settingsRoutes = [
  defineRoute({
    method: 'PATCH',
    url: '/settings',
    summary: "Update the caller's name, email, password and personal settings",
    tags: ['users'],
    auth: 'user',
    params: Type.Object({
      full_name: Type.Optional(Type.String({ maxLength: MAX_TEXT })),
      email: Type.Optional(Type.String({ maxLength: 254 })),
      old_password: Type.Optional(Type.String({ maxLength: MAX_TEXT })),
      new_password: Type.Optional(Type.String({ maxLength: MAX_TEXT })),
      ...settingParams,
    }),
    handler: async ({ ctx, actor, params }) => {
      const { full_name, email, old_password, new_password, ...rest } = params as Record<
        string,
        unknown
      >;
      const settings = Object.fromEntries(
        Object.entries(rest).filter(([name]) => Object.hasOwn(USER_SETTINGS, name)),
      ) as Partial<Record<UserSettingName, boolean | number | string>>;
      await updateSettings(ctx, actor, {
        full_name: full_name as string | undefined,
        email: email as string | undefined,
        old_password: old_password as string | undefined,
        new_password: new_password as string | undefined,
        settings,
      });
      return {};
    },
  }),
];
