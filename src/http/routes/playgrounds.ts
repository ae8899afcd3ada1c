// Code playgrounds of the organization (listed by /register).
import { Type } from 'typebox';
import { addPlayground, removePlayground } from '../../actions/playgrounds.ts';
import { defineRoute } from '../route.ts';

export const playgroundsRoutes = [
  defineRoute({
    method: 'POST',
    url: '/realm/playgrounds',
    summary: 'Add a code playground (administrators)',
    tags: ['realm'],
    auth: 'user',
    params: Type.Object({
      name: Type.String({ minLength: 1, maxLength: 60 }),
      pygments_language: Type.String({ minLength: 1, maxLength: 40 }),
      url_template: Type.String({ minLength: 1, maxLength: 2000 }),
    }),
    handler: async ({ ctx, actor, params }) => ({ id: await addPlayground(ctx, actor, params) }),
  }),
  defineRoute({
    method: 'DELETE',
    url: '/realm/playgrounds/:playground_id',
    summary: 'Remove a code playground (administrators)',
    tags: ['realm'],
    auth: 'user',
    path: Type.Object({ playground_id: Type.Integer({ minimum: 0, maximum: 2147483647 }) }),
    handler: async ({ ctx, actor, path }) => {
      await removePlayground(ctx, actor, path.playground_id as number);
      return {};
    },
  }),
];
