// Messages: send, fetch (with narrows), edit and move, delete, edit history, render.
import { Type } from 'typebox';
import { deleteMessage, getMessageHistory } from '../../actions/message-delete.ts';
import { updateMessage } from '../../actions/message-edit.ts';
import { fetchMessage, fetchMessages, renderPreview } from '../../actions/message-fetch.ts';
import { sendMessage } from '../../actions/messages.ts';
import { clientNameFromUserAgent } from '../../lib/messages.ts';
import { defineRoute } from '../route.ts';
import { ClientGravatar } from '../schemas/common.ts';

const MessageIdPath = Type.Object({
  message_id: Type.Integer({ minimum: 1, maximum: 2147483647 }),
});
const Topic = Type.String({ maxLength: 1000, 'x-aliases': ['subject'] });
const AllowEmptyTopicName = Type.Boolean({ default: false });
const Id = () => Type.Integer({ minimum: 0, maximum: 2147483647 });
const MessageIds = Type.Array(Id(), { maxItems: 5000 });

export const messagesRoutes = [
  defineRoute({
    method: 'POST',
    url: '/messages',
    summary: 'Send a channel or direct message',
    tags: ['messages'],
    auth: 'user',
    params: Type.Object({
      type: Type.Union([
        Type.Literal('direct'),
        Type.Literal('private'),
        Type.Literal('stream'),
        Type.Literal('channel'),
      ]),
      to: Type.Union([
        Id(),
        Type.Array(Type.Union([Id(), Type.String({ maxLength: 254 })]), {
          maxItems: 1000,
        }),
        Type.String({ maxLength: 10000 }),
      ]),
      content: Type.String(),
      topic: Type.Optional(Topic),
      queue_id: Type.Optional(Type.String({ maxLength: 100 })),
      local_id: Type.Optional(Type.String({ maxLength: 100 })),
      read_by_sender: Type.Optional(Type.Boolean()),
    }),
    handler: async ({ ctx, actor, params, headers }) =>
      sendMessage(ctx, actor, {
        type: params.type,
        to: params.to,
        content: params.content,
        topic: params.topic,
        queueId: params.queue_id,
        localId: params.local_id,
        readBySender: params.read_by_sender,
        client: clientNameFromUserAgent(headers['user-agent']),
      }),
  }),
  defineRoute({
    method: 'GET',
    url: '/messages',
    summary: 'Fetch messages matching a narrow, around an anchor or by id',
    tags: ['messages'],
    auth: 'user',
    params: Type.Object({
      anchor: Type.Optional(Type.Union([Type.Integer(), Type.String({ maxLength: 40 })])),
      include_anchor: Type.Boolean({ default: true }),
      num_before: Type.Optional(Type.Integer({ minimum: 0 })),
      num_after: Type.Optional(Type.Integer({ minimum: 0 })),
      narrow: Type.Array(Type.Unknown(), { maxItems: 100, default: [] }),
      client_gravatar: ClientGravatar,
      apply_markdown: Type.Boolean({ default: true }),
      use_first_unread_anchor: Type.Boolean({ default: false }),
      message_ids: Type.Optional(MessageIds),
      allow_empty_topic_name: AllowEmptyTopicName,
    }),
    handler: async ({ ctx, actor, params }) =>
      fetchMessages(ctx, actor, {
        anchor: params.anchor,
        includeAnchor: params.include_anchor,
        numBefore: params.num_before,
        numAfter: params.num_after,
        narrow: params.narrow,
        useFirstUnreadAnchor: params.use_first_unread_anchor,
        messageIds: params.message_ids,
        view: {
          applyMarkdown: params.apply_markdown,
          clientGravatar: params.client_gravatar,
          allowEmptyTopicName: params.allow_empty_topic_name,
        },
      }),
  }),
  defineRoute({
    method: 'GET',
    url: '/messages/:message_id',
    summary: 'Fetch one message',
    tags: ['messages'],
    auth: 'user',
    path: MessageIdPath,
    params: Type.Object({
      apply_markdown: Type.Boolean({ default: true }),
      allow_empty_topic_name: AllowEmptyTopicName,
    }),
    handler: async ({ ctx, actor, path, params }) =>
      fetchMessage(ctx, actor, path.message_id as number, {
        applyMarkdown: params.apply_markdown,
        // As the reference server does: this endpoint takes no client_gravatar.
        clientGravatar: true,
        allowEmptyTopicName: params.allow_empty_topic_name,
      }),
  }),
  defineRoute({
    method: 'PATCH',
    url: '/messages/:message_id',
    summary: "Edit a message's content, or move it (and others) to another topic or channel",
    tags: ['messages'],
    auth: 'user',
    path: MessageIdPath,
    params: Type.Object({
      content: Type.Optional(Type.String()),
      topic: Type.Optional(Topic),
      stream_id: Type.Optional(Id()),
      propagate_mode: Type.Union(
        [Type.Literal('change_one'), Type.Literal('change_later'), Type.Literal('change_all')],
        { default: 'change_one' },
      ),
      send_notification_to_old_thread: Type.Boolean({ default: false }),
      send_notification_to_new_thread: Type.Boolean({ default: true }),
    }),
    handler: async ({ ctx, actor, path, params }) =>
      updateMessage(ctx, actor, path.message_id as number, {
        content: params.content,
        topic: params.topic,
        streamId: params.stream_id,
        propagateMode: params.propagate_mode,
      }),
  }),
  defineRoute({
    method: 'DELETE',
    url: '/messages/:message_id',
    summary: 'Delete a message',
    tags: ['messages'],
    auth: 'user',
    path: MessageIdPath,
    handler: async ({ ctx, actor, path }) => {
      await deleteMessage(ctx, actor, path.message_id as number);
      return {};
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/messages/:message_id/history',
    summary: "A message's edit history, oldest first",
    tags: ['messages'],
    auth: 'user',
    path: MessageIdPath,
    params: Type.Object({ allow_empty_topic_name: AllowEmptyTopicName }),
    handler: async ({ ctx, actor, path, params }) => ({
      message_history: await getMessageHistory(
        ctx,
        actor,
        path.message_id as number,
        params.allow_empty_topic_name,
      ),
    }),
  }),
  defineRoute({
    method: 'POST',
    url: '/messages/render',
    summary: 'Render Markdown as a message would be rendered',
    tags: ['messages'],
    auth: 'user',
    params: Type.Object({ content: Type.String() }),
    handler: async ({ ctx, actor, params }) => ({
      rendered: await renderPreview(ctx, actor, params.content),
    }),
  }),
];
