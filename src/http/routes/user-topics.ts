// Personal topic preferences: visibility policies, and the legacy mute endpoint.
import { Type } from 'typebox';
import { muteTopic, setTopicVisibility } from '../../actions/user-topics.ts';
import { MAX_TOPIC_LENGTH } from '../../lib/channel-settings.ts';
import { defineRoute } from '../route.ts';

const ChannelId = () => Type.Integer({ minimum: 0, maximum: 2147483647 });
const Topic = () => Type.String({ maxLength: MAX_TOPIC_LENGTH });

export const userTopicsRoutes = [
  defineRoute({
    method: 'POST',
    url: '/user_topics',
    summary: "Set the caller's visibility policy for a topic (none, muted, unmuted, followed)",
    tags: ['channels'],
    auth: 'user',
    params: Type.Object({
      stream_id: ChannelId(),
      topic: Topic(),
      visibility_policy: Type.Union([0, 1, 2, 3].map((v) => Type.Literal(v))),
    }),
    handler: async ({ ctx, actor, params }) => {
      await setTopicVisibility(ctx, actor, {
        streamId: params.stream_id,
        topic: params.topic,
        visibilityPolicy: params.visibility_policy,
      });
      return {};
    },
  }),
  defineRoute({
    method: 'PATCH',
    url: '/users/me/subscriptions/muted_topics',
    summary: 'Mute or unmute a topic (legacy; see POST /user_topics)',
    tags: ['channels'],
    auth: 'user',
    params: Type.Object({
      stream_id: Type.Optional(ChannelId()),
      stream: Type.Optional(Type.String({ maxLength: 1000 })),
      topic: Topic(),
      op: Type.Union([Type.Literal('add'), Type.Literal('remove')]),
    }),
    handler: async ({ ctx, actor, params }) => {
      await muteTopic(ctx, actor, {
        streamId: params.stream_id,
        stream: params.stream,
        topic: params.topic,
        op: params.op,
      });
      return {};
    },
  }),
];
