// Custom emoji: list, upload, deactivate, and the image files themselves, served outside
// /api/v1 (where source_url points) without authentication, as the reference server's
// local storage serves them.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import {
  deactivateRealmEmoji,
  listRealmEmoji,
  MAX_EMOJI_UPLOAD_BYTES,
  readEmojiImage,
  uploadRealmEmoji,
} from '../../actions/custom-emoji.ts';
import type { AppContext } from '../../context.ts';
import { JsonableError } from '../../lib/errors.ts';
import { defineRoute } from '../route.ts';
import { sendError, type RouteTable } from '../errors.ts';

const EmojiNamePath = Type.Object({ emoji_name: Type.String() });

export const customEmojiRoutes = [
  defineRoute({
    method: 'GET',
    url: '/realm/emoji',
    summary: "The organization's custom emoji, deactivated ones included",
    tags: ['server_and_organizations'],
    auth: 'user',
    handler: async ({ ctx, actor }) => ({ emoji: await listRealmEmoji(ctx, actor) }),
  }),
  defineRoute({
    method: 'POST',
    url: '/realm/emoji/:emoji_name',
    summary: 'Upload a custom emoji: one PNG, JPEG, GIF or WebP file, animated or not',
    tags: ['server_and_organizations'],
    auth: 'user',
    path: EmojiNamePath,
    maxFileBytes: MAX_EMOJI_UPLOAD_BYTES,
    handler: async ({ ctx, actor, path, files }) => {
      await uploadRealmEmoji(ctx, actor, path.emoji_name as string, files);
      return {};
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/realm/emoji/:emoji_name',
    summary: 'Deactivate a custom emoji (its author or an administrator)',
    tags: ['server_and_organizations'],
    auth: 'user',
    path: EmojiNamePath,
    handler: async ({ ctx, actor, path }) => {
      await deactivateRealmEmoji(ctx, actor, path.emoji_name as string);
      return {};
    },
  }),
];

/** The patterns of emojiImagePath() and emojiStillPath() in lib/presenters/custom-emoji.ts. */
export const EMOJI_FILE_URL = '/user_avatars/:realm_id/emoji/images/:file';
export const EMOJI_STILL_FILE_URL = '/user_avatars/:realm_id/emoji/images/still/:file';

const notFound = () => new JsonableError('Not Found', 'BAD_REQUEST', 404);
const ID_RE = /^[1-9][0-9]{0,14}$/;

/**
 * GET an emoji's image or still frame. An emoji id's bytes never change (a new upload is
 * a new id), so every response may be cached for a year.
 */
export function registerCustomEmojiFiles(
  app: FastifyInstance,
  ctx: AppContext,
  table: RouteTable,
): void {
  for (const [url, still] of [
    [EMOJI_FILE_URL, false],
    [EMOJI_STILL_FILE_URL, true],
  ] as const) {
    table.add('GET', url);
    app.get(url, { schema: { hide: true } }, async (request, reply) => {
      const { realm_id: realmId, file } = request.params as { realm_id: string; file: string };
      const match = /^([1-9][0-9]{0,14})\.(png|gif|webp)$/.exec(file);
      if (!ID_RE.test(realmId) || !match) return sendError(reply, notFound());
      const image = await readEmojiImage(ctx, Number(realmId), Number(match[1]), match[2], still);
      if (!image) return sendError(reply, notFound());
      const etag = `"emoji-${realmId}-${match[1]}${still ? '-still' : ''}"`;
      reply
        .header('ETag', etag)
        .header('Cache-Control', 'public, max-age=31536000, immutable')
        .header('X-Content-Type-Options', 'nosniff')
        .header('Content-Security-Policy', "default-src 'none'");
      const matches = (request.headers['if-none-match'] ?? '')
        .split(',')
        .map((tag) => tag.trim().replace(/^W\//, ''));
      if (matches.includes(etag) || matches.includes('*')) return reply.code(304).send();
      return reply.code(200).type(image.contentType).send(image.bytes);
    });
  }
}
