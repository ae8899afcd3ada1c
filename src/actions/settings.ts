// PATCH /settings: the user's own name, email, password and personal settings.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { badRequest } from '../lib/errors.ts';
import {
  EMAIL_ADDRESS_VISIBILITY,
  isValidSetting,
  LANGUAGES,
  readUserSettings,
  USER_SETTINGS,
  writeUserSettings,
  type SettingSpec,
  type SettingValue,
  type UserSettingName,
} from '../lib/user-settings.ts';
import { isKnownTimezone, isStrongPassword, isValidEmail } from '../lib/validation.ts';
import { canSeeDeliveryEmail } from '../lib/presenters/users.ts';
import type { LegacySettingsEvent, UserSettingsEvent } from '../events/types.ts';
import type { RealmRow, UserRow } from '../store/schema.ts';
import * as usersStore from '../store/users.ts';
import { usersWhoCanAccess } from './user-access.ts';
import {
  doAnnounceAvatar,
  doAnnounceDeliveryEmailVisibility,
  doChangeFullName,
  doRefreshApiEmail,
} from './users.ts';
import { doStopSynchronizingDrafts } from './drafts.ts';
import { accessCurrentActor } from './permissions.ts';
import { withTransaction, type Work } from './transaction.ts';

export interface UpdateSettingsParams {
  full_name?: string;
  email?: string;
  old_password?: string;
  new_password?: string;
  settings: Partial<Record<UserSettingName, SettingValue>>;
}

function checkSettingValue(name: UserSettingName, value: SettingValue): void {
  const spec: SettingSpec = USER_SETTINGS[name];
  const valid =
    isValidSetting(spec, value) && (name !== 'timezone' || isKnownTimezone(value as string));
  if (!valid) throw badRequest(spec.invalidMessage?.(value) ?? `Invalid ${name}`);
}

export async function updateSettings(
  ctx: AppContext,
  actor: Actor,
  params: UpdateSettingsParams,
): Promise<void> {
  if (actor.user.is_bot) throw badRequest('This endpoint does not accept bot requests.');
  for (const [name, value] of Object.entries(params.settings)) {
    checkSettingValue(name as UserSettingName, value);
  }
  let newHash: string | undefined;
  if (params.new_password !== undefined) {
    const hash = actor.user.password_hash;
    const verified =
      params.old_password !== undefined &&
      hash !== null &&
      (await ctx.passwords.verify(hash, params.old_password));
    if (!verified) throw badRequest('Wrong password!');
    if (!isStrongPassword(params.new_password)) throw badRequest('New password is too weak!');
    newHash = await ctx.passwords.hash(params.new_password);
  }
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const { realm, user: me } = await accessCurrentActor(work.db, actor);
    const load = async (): Promise<UserRow> =>
      (await usersStore.getUserById(work.db, realm.id, actor.user.id))!;
    if (newHash !== undefined) {
      // The old password was verified outside (hashing is slow): against the hash still held.
      // Another change may have replaced it since, and the old password is then wrong.
      if (me.password_hash !== actor.user.password_hash) throw badRequest('Wrong password!');
      await usersStore.updateUser(work.db, actor.user.id, { password_hash: newHash });
    }
    if (params.email !== undefined)
      await doChangeDeliveryEmail(ctx, work, realm, await load(), params.email);
    if (params.full_name !== undefined) {
      const user = await load();
      if (params.full_name !== user.full_name)
        await doChangeFullName(work, realm, user, params.full_name);
    }
    await doChangeUserSettings(ctx, work, realm, await load(), params.settings);
  });
}

/** A new real address, applied at once (Parley sends no confirmation mail). */
async function doChangeDeliveryEmail(
  ctx: AppContext,
  work: Work,
  realm: RealmRow,
  user: UserRow,
  raw: string,
): Promise<void> {
  const email = raw.trim().toLowerCase();
  if (email === user.delivery_email) return;
  if (!isValidEmail(email)) throw badRequest('Invalid address.');
  const taken = await usersStore.getUserByEmail(work.db, realm.id, email);
  if (taken && taken.id !== user.id) {
    throw badRequest(taken.is_active ? 'Already has an account.' : 'Account has been deactivated.');
  }
  await usersStore.updateUser(work.db, user.id, { delivery_email: email });
  const after: UserRow = { ...user, delivery_email: email };
  const viewers = await usersStore.listUsersByIds(
    work.db,
    realm.id,
    await usersWhoCanAccess(work.db, realm, user.id),
  );
  work.emitOnCommit(
    { type: 'realm_user', op: 'update', person: { user_id: user.id, delivery_email: email } },
    viewers.filter((v) => canSeeDeliveryEmail(v, after)).map((v) => v.id),
  );
  await doAnnounceAvatar(work, realm, after);
  await doRefreshApiEmail(ctx, work, realm, after);
}

/** Store the settings that change and announce each, in the modern and the legacy form. */
async function doChangeUserSettings(
  ctx: AppContext,
  work: Work,
  realm: RealmRow,
  user: UserRow,
  settings: Partial<Record<UserSettingName, SettingValue>>,
): Promise<void> {
  const current = readUserSettings(user.settings);
  const changed = (Object.entries(settings) as Array<[UserSettingName, SettingValue]>).filter(
    ([n, v]) => current[n] !== v,
  );
  if (changed.length === 0) return;
  const before = user;
  const after: UserRow = {
    ...user,
    settings: writeUserSettings({ ...current, ...Object.fromEntries(changed) }),
  };
  await usersStore.updateUser(work.db, user.id, { settings: after.settings });
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
    if (name === 'enable_drafts_synchronization' && value === false)
      await doStopSynchronizingDrafts(work, user);
    if (name === 'email_address_visibility') {
      const changed = await doAnnounceDeliveryEmailVisibility(work, realm, before, after);
      const everyone = EMAIL_ADDRESS_VISIBILITY.everyone;
      const old = readUserSettings(before.settings).email_address_visibility;
      // The API email is the real one only under "everyone", so only that boundary moves it.
      if (old === everyone || value === everyone) {
        await doRefreshApiEmail(ctx, work, realm, after);
        await doAnnounceAvatar(work, realm, after);
      } else if (after.avatar_source === 'G' && changed.length > 0) {
        // A Gravatar follows the real address: client_gravatar clients compute it when they
        // can see the address and need the URL when they no longer can.
        await doAnnounceAvatar(work, realm, after, changed);
      }
    }
  }
}
