// Custom profile fields of the organization, and the caller's values of them.
import { Type } from 'typebox';
import {
  createProfileField,
  deleteMyProfileData,
  deleteProfileField,
  listProfileFields,
  reorderProfileFields,
  updateMyProfileData,
  updateProfileField,
} from '../../actions/profile-fields.ts';
import { MAX_HINT_LENGTH, MAX_NAME_LENGTH } from '../../lib/profile-fields.ts';
import { defineRoute } from '../route.ts';

const FieldId = () => Type.Integer({ minimum: 0, maximum: 2147483647 });
const FieldIdPath = Type.Object({ field_id: FieldId() });

const fieldSettings = {
  name: Type.Optional(Type.String({ maxLength: MAX_NAME_LENGTH })),
  hint: Type.Optional(Type.String({ maxLength: MAX_HINT_LENGTH })),
  // Checked against the field type in lib/profile-fields.ts.
  field_data: Type.Optional(Type.Unknown()),
  display_in_profile_summary: Type.Optional(Type.Boolean()),
  required: Type.Optional(Type.Boolean()),
  editable_by_user: Type.Optional(Type.Boolean()),
};

export const profileFieldsRoutes = [
  defineRoute({
    method: 'GET',
    url: '/realm/profile_fields',
    summary: "The organization's custom profile fields, in display order",
    tags: ['realm'],
    auth: 'user',
    handler: async ({ ctx, actor }) => ({
      custom_fields: await listProfileFields(ctx.db, actor.realm.id),
    }),
  }),
  defineRoute({
    method: 'POST',
    url: '/realm/profile_fields',
    summary: 'Create a custom profile field (administrators)',
    tags: ['realm'],
    auth: 'user',
    params: Type.Object({
      ...fieldSettings,
      field_type: Type.Optional(Type.Integer({ minimum: -2147483648, maximum: 2147483647 })),
    }),
    handler: async ({ ctx, actor, params }) => ({
      id: await createProfileField(ctx, actor, params),
    }),
  }),
  defineRoute({
    method: 'PATCH',
    url: '/realm/profile_fields',
    summary: 'Reorder the custom profile fields (administrators)',
    tags: ['realm'],
    auth: 'user',
    params: Type.Object({ order: Type.Array(FieldId(), { maxItems: 1000 }) }),
    handler: async ({ ctx, actor, params }) => {
      await reorderProfileFields(ctx, actor, params.order);
      return {};
    },
  }),
  defineRoute({
    method: 'PATCH',
    url: '/realm/profile_fields/:field_id',
    summary: 'Change a custom profile field (administrators)',
    tags: ['realm'],
    auth: 'user',
    path: FieldIdPath,
    params: Type.Object(fieldSettings),
    handler: async ({ ctx, actor, path, params }) => {
      await updateProfileField(ctx, actor, path.field_id as number, params);
      return {};
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/realm/profile_fields/:field_id',
    summary: 'Delete a custom profile field and its values (administrators)',
    tags: ['realm'],
    auth: 'user',
    path: FieldIdPath,
    handler: async ({ ctx, actor, path }) => {
      await deleteProfileField(ctx, actor, path.field_id as number);
      return {};
    },
  }),
  defineRoute({
    method: 'PATCH',
    url: '/users/me/profile_data',
    summary: "Set the caller's custom profile field values",
    tags: ['users'],
    auth: 'user',
    params: Type.Object({
      data: Type.Array(Type.Object({ id: FieldId(), value: Type.Unknown() }), { maxItems: 1000 }),
    }),
    handler: async ({ ctx, actor, params }) => {
      await updateMyProfileData(ctx, actor, params.data);
      return {};
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/users/me/profile_data',
    summary: "Clear the caller's values of these custom profile fields",
    tags: ['users'],
    auth: 'user',
    params: Type.Object({ data: Type.Array(FieldId(), { maxItems: 1000 }) }),
    handler: async ({ ctx, actor, params }) => {
      await deleteMyProfileData(ctx, actor, params.data);
      return {};
    },
  }),
];
