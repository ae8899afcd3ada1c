// Emoji reactions to messages.
import { Type } from 'typebox';
import { addReaction, removeReaction } from '../../actions/reactions.ts';
import { defineRoute } from '../route.ts';

const MessageIdPath = Type.Object({
  message_id: Type.Integer({ minimum: 1, maximum: 2147483647 }),
});
// Unknown names and codes are refused by the action, with the reference server's messages.
const EmojiText = () => Type.String({ maxLength: 1000 });

export const reactionsRoutes = [
  defineRoute({
    method: 'POST',
    url: '/messages/:message_id/reactions',
    summary: 'Add an emoji reaction to a message',
    tags: ['messages'],
    auth: 'user',
    path: MessageIdPath,
    params: Type.Object({
      emoji_name: EmojiText(),
      emoji_code: Type.Optional(EmojiText()),
      reaction_type: Type.Optional(EmojiText()),
    }),
    handler: async ({ ctx, actor, path, params }) => {
      await addReaction(ctx, actor, path.message_id as number, {
        emojiName: params.emoji_name,
        emojiCode: params.emoji_code,
        reactionType: params.reaction_type,
      });
      return {};
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/messages/:message_id/reactions',
    summary: "Remove one's emoji reaction from a message",
    tags: ['messages'],
    auth: 'user',
    path: MessageIdPath,
    params: Type.Object({
      emoji_name: Type.Optional(EmojiText()),
      emoji_code: Type.Optional(EmojiText()),
      reaction_type: Type.Optional(EmojiText()),
    }),
    handler: async ({ ctx, actor, path, params }) => {
      await removeReaction(ctx, actor, path.message_id as number, {
        emojiName: params.emoji_name,
        emojiCode: params.emoji_code,
        reactionType: params.reaction_type,
      });
      return {};
    },
  }),
];
