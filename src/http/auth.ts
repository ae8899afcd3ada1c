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
import type { RealmRow, UserRow } from '../store/schema.ts';

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

/** The rows behind a key, read while the store's accounts version was `version`. */
interface KnownKey {
  version: number;
  realm: RealmRow | undefined;
  user: UserRow | undefined;
}

/**
 * Keys recently authenticated, per store. Every request used to read its organization and
 * user again, two of the four queries of a light request; while the store reports no write
 * to a users or realms row since they were read, the same rows are reused (frozen, since
 * requests share them). Any such write, by this process or another, invalidates every entry
 * at once, so a deactivation, a new key or a role change is seen by the very next request.
 */
const knownKeys = new WeakMap<object, Map<string, KnownKey>>();
const KNOWN_KEYS_MAX = 10_000;

async function readKey(
  ctx: AppContext,
  request: FastifyRequest,
  key: string,
): Promise<{ realm: RealmRow | undefined; user: UserRow | undefined }> {
  const host = subdomainOf(request.hostname, ctx.config.externalUrl);
  const version = ctx.store.accountsVersion();
  let known = knownKeys.get(ctx.store);
  const cacheKey = `${host}\n${key}`;
  const hit = known?.get(cacheKey);
  if (hit && hit.version === version) return hit;
  const realm = await realmsStore.getRealmByStringId(ctx.db, host);
  const user = realm ? await usersStore.getUserByApiKey(ctx.db, key) : undefined;
  if (version !== null) {
    if (!known) knownKeys.set(ctx.store, (known = new Map()));
    if (known.size >= KNOWN_KEYS_MAX) known.clear();
    known.set(cacheKey, {
      version,
      realm: realm && Object.freeze(realm),
      user: user && Object.freeze(user),
    });
  }
  return { realm, user };
}

export async function authenticate(ctx: AppContext, request: FastifyRequest): Promise<Actor> {
  const { email, key } = parseBasic(request.headers.authorization);
  if (!API_KEY_RE.test(key)) throw unauthorized('Malformed API key');
  const { realm, user } = await readKey(ctx, request, key);
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
