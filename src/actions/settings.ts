// PATCH /settings: the user's own name, email, password and personal settings.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { badRequest, JsonableError } from '../lib/errors.ts';
import {
  isValidSetting,
  LANGUAGES,
  readUserSettings,
  USER_SETTINGS,
  writeUserSettings,
  type SettingValue,
  type UserSettingName,
} from '../lib/user-settings.ts';
import { checkEmail, checkPassword, checkTimezone } from '../lib/validation.ts';
import { canSeeDeliveryEmail } from '../lib/presenters/users.ts';
import type { LegacySettingsEvent, UserSettingsEvent } from '../events/types.ts';
import * as usersStore from '../store/users.ts';
import { usersWhoCanAccess } from './user-access.ts';
import { doAnnounceDeliveryEmailVisibility, doChangeFullName, doRefreshApiEmail } from './users.ts';
import { withTransaction } from './transaction.ts';

export interface UpdateSettingsParams {
  full_name?: string;
  email?: string;
  old_password?: string;
  new_password?: string;
  settings: Partial<Record<UserSettingName, SettingValue>>;
}

export async function updateSettings(
  ctx: AppContext,
  actor: Actor,
  params: UpdateSettingsParams,
): Promise<void> {
  if (params.new_password !== undefined) {
    if (params.old_password === undefined) {
      throw new JsonableError("Missing 'old_password' argument", 'REQUEST_VARIABLE_MISSING', 400, {
        var_name: 'old_password',
      });
    }
    checkPassword(params.new_password);
    const hash = actor.user.password_hash;
    if (!hash || !(await ctx.passwords.verify(hash, params.old_password)))
      throw badRequest('Wrong password!');
  }
  const newHash =
    params.new_password !== undefined ? await ctx.passwords.hash(params.new_password) : undefined;
  for (const [name, value] of Object.entries(params.settings)) {
    const spec = USER_SETTINGS[name as UserSettingName];
    if (!isValidSetting(spec, value)) throw badRequest(`Invalid ${name}`);
    if (name === 'timezone') checkTimezone(value as string);
  }
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const realm = actor.realm;
    let user = (await usersStore.getUserById(work.db, realm.id, actor.user.id))!;
    if (params.full_name !== undefined) await doChangeFullName(work, realm, user, params.full_name);
    if (params.email !== undefined) {
      const email = checkEmail(params.email);
      if (email !== user.delivery_email) {
        const taken = await usersStore.getUserByEmail(work.db, realm.id, email);
        if (taken && taken.id !== user.id) throw badRequest(`Email '${email}' already in use`);
        await usersStore.updateUser(work.db, user.id, { delivery_email: email });
        const after = { ...user, delivery_email: email };
        const viewers = await usersStore.listUsersByIds(
          work.db,
          realm.id,
          await usersWhoCanAccess(work.db, realm, user.id),
        );
        const seeing = viewers.filter((v) => canSeeDeliveryEmail(v, after)).map((v) => v.id);
        work.emitOnCommit(
          { type: 'realm_user', op: 'update', person: { user_id: user.id, delivery_email: email } },
          seeing,
        );
        user = after;
        await doRefreshApiEmail(ctx, work, realm, user);
        user = (await usersStore.getUserById(work.db, realm.id, user.id))!;
      }
    }
    if (newHash !== undefined)
      await usersStore.updateUser(work.db, user.id, { password_hash: newHash });

    const current = readUserSettings(user.settings);
    const changed = (
      Object.entries(params.settings) as Array<[UserSettingName, SettingValue]>
    ).filter(([n, v]) => current[n] !== v);
    if (changed.length === 0) return;
    const next = { ...current, ...Object.fromEntries(changed) };
    const before = user;
    user = { ...user, settings: writeUserSettings(next) };
    await usersStore.updateUser(work.db, user.id, { settings: user.settings });
    for (const [name, value] of changed) {
      const languageName =
        name === 'default_language' ? { language_name: LANGUAGES[value as string] } : {};
      const event: UserSettingsEvent = {
        type: 'user_settings',
        op: 'update',
        property: name,
        value,
        ...languageName,
      };
      work.emitOnCommit(event, [user.id]);
      const legacy = USER_SETTINGS[name].legacy;
      if (legacy) {
        const legacyEvent: LegacySettingsEvent =
          legacy === 'display'
            ? {
                type: 'update_display_settings',
                user: user.email,
                setting_name: name,
                setting: value,
                ...languageName,
              }
            : {
                type: 'update_global_notifications',
                user: user.email,
                notification_name: name,
                setting: value,
              };
        work.emitOnCommit(legacyEvent, [user.id]);
      }
      if (name === 'timezone') {
        work.emitOnCommit(
          {
            type: 'realm_user',
            op: 'update',
            person: { user_id: user.id, email: user.email, timezone: value },
          },
          await usersWhoCanAccess(work.db, realm, user.id),
        );
      }
      if (name === 'email_address_visibility') {
        await doAnnounceDeliveryEmailVisibility(work, realm, before, user);
        await doRefreshApiEmail(ctx, work, realm, user);
      }
    }
  });
}
