// Organizations: creation (with their system groups), settings, and lookup by host.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { badRequest, JsonableError, mustBeOwner } from '../lib/errors.ts';
import {
  isValidRealmScalar,
  readRealmSettings,
  REALM_DESCRIPTION_MAX_LENGTH,
  REALM_NAME_MAX_LENGTH,
  REALM_SETTINGS,
  writeRealmSettings,
  type RealmSettingName,
  type RealmSettingSpec,
  type RealmSettings,
} from '../lib/realm-settings.ts';
import { isOwner, SYSTEM_GROUPS } from '../lib/roles.ts';
import { unixNow } from '../infra/clock.ts';
import * as realmsStore from '../store/realms.ts';
import * as groups from '../store/user-groups.ts';
import * as usersStore from '../store/users.ts';
import type { RealmRow } from '../store/schema.ts';
import { checkAdmin } from './permissions.ts';
import {
  presentGroupSetting,
  resolveGroupSetting,
  sameGroupSetting,
  type GroupSettingValue,
} from './group-settings.ts';
import { withTransaction, type Work } from './transaction.ts';

const SUBDOMAIN_RE = /^(|[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?)$/;

export interface CreateRealmParams {
  name: string;
  stringId: string;
  description?: string;
}

export function checkRealmName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '') throw badRequest('Organization name cannot be blank');
  if ([...trimmed].length > REALM_NAME_MAX_LENGTH) {
    throw badRequest(`Organization name is too long (limit: ${REALM_NAME_MAX_LENGTH} characters)`);
  }
  return trimmed;
}

/** Create an organization and its system groups, inside the caller's transaction. */
export async function doCreateRealm(
  ctx: AppContext,
  work: Work,
  params: CreateRealmParams,
): Promise<RealmRow> {
  const name = checkRealmName(params.name);
  const stringId = params.stringId.toLowerCase();
  if (!SUBDOMAIN_RE.test(stringId)) {
    throw badRequest(
      'Subdomains may contain only lowercase letters, digits and dashes, and may not start or end with a dash.',
    );
  }
  if (await realmsStore.getRealmByStringId(work.db, stringId)) {
    throw badRequest(
      stringId === ''
        ? 'The default organization already exists.'
        : `Subdomain '${stringId}' is already in use.`,
    );
  }
  const now = unixNow(ctx.clock);
  const realm = await realmsStore.insertRealm(work.db, {
    string_id: stringId,
    name,
    description: params.description ?? '',
    icon_source: 'G',
    icon_version: 1,
    date_created: now,
    deactivated: 0,
    settings: '{}',
  });
  const idByName = new Map<string, number>();
  for (const g of SYSTEM_GROUPS) {
    const row = await groups.insertGroup(work.db, {
      realm_id: realm.id,
      name: g.name,
      description: g.description,
      is_system_group: 1,
      date_created: now,
      creator_id: null,
    });
    idByName.set(g.name, row.id);
  }
  for (const g of SYSTEM_GROUPS) {
    if (g.within)
      await groups.addSubgroups(work.db, idByName.get(g.within)!, [idByName.get(g.name)!]);
  }
  const settings = readRealmSettings('{}');
  for (const [key, spec] of Object.entries(REALM_SETTINGS)) {
    if (spec.kind === 'group') settings[key as RealmSettingName] = idByName.get(spec.default)!;
  }
  // System groups' own permission settings: only administrators manage them.
  const systemGroupSettings = JSON.stringify({
    can_add_members_group: idByName.get('role:nobody'),
    can_join_group: idByName.get('role:nobody'),
    can_leave_group: idByName.get('role:nobody'),
    can_manage_group: idByName.get('role:nobody'),
    can_mention_group: idByName.get('role:everyone'),
    can_remove_members_group: idByName.get('role:nobody'),
  });
  await work.db
    .updateTable('user_groups')
    .set({ settings: systemGroupSettings })
    .where('realm_id', '=', realm.id)
    .execute();
  const settingsText = writeRealmSettings(settings);
  await realmsStore.updateRealm(work.db, realm.id, { settings: settingsText });
  return { ...realm, settings: settingsText };
}

export async function createRealm(ctx: AppContext, params: CreateRealmParams): Promise<RealmRow> {
  return withTransaction(ctx, null, (work) => doCreateRealm(ctx, work, params));
}

/** Realm settings as clients see them: realm_<name> keys with group settings presented. */
export async function presentRealmSettings(
  ctx: AppContext,
  realm: RealmRow,
): Promise<Record<string, unknown>> {
  const settings = readRealmSettings(realm.settings);
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(REALM_SETTINGS) as RealmSettingName[]) {
    const spec = REALM_SETTINGS[name];
    out[name] =
      spec.kind === 'group'
        ? await presentGroupSetting(ctx.db, realm.id, settings[name] as number)
        : settings[name];
  }
  return out;
}

export interface UpdateRealmParams {
  name?: string;
  description?: string;
  /** Scalars as plain values; group settings as {new, old?}. */
  settings: Partial<Record<RealmSettingName, unknown>>;
}

/** PATCH /realm: administrators; owner-only settings need an owner. One realm event per changed property. */
export async function updateRealmSettings(
  ctx: AppContext,
  actor: Actor,
  params: UpdateRealmParams,
): Promise<void> {
  checkAdmin(actor);
  for (const name of Object.keys(params.settings) as RealmSettingName[]) {
    const spec: RealmSettingSpec = REALM_SETTINGS[name];
    if (spec.ownerOnly && !isOwner(actor.user)) throw mustBeOwner();
  }
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const realm = (await realmsStore.getRealmById(work.db, actor.realm.id))!;
    const recipients = await usersStore.listActiveUserIds(work.db, realm.id);
    const now = unixNow(ctx.clock);
    const changes: Partial<RealmRow> = {};
    if (params.name !== undefined) {
      const name = checkRealmName(params.name);
      if (name !== realm.name) {
        changes.name = name;
        work.emitOnCommit(
          { type: 'realm', op: 'update', property: 'name', value: name },
          recipients,
        );
      }
    }
    if (params.description !== undefined) {
      if ([...params.description].length > REALM_DESCRIPTION_MAX_LENGTH) {
        throw badRequest(
          `Organization description is too long (limit: ${REALM_DESCRIPTION_MAX_LENGTH} characters)`,
        );
      }
      if (params.description !== realm.description) {
        changes.description = params.description;
        work.emitOnCommit(
          { type: 'realm', op: 'update', property: 'description', value: params.description },
          recipients,
        );
      }
    }
    const settings: RealmSettings = readRealmSettings(realm.settings);
    let settingsChanged = false;
    for (const [key, raw] of Object.entries(params.settings)) {
      const name = key as RealmSettingName;
      const spec = REALM_SETTINGS[name];
      if (spec.kind === 'scalar') {
        if (!isValidRealmScalar(spec, raw)) throw badRequest(`Invalid ${name}`);
        if (settings[name] === raw) continue;
        settings[name] = raw as RealmSettings[RealmSettingName];
        settingsChanged = true;
        work.emitOnCommit({ type: 'realm', op: 'update', property: name, value: raw }, recipients);
        continue;
      }
      const update = raw as { new: GroupSettingValue; old?: GroupSettingValue };
      const current = await presentGroupSetting(work.db, realm.id, settings[name] as number);
      if (update.old !== undefined && !sameGroupSetting(update.old, current)) {
        throw new JsonableError(
          "'old' value does not match the expected value.",
          'EXPECTATION_MISMATCH',
          400,
        );
      }
      if (sameGroupSetting(update.new, current)) continue;
      settings[name] = await resolveGroupSetting(
        work.db,
        realm.id,
        name,
        update.new,
        spec,
        now,
        actor.user.id,
      );
      settingsChanged = true;
      const presented = await presentGroupSetting(work.db, realm.id, settings[name] as number);
      work.emitOnCommit(
        { type: 'realm', op: 'update_dict', property: 'default', data: { [name]: presented } },
        recipients,
      );
    }
    if (settingsChanged) changes.settings = writeRealmSettings(settings);
    if (Object.keys(changes).length > 0) await realmsStore.updateRealm(work.db, realm.id, changes);
  });
}
