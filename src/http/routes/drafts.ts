// The caller's drafts.
import { Type } from 'typebox';
import { createDrafts, deleteDraft, editDraft, listDrafts } from '../../actions/drafts.ts';
import { defineRoute } from '../route.ts';

const DraftIdPath = Type.Object({ draft_id: Type.Integer({ minimum: 0, maximum: 2147483647 }) });

/** A draft as clients send it: never with an id (the server assigns it). */
const Draft = () =>
  Type.Object(
    {
      type: Type.Union([Type.Literal(''), Type.Literal('stream'), Type.Literal('private')]),
      to: Type.Array(Type.Integer({ minimum: 0, maximum: 2147483647 }), { maxItems: 1000 }),
      topic: Type.String({ maxLength: 1000 }),
      content: Type.String({ minLength: 1, maxLength: 100000 }),
      timestamp: Type.Optional(Type.Number()),
    },
    { additionalProperties: false },
  );

export const draftsRoutes = [
  defineRoute({
    method: 'GET',
    url: '/drafts',
    summary: "The caller's drafts, oldest edit first",
    tags: ['drafts'],
    auth: 'user',
    handler: async ({ ctx, actor }) => ({ ...(await listDrafts(ctx, actor)) }),
  }),
  defineRoute({
    method: 'POST',
    url: '/drafts',
    summary: 'Create drafts; answers their ids in the order given',
    tags: ['drafts'],
    auth: 'user',
    params: Type.Object({ drafts: Type.Array(Draft(), { maxItems: 1000 }) }),
    handler: async ({ ctx, actor, params }) => ({
      ids: await createDrafts(ctx, actor, params.drafts),
    }),
  }),
  defineRoute({
    method: 'PATCH',
    url: '/drafts/:draft_id',
    summary: 'Replace a draft',
    tags: ['drafts'],
    auth: 'user',
    path: DraftIdPath,
    params: Type.Object({ draft: Draft() }),
    handler: async ({ ctx, actor, path, params }) => {
      await editDraft(ctx, actor, path.draft_id as number, params.draft);
      return {};
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/drafts/:draft_id',
    summary: 'Delete a draft',
    tags: ['drafts'],
    auth: 'user',
    path: DraftIdPath,
    handler: async ({ ctx, actor, path }) => {
      await deleteDraft(ctx, actor, path.draft_id as number);
      return {};
    },
  }),
];
