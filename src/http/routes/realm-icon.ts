// POST and DELETE /realm/icon (administrators), and the icon file itself. The file is
// served outside /api/v1, where the reference server serves it, and without
// authentication: clients show the icon on their login screens.
import type { FastifyInstance } from 'fastify';
import {
  deleteRealmIcon,
  MAX_ICON_FILE_BYTES,
  readRealmIcon,
  uploadRealmIcon,
} from '../../actions/realm-icon.ts';
import type { AppContext } from '../../context.ts';
import { JsonableError } from '../../lib/errors.ts';
import { defineRoute } from '../route.ts';
import { sendError, type RouteTable } from '../errors.ts';

export const realmIconRoutes = [
  defineRoute({
    method: 'POST',
    url: '/realm/icon',
    summary: "Upload the organization's icon: one PNG, JPEG, GIF or WebP file (administrators)",
    tags: ['server_and_organizations'],
    auth: 'user',
    maxFileBytes: MAX_ICON_FILE_BYTES,
    handler: async ({ ctx, actor, files }) => uploadRealmIcon(ctx, actor, files),
  }),
  defineRoute({
    method: 'DELETE',
    url: '/realm/icon',
    summary: "Go back to the organization's generated icon (administrators)",
    tags: ['server_and_organizations'],
    auth: 'user',
    handler: async ({ ctx, actor }) => deleteRealmIcon(ctx, actor),
  }),
];

/** The pattern of realmIconPath() in lib/presenters/server.ts, which builds the URLs. */
export const REALM_ICON_FILE_URL = '/user_avatars/:realm_id/realm/icon.png';

const notFound = () => new JsonableError('Not Found', 'BAD_REQUEST', 404);

/**
 * GET /user_avatars/<realm_id>/realm/icon.png. A URL carrying the current ?version= never
 * changes its bytes (every change has a new version), so it is cached for a year; other
 * forms revalidate with the ETag.
 */
export function registerRealmIconFile(
  app: FastifyInstance,
  ctx: AppContext,
  table: RouteTable,
): void {
  table.add('GET', REALM_ICON_FILE_URL);
  app.get(REALM_ICON_FILE_URL, { schema: { hide: true } }, async (request, reply) => {
    const { realm_id: realmId } = request.params as { realm_id: string };
    if (!/^[1-9][0-9]{0,14}$/.test(realmId)) return sendError(reply, notFound());
    const icon = await readRealmIcon(ctx, Number(realmId));
    if (!icon) return sendError(reply, notFound());
    const etag = `"realm-icon-${realmId}-${icon.version}"`;
    const { version } = request.query as { version?: unknown };
    reply
      .header('ETag', etag)
      .header(
        'Cache-Control',
        version === String(icon.version)
          ? 'public, max-age=31536000, immutable'
          : 'public, max-age=0, must-revalidate',
      )
      .header('X-Content-Type-Options', 'nosniff')
      .header('Content-Security-Policy', "default-src 'none'");
    const matches = (request.headers['if-none-match'] ?? '')
      .split(',')
      .map((tag) => tag.trim().replace(/^W\//, ''));
    if (matches.includes(etag) || matches.includes('*')) return reply.code(304).send();
    return reply.code(200).type(icon.contentType).send(icon.bytes);
  });
}
