// buildApp(ctx): the Fastify instance with every API area. Tests call this directly.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import swagger from '@fastify/swagger';
import { parse as parseQuery } from 'node:querystring';
import type { AppContext } from './context.ts';
import { JsonableError } from './lib/errors.ts';
import {
  handleClientError,
  handleFrameworkError,
  installErrorHandling,
  RouteTable,
} from './http/errors.ts';
import { BODY_LIMIT_BYTES, registerRoutes, type AnyRoute } from './http/route.ts';
import { createRateLimiter } from './http/rate-limit.ts';
import { createDirectServer, DirectListener } from './http/direct-listener.ts';
import { PARLEY_VERSION } from './version.ts';
import { serverRoutes } from './http/routes/server.ts';
import { usersRoutes } from './http/routes/users.ts';
import { settingsRoutes } from './http/routes/settings.ts';
import { realmRoutes } from './http/routes/realm.ts';
import { realmIconRoutes, registerRealmIconFile } from './http/routes/realm-icon.ts';
import { customEmojiRoutes, registerCustomEmojiFiles } from './http/routes/custom-emoji.ts';
import { invitesRoutes } from './http/routes/invites.ts';
import { botsRoutes } from './http/routes/bots.ts';
import { eventsRoutes } from './http/routes/events.ts';
import { channelsRoutes } from './http/routes/channels.ts';
import { subscriptionsRoutes } from './http/routes/subscriptions.ts';
import { messagesRoutes } from './http/routes/messages.ts';
import { topicsRoutes } from './http/routes/topics.ts';
import { messageFlagsRoutes } from './http/routes/message-flags.ts';
import { messageReportsRoutes } from './http/routes/message-reports.ts';
import { reactionsRoutes } from './http/routes/reactions.ts';
import { userTopicsRoutes } from './http/routes/user-topics.ts';
import { alertWordsRoutes } from './http/routes/alert-words.ts';
import { presenceRoutes } from './http/routes/presence.ts';
import { typingRoutes } from './http/routes/typing.ts';
import { userGroupsRoutes } from './http/routes/user-groups.ts';
import { draftsRoutes } from './http/routes/drafts.ts';
import { channelFoldersRoutes } from './http/routes/channel-folders.ts';
import { mutedUsersRoutes } from './http/routes/muted-users.ts';
import { profileFieldsRoutes } from './http/routes/profile-fields.ts';
import { playgroundsRoutes } from './http/routes/playgrounds.ts';
import { pushTokensRoutes } from './http/routes/push-tokens.ts';
import { onboardingRoutes } from './http/routes/onboarding.ts';

/** Every API area's routes; each area adds its list here. */
export const ROUTE_AREAS: AnyRoute[][] = [
  serverRoutes,
  usersRoutes,
  settingsRoutes,
  realmRoutes,
  realmIconRoutes,
  customEmojiRoutes,
  invitesRoutes,
  botsRoutes,
  eventsRoutes,
  channelsRoutes,
  subscriptionsRoutes,
  messagesRoutes,
  topicsRoutes,
  messageFlagsRoutes,
  messageReportsRoutes,
  reactionsRoutes,
  userTopicsRoutes,
  alertWordsRoutes,
  draftsRoutes,
  channelFoldersRoutes,
  presenceRoutes,
  typingRoutes,
  userGroupsRoutes,
  mutedUsersRoutes,
  profileFieldsRoutes,
  playgroundsRoutes,
  pushTokensRoutes,
  onboardingRoutes,
];

export async function buildApp(ctx: AppContext): Promise<FastifyInstance> {
  const limiter = await createRateLimiter(ctx);
  const direct = new DirectListener(ctx, limiter, ROUTE_AREAS.flat());
  const app: FastifyInstance = Fastify({
    serverFactory: (fastify, options) => createDirectServer(direct, fastify, options),
    keepAliveTimeout: ctx.config.keepAliveMs,
    loggerInstance: ctx.log as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT_BYTES,
    frameworkErrors: handleFrameworkError,
    clientErrorHandler: handleClientError,
    routerOptions: {
      ignoreTrailingSlash: true,
      maxParamLength: 500,
      // Node's parser never throws on malformed percent-encoding.
      querystringParser: (s) => parseQuery(s),
    },
    // Per-request lines would put every URL in the log at info level; errors are logged by http/errors.ts.
    logController: new LogController({ disableRequestLogging: true }),
  });
  // Schemas document and type routes; lib/params.ts validates, with the reference server's messages.
  app.setValidatorCompiler(() => () => true);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));

  await app.register(formbody, { parser: (s) => parseQuery(s), bodyLimit: BODY_LIMIT_BYTES });
  await app.register(multipart, {
    limits: { fileSize: 25 * 1024 * 1024, files: 4, fields: 200, fieldSize: BODY_LIMIT_BYTES },
  });
  // Any other content type is refused with a JSON error rather than parsed.
  app.addContentTypeParser('*', (_request, _payload, done) => {
    done(new JsonableError('Unsupported Content-Type', 'UNSUPPORTED_MEDIA_TYPE', 415), undefined);
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Parley API',
        version: PARLEY_VERSION,
        description: 'Team chat server API (Zulip-compatible).',
      },
      components: { securitySchemes: { basicAuth: { type: 'http', scheme: 'basic' } } },
    },
  });

  const table = new RouteTable();
  installErrorHandling(app, table);
  app.addHook('preClose', async () => direct.close());
  app.addHook('onClose', async () => limiter.close());
  for (const area of ROUTE_AREAS) registerRoutes(app, ctx, table, area, limiter);
  // Outside /api/v1, where clients expect the icon file.
  registerRealmIconFile(app, ctx, table);
  registerCustomEmojiFiles(app, ctx, table);
  table.add('GET', '/api/v1/openapi.json');
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  return app;
}
