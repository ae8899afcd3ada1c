// HTTP Basic authentication with the API email and API key, within the organization the
// request's host names. Every failure is 401 UNAUTHORIZED with WWW-Authenticate.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { JsonableError, unauthorized } from '../lib/errors.ts';
import { subdomainOf } from '../lib/realm-url.ts';
import { API_KEY_RE } from '../lib/validation.ts';
import * as realmsStore from '../store/realms.ts';
import * as usersStore from '../store/users.ts';
import type { RealmRow } from '../store/schema.ts';

export const WWW_AUTHENTICATE = 'Basic realm="parley"';

/** The organization the request's host names, if it exists. */
export async function realmForRequest(
  ctx: AppContext,
  request: FastifyRequest,
): Promise<RealmRow | undefined> {
  return realmsStore.getRealmByStringId(
    ctx.db,
    subdomainOf(request.hostname, ctx.config.externalUrl),
  );
}

function parseBasic(header: string | undefined): { email: string; key: string } {
  if (!header) throw unauthorized('Missing authorization header for basic auth');
  const [scheme, encoded] = header.trim().split(/\s+/, 2);
  if (scheme?.toLowerCase() !== 'basic' || !encoded)
    throw unauthorized('This endpoint requires HTTP basic authentication.');
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw unauthorized('Invalid authorization header for basic auth');
  return { email: decoded.slice(0, colon), key: decoded.slice(colon + 1) };
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export async function authenticate(ctx: AppContext, request: FastifyRequest): Promise<Actor> {
  const { email, key } = parseBasic(request.headers.authorization);
  if (!API_KEY_RE.test(key)) throw unauthorized('Malformed API key');
  const realm = await realmForRequest(ctx, request);
  const user = realm ? await usersStore.getUserByApiKey(ctx.db, key) : undefined;
  if (!realm || !user || user.realm_id !== realm.id || !sameSecret(user.api_key, key))
    throw unauthorized('Invalid API key');
  if (user.email !== email.toLowerCase() && user.delivery_email !== email.toLowerCase())
    throw unauthorized('Invalid API key');
  if (!user.is_active) throw unauthorized('Account is deactivated');
  if (realm.deactivated) throw unauthorized('This organization has been deactivated');
  return { user, realm };
}

export function isUnauthorized(err: unknown): err is JsonableError {
  return err instanceof JsonableError && err.httpStatus === 401;
}
