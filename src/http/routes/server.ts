// Server-level routes: server_settings, fetching an API key with a password.
import { Type } from 'typebox';
import { fetchApiKey } from '../../actions/users.ts';
import { presentServerSettings } from '../../lib/presenters/server.ts';
import { defineRoute } from '../route.ts';

export const serverRoutes = [
  defineRoute({
    method: 'GET',
    url: '/server_settings',
    summary: 'Server and organization settings needed before logging in',
    tags: ['server_and_organizations'],
    auth: 'none',
    handler: async ({ ctx, realm }) => presentServerSettings(ctx.config.externalUrl, realm),
  }),
  defineRoute({
    method: 'POST',
    url: '/fetch_api_key',
    summary: 'Fetch an API key with an email address and password',
    tags: ['authentication'],
    auth: 'none',
    params: Type.Object({
      username: Type.String({ maxLength: 254 }),
      password: Type.String({ maxLength: 1000 }),
    }),
    handler: async ({ ctx, realm, params }) =>
      fetchApiKey(ctx, realm, params.username, params.password),
  }),
];
