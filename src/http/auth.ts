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
  return readRealm(ctx, subdomainOf(request.hostname, ctx.config.externalUrl));
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

/** Rows read while the store's accounts version was `version`. */
interface Known<T> {
  version: number;
  value: T;
}

/**
 * Recently read rows, per store, reused while the store reports no write to a users or
 * realms row since they were read (frozen, since requests share them). Any such write, by
 * this process or another, invalidates every entry at once, so a deactivation, a new key or
 * a role change is seen by the very next request. Without them every request read its
 * organization and user again: two of the four queries of a light request, and a wait for
 * the connection behind any long transaction.
 */
class KnownRows<T> {
  private readonly byStore = new WeakMap<object, Map<string, Known<T>>>();

  constructor(private readonly max: number) {}

  /** The kept value at once when it is current (most requests), else a promise of it. */
  read(ctx: AppContext, key: string, load: () => Promise<T>): T | Promise<T> {
    const version = ctx.store.accountsVersion();
    const hit = this.byStore.get(ctx.store)?.get(key);
    if (hit && hit.version === version) return hit.value;
    return load().then((value) => {
      if (version !== null) {
        let known = this.byStore.get(ctx.store);
        if (!known) this.byStore.set(ctx.store, (known = new Map()));
        if (known.size >= this.max) known.clear();
        known.set(key, { version, value });
      }
      return value;
    });
  }
}

/** The organization of a host and the user of an API key used on it. */
type KeyRows = { realm: RealmRow | undefined; user: UserRow | undefined };

// Sized for every client of a large organization: a full map is emptied at once.
const knownRealms = new KnownRows<RealmRow | undefined>(1000);
const knownKeys = new KnownRows<KeyRows>(50_000);
const knownActors = new KnownRows<Actor>(50_000);

/** The organization a host names. */
function readRealm(
  ctx: AppContext,
  host: string,
): RealmRow | undefined | Promise<RealmRow | undefined> {
  return knownRealms.read(ctx, host, async () => {
    const realm = await realmsStore.getRealmByStringId(ctx.db, host);
    return realm && Object.freeze(realm);
  });
}

/** The organization and user behind an API key used on a host. */
function readKey(ctx: AppContext, hostname: string, key: string): KeyRows | Promise<KeyRows> {
  const host = subdomainOf(hostname, ctx.config.externalUrl);
  return knownKeys.read(ctx, `${host}\n${key}`, async () => {
    const realm = await readRealm(ctx, host);
    const user = realm ? await usersStore.getUserByApiKey(ctx.db, key) : undefined;
    return { realm, user: user && Object.freeze(user) };
  });
}

export function authenticate(ctx: AppContext, request: FastifyRequest): Actor | Promise<Actor> {
  return authenticateBasic(ctx, request.headers.authorization, request.hostname);
}

/**
 * The user an Authorization header names, on the organization of the host (without port).
 * A client sends the same header with every request, so the actor a header and host named
 * is reused on the same terms as the rows behind it; failures are never kept.
 */
export function authenticateBasic(
  ctx: AppContext,
  authorization: string | undefined,
  hostname: string,
): Actor | Promise<Actor> {
  if (authorization === undefined) return checkBasic(ctx, authorization, hostname);
  return knownActors.read(ctx, `${hostname}\n${authorization}`, () =>
    checkBasic(ctx, authorization, hostname),
  );
}

async function checkBasic(
  ctx: AppContext,
  authorization: string | undefined,
  hostname: string,
): Promise<Actor> {
  const { email, key } = parseBasic(authorization);
  if (!API_KEY_RE.test(key)) throw unauthorized('Malformed API key');
  const { realm, user } = await readKey(ctx, hostname, key);
  if (!realm || !user || user.realm_id !== realm.id || !sameSecret(user.api_key, key))
    throw unauthorized('Invalid API key');
  if (user.email !== email.toLowerCase() && user.delivery_email !== email.toLowerCase())
    throw unauthorized('Invalid API key');
  if (!user.is_active) throw unauthorized('Account is deactivated');
  if (realm.deactivated) throw unauthorized('This organization has been deactivated');
  return Object.freeze({ user, realm });
}

export function isUnauthorized(err: unknown): err is JsonableError {
  return err instanceof JsonableError && err.httpStatus === 401;
}
