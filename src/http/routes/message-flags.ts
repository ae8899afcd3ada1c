// Personal message flags: by message ids, over a narrow, and the bulk mark-as-read forms.
import { Type } from 'typebox';
import {
  markAllAsRead,
  markChannelAsRead,
  updateMessageFlags,
  updateMessageFlagsForNarrow,
} from '../../actions/message-flags.ts';
import { defineRoute } from '../route.ts';

const Id = () => Type.Integer({ minimum: 0, maximum: 2147483647 });
// Unknown flags and operations get the reference server's own messages from the action.
const Op = () => Type.String({ maxLength: 100 });
const Flag = () => Type.String({ maxLength: 100 });

export const messageFlagsRoutes = [
  defineRoute({
    method: 'POST',
    url: '/messages/flags',
    summary: 'Add or remove a personal flag on messages',
    tags: ['messages'],
    auth: 'user',
    params: Type.Object({
      messages: Type.Array(Id(), { maxItems: 5000 }),
      op: Op(),
      flag: Flag(),
    }),
    handler: async ({ ctx, actor, params }) =>
      updateMessageFlags(ctx, actor, {
        messages: params.messages,
        op: params.op,
        flag: params.flag,
      }),
  }),
  defineRoute({
    method: 'POST',
    url: '/messages/flags/narrow',
    summary: 'Add or remove a personal flag on a range of messages in a narrow',
    tags: ['messages'],
    auth: 'user',
    params: Type.Object({
      anchor: Type.Union([Type.Integer(), Type.String({ maxLength: 40 })]),
      include_anchor: Type.Boolean({ default: true }),
      num_before: Type.Integer({ minimum: 0 }),
      num_after: Type.Integer({ minimum: 0 }),
      narrow: Type.Array(Type.Unknown(), { maxItems: 100 }),
      op: Op(),
      flag: Flag(),
    }),
    handler: async ({ ctx, actor, params }) =>
      updateMessageFlagsForNarrow(ctx, actor, {
        anchor: params.anchor,
        includeAnchor: params.include_anchor,
        numBefore: params.num_before,
        numAfter: params.num_after,
        narrow: params.narrow,
        op: params.op,
        flag: params.flag,
      }),
  }),
  defineRoute({
    method: 'POST',
    url: '/mark_all_as_read',
    summary: "Mark all of the user's messages as read (deprecated)",
    tags: ['messages'],
    auth: 'user',
    handler: async ({ ctx, actor }) => markAllAsRead(ctx, actor),
  }),
  defineRoute({
    method: 'POST',
    url: '/mark_stream_as_read',
    summary: "Mark a channel's messages as read (deprecated)",
    tags: ['messages'],
    auth: 'user',
    params: Type.Object({ stream_id: Id() }),
    handler: async ({ ctx, actor, params }) => {
      await markChannelAsRead(ctx, actor, params.stream_id);
      return {};
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/mark_topic_as_read',
    summary: "Mark a topic's messages as read (deprecated)",
    tags: ['messages'],
    auth: 'user',
    params: Type.Object({ stream_id: Id(), topic_name: Type.String({ maxLength: 1000 }) }),
    handler: async ({ ctx, actor, params }) => {
      await markChannelAsRead(ctx, actor, params.stream_id, params.topic_name);
      return {};
    },
  }),
];
