// Typing notifications: composing a message, or editing one.
import { Type } from 'typebox';
import { doSendMessageEditTyping, doSendTyping } from '../../actions/typing.ts';
import { defineRoute } from '../route.ts';

const Op = () => Type.Union([Type.Literal('start'), Type.Literal('stop')]);
const Id = () => Type.Integer({ minimum: 1, maximum: 2147483647 });

export const typingRoutes = [
  defineRoute({
    method: 'POST',
    url: '/typing',
    summary: 'Set "typing" status',
    tags: ['users'],
    auth: 'user',
    params: Type.Object({
      op: Op(),
      type: Type.Optional(
        Type.Union([Type.Literal('direct'), Type.Literal('stream'), Type.Literal('channel')], {
          default: 'direct',
        }),
      ),
      to: Type.Optional(Type.Array(Type.Integer(), { maxItems: 1000 })),
      stream_id: Type.Optional(Type.Integer()),
      topic: Type.Optional(Type.String({ maxLength: 1000 })),
    }),
    handler: async ({ ctx, actor, params }) => {
      await doSendTyping(ctx, actor, {
        op: params.op,
        type: params.type,
        to: params.to,
        streamId: params.stream_id,
        topic: params.topic,
      });
      return {};
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/messages/:message_id/typing',
    summary: 'Set "typing" status for message editing',
    tags: ['users'],
    auth: 'user',
    path: Type.Object({ message_id: Id() }),
    params: Type.Object({ op: Op() }),
    handler: async ({ ctx, actor, path, params }) => {
      await doSendMessageEditTyping(ctx, actor, path.message_id as number, params.op);
      return {};
    },
  }),
];
