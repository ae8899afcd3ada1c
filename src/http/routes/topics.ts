// Topics of a channel: list them, delete one.
import { Type } from 'typebox';
import { deleteTopic, listTopics } from '../../actions/topics.ts';
import { defineRoute } from '../route.ts';
import { StreamIdPath } from '../schemas/channels.ts';

export const topicsRoutes = [
  defineRoute({
    method: 'GET',
    url: '/users/me/:stream_id/topics',
    summary: "A channel's topics the caller may read, newest first",
    tags: ['channels'],
    auth: 'user',
    path: StreamIdPath,
    params: Type.Object({ allow_empty_topic_name: Type.Boolean({ default: false }) }),
    handler: async ({ ctx, actor, path, params }) => ({
      topics: await listTopics(ctx, actor, path.stream_id as number, params.allow_empty_topic_name),
    }),
  }),
  defineRoute({
    method: 'POST',
    url: '/streams/:stream_id/delete_topic',
    summary: 'Delete every message of a topic (administrators)',
    tags: ['channels'],
    auth: 'user',
    path: StreamIdPath,
    params: Type.Object({ topic_name: Type.String({ maxLength: 1000 }) }),
    handler: async ({ ctx, actor, path, params }) =>
      deleteTopic(ctx, actor, path.stream_id as number, params.topic_name),
  }),
];
