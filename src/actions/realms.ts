// Organizations: creation (with their system groups), settings, and lookup by host.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { badRequest, mustBeOwner } from '../lib/errors.ts';
import { badValue } from '../lib/params.ts';
import {
  isValidRealmScalar,
  readRealmSettings,
  REALM_DESCRIPTION_MAX_LENGTH,
  REALM_NAME_MAX_LENGTH,
  REALM_SETTINGS,
  writeRealmSettings,
  type RealmScalarSpec,
  type RealmSettingName,
  type RealmSettingSpec,
  type RealmSettings,
} from '../lib/realm-settings.ts';
import type { RealmEvent } from '../events/types.ts';
import { isOwner, SYSTEM_GROUPS } from '../lib/roles.ts';
import { unixNow } from '../infra/clock.ts';
import * as realmsStore from '../store/realms.ts';
import * as groups from '../store/user-groups.ts';
import * as usersStore from '../store/users.ts';
import type { RealmRow } from '../store/schema.ts';
import { accessCurrentAdmin, checkAdmin } from './permissions.ts';
import { accessChannelById } from './channel-access.ts';
import {
  checkGroupSettingChange,
  presentGroupSetting,
  presentGroupSettings,
  resolveGroupSetting,
  type GroupSettingChange,
} from './group-settings.ts';
import { readingIn, withTransaction, type Work } from './transaction.ts';

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
  const settings = { ...readRealmSettings('{}') };
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
  const names = Object.keys(REALM_SETTINGS) as RealmSettingName[];
  const groupNames = names.filter((name) => REALM_SETTINGS[name].kind === 'group');
  const presentedGroups = await presentGroupSettings(
    ctx.db,
    realm.id,
    groupNames.map((name) => settings[name] as number),
  );
  const out: Record<string, unknown> = {};
  for (const name of names) {
    out[name] =
      REALM_SETTINGS[name].kind === 'group'
        ? presentedGroups.get(settings[name] as number)
        : settings[name];
  }
  return out;
}

export interface UpdateRealmParams {
  name?: string;
  description?: string;
  /** Scalars as sent (a time limit may be "unlimited"); group settings as {new, old?}. */
  settings: Partial<Record<RealmSettingName, unknown>>;
}

/** A scalar setting's value as sent, turned into the value to store, or the error for it. */
function checkRealmScalar(name: RealmSettingName, spec: RealmScalarSpec, raw: unknown): unknown {
  if (typeof raw === 'string' && spec.special && Object.hasOwn(spec.special, raw)) {
    return spec.special[raw];
  }
  const value = spec.type === 'string' && typeof raw === 'string' ? raw.trim() : raw;
  if (value !== null && isValidRealmScalar(spec, value)) return value;
  if (spec.converted) throw badValue(name, raw);
  throw badRequest(spec.invalidMessage?.(raw) ?? `Invalid ${name}`);
}

function realmSettingEvent(name: RealmSettingName, value: unknown): RealmEvent {
  const spec: RealmSettingSpec = REALM_SETTINGS[name];
  return spec.kind === 'scalar' && spec.updateDict
    ? { type: 'realm', op: 'update_dict', property: 'default', data: { [name]: value } }
    : { type: 'realm', op: 'update', property: name, value };
}

/** How PATCH /realm reports a changed value: text as "updated", anything else as itself. */
const reported = (value: unknown): unknown => (typeof value === 'string' ? 'updated' : value);

/**
 * PATCH /realm: administrators; owner-only settings need an owner. Every value is checked
 * before anything changes; one realm event per changed setting. Returns the changed
 * settings, as the reference server does.
 */
export async function updateRealmSettings(
  ctx: AppContext,
  actor: Actor,
  params: UpdateRealmParams,
): Promise<Record<string, unknown>> {
  checkAdmin(actor);
  const names = Object.keys(params.settings) as RealmSettingName[];
  const ownerOnly = names.some((n) => (REALM_SETTINGS[n] as RealmSettingSpec).ownerOnly);
  if (ownerOnly && !isOwner(actor.user)) throw mustBeOwner();
  const name = params.name !== undefined ? checkRealmName(params.name) : undefined;
  if (
    params.description !== undefined &&
    [...params.description].length > REALM_DESCRIPTION_MAX_LENGTH
  ) {
    throw badRequest(`description is too long (limit: ${REALM_DESCRIPTION_MAX_LENGTH} characters)`);
  }
  const scalars = new Map<RealmSettingName, unknown>();
  for (const key of names) {
    const spec: RealmSettingSpec = REALM_SETTINGS[key];
    if (spec.kind !== 'scalar') continue;
    scalars.set(key, checkRealmScalar(key, spec, params.settings[key]));
  }

  return withTransaction(ctx, actor.realm.id, async (work) => {
    // Inside: the actor's role now decides, and a channel archived since must not become the
    // announcement channel.
    const me = await accessCurrentAdmin(work.db, actor);
    if (ownerOnly && !isOwner(me.user)) throw mustBeOwner();
    const realm = me.realm;
    for (const [key, value] of scalars) {
      const spec: RealmSettingSpec = REALM_SETTINGS[key];
      if (spec.kind === 'scalar' && spec.channel && value !== -1)
        await accessChannelById(readingIn(ctx, work), me, value as number);
    }
    const recipients = await usersStore.listActiveUserIds(work.db, realm.id);
    const now = unixNow(ctx.clock);
    const changes: Partial<RealmRow> = {};
    const data: Record<string, unknown> = {};
    if (name !== undefined && name !== realm.name) {
      changes.name = name;
      data.name = reported(name);
      work.emitOnCommit({ type: 'realm', op: 'update', property: 'name', value: name }, recipients);
    }
    if (params.description !== undefined && params.description !== realm.description) {
      changes.description = params.description;
      data.description = reported(params.description);
      work.emitOnCommit(
        { type: 'realm', op: 'update', property: 'description', value: params.description },
        recipients,
      );
    }
    const settings: RealmSettings = { ...readRealmSettings(realm.settings) };
    let settingsChanged = false;
    for (const key of names) {
      const spec: RealmSettingSpec = REALM_SETTINGS[key];
      if (spec.kind === 'scalar') {
        const value = scalars.get(key) as RealmSettings[RealmSettingName];
        if (settings[key] === value) continue;
        settings[key] = value;
        settingsChanged = true;
        data[key] = reported(value);
        work.emitOnCommit(realmSettingEvent(key, value), recipients);
        continue;
      }
      const change = params.settings[key] as GroupSettingChange;
      const wanted = await checkGroupSettingChange(
        work.db,
        realm.id,
        settings[key] as number,
        change,
      );
      if (wanted === null) continue;
      settings[key] = await resolveGroupSetting(
        work.db,
        realm.id,
        key,
        wanted,
        spec,
        now,
        me.user.id,
      );
      settingsChanged = true;
      const presented = await presentGroupSetting(work.db, realm.id, settings[key] as number);
      data[key] = presented;
      work.emitOnCommit(
        { type: 'realm', op: 'update_dict', property: 'default', data: { [key]: presented } },
        recipients,
      );
    }
    if (settingsChanged) changes.settings = writeRealmSettings(settings);
    if (Object.keys(changes).length > 0) await realmsStore.updateRealm(work.db, realm.id, changes);
    return data;
  });
}
