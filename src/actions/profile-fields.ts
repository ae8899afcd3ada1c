// Custom profile fields: administrators define them; users fill in their own values
// (administrators also those of fields users may not edit). A change to the fields sends
// the whole list to everyone as custom_profile_fields; a change to a value is a realm_user
// update to everyone who can access the user. Values of Markdown types are stored with
// their rendering.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { badRequest } from '../lib/errors.ts';
import { renderDescription } from '../lib/markdown/index.ts';
import {
  checkFieldData,
  checkFieldType,
  checkFieldValue,
  defaultExternalAccount,
  FIELD_TYPE,
  isRenderedType,
  MAX_SUMMARY_FIELDS,
  presentProfileField,
  summaryAllowed,
} from '../lib/profile-fields.ts';
import { realmUrl } from '../lib/realm-url.ts';
import { isAdmin } from '../lib/roles.ts';
import type { Q } from '../store/db.ts';
import * as fieldsStore from '../store/profile-fields.ts';
import type { CustomProfileFieldRow, RealmRow, UserRow } from '../store/schema.ts';
import * as usersStore from '../store/users.ts';
import { accessCurrentActor, accessCurrentAdmin, checkAdmin } from './permissions.ts';
import { withTransaction, type Work } from './transaction.ts';
import { usersWhoCanAccess } from './user-access.ts';

export interface FieldParams {
  name?: string;
  hint?: string;
  field_type?: number;
  field_data?: unknown;
  display_in_profile_summary?: boolean;
  required?: boolean;
  editable_by_user?: boolean;
}

/** The realm's fields as the API shows them, in display order. */
export async function listProfileFields(
  db: Q,
  realmId: number,
): Promise<Record<string, unknown>[]> {
  return (await fieldsStore.listProfileFields(db, realmId)).map(presentProfileField);
}

/** Values by user id then field id, as profile_data in user objects. */
export async function listProfileData(
  db: Q,
  realmId: number,
  userIds: number[],
): Promise<Map<number, Record<string, unknown>>> {
  const out = new Map<number, Record<string, unknown>>();
  for (const v of await fieldsStore.listProfileValues(db, realmId, userIds)) {
    let data = out.get(v.user_id);
    if (!data) out.set(v.user_id, (data = {}));
    data[String(v.field_id)] = {
      value: v.value,
      ...(v.rendered_value !== null ? { rendered_value: v.rendered_value } : {}),
    };
  }
  return out;
}

function fieldNotFound(id: number) {
  return badRequest(`Field id ${id} not found.`);
}

async function loadField(
  db: Q,
  realmId: number,
  id: number,
): Promise<{ field: CustomProfileFieldRow; all: CustomProfileFieldRow[] }> {
  const all = await fieldsStore.listProfileFields(db, realmId);
  const field = all.find((f) => f.id === id);
  if (!field) throw fieldNotFound(id);
  return { field, all };
}

/** The name and hint after trimming, checked against the realm's other fields. */
function checkLabel(name: string, others: CustomProfileFieldRow[]): string {
  const trimmed = name.trim();
  if (trimmed === '') throw badRequest('Label cannot be blank.');
  if (others.some((f) => f.name === trimmed)) {
    throw badRequest('A field with that label already exists.');
  }
  return trimmed;
}

function checkSummary(type: number, wanted: boolean, others: CustomProfileFieldRow[]): void {
  if (!wanted) return;
  if (!summaryAllowed(type)) {
    throw badRequest('Field type not supported for display in profile summary.');
  }
  if (others.filter((f) => f.display_in_profile_summary === 1).length >= MAX_SUMMARY_FIELDS) {
    throw badRequest(
      `Only ${MAX_SUMMARY_FIELDS} custom profile fields can be displayed in the profile summary.`,
    );
  }
}

export async function createProfileField(
  ctx: AppContext,
  actor: Actor,
  p: FieldParams,
): Promise<number> {
  checkAdmin(actor);
  const type = p.field_type ?? FIELD_TYPE.shortText;
  checkFieldType(type);
  const fieldData = checkFieldData(type, p.field_data ?? {});
  return withTransaction(ctx, actor.realm.id, async (work) => {
    await accessCurrentAdmin(work.db, actor);
    const all = await fieldsStore.listProfileFields(work.db, actor.realm.id);
    const preset = defaultExternalAccount(type, fieldData);
    const name = checkLabel(preset?.name ?? p.name ?? '', all);
    checkSummary(type, p.display_in_profile_summary ?? false, all);
    const id = await fieldsStore.insertProfileField(work.db, {
      realm_id: actor.realm.id,
      name,
      hint: preset?.hint ?? p.hint ?? '',
      field_type: type,
      field_data: fieldData,
      field_order: 0,
      required: p.required ? 1 : 0,
      editable_by_user: (p.editable_by_user ?? true) ? 1 : 0,
      display_in_profile_summary: p.display_in_profile_summary ? 1 : 0,
    });
    // New fields come last: the reference server orders them by id until reordered.
    await fieldsStore.updateProfileField(work.db, id, { field_order: id });
    await emitFields(work, actor.realm);
    return id;
  });
}

export async function updateProfileField(
  ctx: AppContext,
  actor: Actor,
  id: number,
  p: Omit<FieldParams, 'field_type'>,
): Promise<void> {
  checkAdmin(actor);
  await withTransaction(ctx, actor.realm.id, async (work) => {
    await accessCurrentAdmin(work.db, actor);
    const { field, all } = await loadField(work.db, actor.realm.id, id);
    const others = all.filter((f) => f.id !== id);
    const preset = defaultExternalAccount(field.field_type, field.field_data);
    if (preset && (p.name !== undefined || p.hint !== undefined)) {
      throw badRequest('Default custom field cannot be updated.');
    }
    const changes: Partial<CustomProfileFieldRow> = {};
    if (p.name !== undefined) changes.name = checkLabel(p.name, others);
    if (p.hint !== undefined) changes.hint = p.hint;
    if (p.field_data !== undefined) {
      changes.field_data = checkFieldData(field.field_type, p.field_data);
    }
    if (p.display_in_profile_summary !== undefined) {
      checkSummary(field.field_type, p.display_in_profile_summary, others);
      changes.display_in_profile_summary = p.display_in_profile_summary ? 1 : 0;
    }
    if (p.required !== undefined) changes.required = p.required ? 1 : 0;
    if (p.editable_by_user !== undefined) changes.editable_by_user = p.editable_by_user ? 1 : 0;
    await fieldsStore.updateProfileField(work.db, id, changes);
    await emitFields(work, actor.realm);
  });
}

export async function deleteProfileField(ctx: AppContext, actor: Actor, id: number): Promise<void> {
  checkAdmin(actor);
  await withTransaction(ctx, actor.realm.id, async (work) => {
    await accessCurrentAdmin(work.db, actor);
    await loadField(work.db, actor.realm.id, id);
    await fieldsStore.deleteProfileField(work.db, id);
    await emitFields(work, actor.realm);
  });
}

/** PATCH /realm/profile_fields: order lists every field id once; positions become orders. */
export async function reorderProfileFields(
  ctx: AppContext,
  actor: Actor,
  order: number[],
): Promise<void> {
  checkAdmin(actor);
  await withTransaction(ctx, actor.realm.id, async (work) => {
    await accessCurrentAdmin(work.db, actor);
    const all = await fieldsStore.listProfileFields(work.db, actor.realm.id);
    const ids = new Set(all.map((f) => f.id));
    if (order.length !== ids.size || new Set(order).size !== order.length) {
      throw badRequest('Invalid order mapping.');
    }
    if (order.some((id) => !ids.has(id))) throw badRequest('Invalid order mapping.');
    for (const [i, id] of order.entries()) {
      await fieldsStore.updateProfileField(work.db, id, { field_order: i });
    }
    await emitFields(work, actor.realm);
  });
}

async function emitFields(work: Work, realm: RealmRow): Promise<void> {
  const fields = await listProfileFields(work.db, realm.id);
  const everyone = await usersStore.listActiveUserIds(work.db, realm.id);
  work.emitOnCommit({ type: 'custom_profile_fields', fields }, everyone);
}

/** Fields the actor may change the value of: editable ones, or any for administrators. */
function checkEditable(actor: Actor, field: CustomProfileFieldRow): void {
  if (field.editable_by_user === 0 && !isAdmin(actor.user)) {
    throw badRequest(
      'You are not allowed to change this field. Contact an administrator to update it.',
    );
  }
}

function checkHuman(actor: Actor): void {
  if (actor.user.is_bot) throw badRequest('This endpoint does not accept bot requests.');
}

/** PATCH /users/me/profile_data: set values; an empty value clears it. */
export async function updateMyProfileData(
  ctx: AppContext,
  actor: Actor,
  data: Array<{ id: number; value: unknown }>,
): Promise<void> {
  checkHuman(actor);
  await withTransaction(ctx, actor.realm.id, async (work) => {
    // Inside: whether the actor may change a field only administrators edit is their role now.
    const me = await accessCurrentActor(work.db, actor);
    await doUpdateProfileData(ctx, work, me, me.user, data);
  });
}

/**
 * Set the subject's values (the actor's own, or anyone's by an administrator through
 * PATCH /users/{id}); an empty value clears one. Every item is checked before any is stored.
 */
export async function doUpdateProfileData(
  ctx: AppContext,
  work: Work,
  actor: Actor,
  subject: UserRow,
  data: Array<{ id: number; value: unknown }>,
): Promise<void> {
  const db = work.db;
  const fields = new Map(
    (await fieldsStore.listProfileFields(db, actor.realm.id)).map((f) => [f.id, f]),
  );
  const realmUsers = new Set(await usersStore.listActiveUserIds(db, actor.realm.id));
  const checked: Array<{ field: CustomProfileFieldRow; value: string | null }> = [];
  for (const item of data) {
    const field = fields.get(item.id);
    if (!field) throw fieldNotFound(item.id);
    checkEditable(actor, field);
    checked.push({
      field,
      value: checkFieldValue(field, item.value, (id) => realmUsers.has(id)),
    });
  }
  const url = realmUrl(ctx.config.externalUrl, actor.realm.string_id);
  const viewers = await usersWhoCanAccess(db, actor.realm, subject.id);
  for (const { field, value } of checked) {
    const before = await fieldsStore.getProfileValue(db, subject.id, field.id);
    if (value === null) {
      if (!before) continue;
      await fieldsStore.deleteProfileValue(db, subject.id, field.id);
      emitValue(work, subject.id, field.id, { value: null }, viewers);
      continue;
    }
    if (before?.value === value) continue;
    const rendered = isRenderedType(field.field_type)
      ? renderDescription(value, { realmUrl: url })
      : null;
    await fieldsStore.setProfileValue(db, {
      user_id: subject.id,
      field_id: field.id,
      value,
      rendered_value: rendered,
    });
    emitValue(
      work,
      subject.id,
      field.id,
      { value, ...(rendered !== null ? { rendered_value: rendered } : {}) },
      viewers,
    );
  }
}

/** DELETE /users/me/profile_data: clear the values of these fields. */
export async function deleteMyProfileData(
  ctx: AppContext,
  actor: Actor,
  fieldIds: number[],
): Promise<void> {
  checkHuman(actor);
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const me = await accessCurrentActor(work.db, actor);
    const fields = new Map(
      (await fieldsStore.listProfileFields(work.db, actor.realm.id)).map((f) => [f.id, f]),
    );
    for (const id of fieldIds) {
      const field = fields.get(id);
      if (!field) throw fieldNotFound(id);
      checkEditable(me, field);
    }
    const viewers = await usersWhoCanAccess(work.db, me.realm, actor.user.id);
    for (const id of new Set(fieldIds)) {
      if (!(await fieldsStore.getProfileValue(work.db, actor.user.id, id))) continue;
      await fieldsStore.deleteProfileValue(work.db, actor.user.id, id);
      emitValue(work, actor.user.id, id, { value: null }, viewers);
    }
  });
}

function emitValue(
  work: Work,
  userId: number,
  fieldId: number,
  value: { value: string | null; rendered_value?: string },
  viewers: number[],
): void {
  work.emitOnCommit(
    {
      type: 'realm_user',
      op: 'update',
      person: { user_id: userId, custom_profile_field: { id: fieldId, ...value } },
    },
    viewers,
  );
}
