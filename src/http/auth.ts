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
  private readonly byStore = new WeakMap<object, KnownScopes<T>>();

  constructor(private readonly max: number) {}

  /**
   * The kept value at once when it is current (most requests), else a promise of it. Kept by
   * scope (the host) and key: a key made of both would be a new string to hash per request.
   */
  read(
    ctx: AppContext,
    scope: string,
    key: string,
    load: (ctx: AppContext, scope: string, key: string) => Promise<T>,
  ): T | Promise<T> {
    const version = ctx.store.accountsVersion();
    if (version instanceof Promise) {
      return version.then((known) => this.readAt(known, ctx, scope, key, load));
    }
    return this.readAt(version, ctx, scope, key, load);
  }

  private readAt(
    version: number | null,
    ctx: AppContext,
    scope: string,
    key: string,
    load: (ctx: AppContext, scope: string, key: string) => Promise<T>,
  ): T | Promise<T> {
    const hit = this.byStore.get(ctx.store)?.scopes.get(scope)?.get(key);
    if (hit && hit.version === version) return hit.value;
    return load(ctx, scope, key).then((value) => {
      if (version !== null) this.keep(ctx.store, scope, key, { version, value });
      return value;
    });
  }

  private keep(store: object, scope: string, key: string, known: Known<T>): void {
    let kept = this.byStore.get(store);
    if (!kept) this.byStore.set(store, (kept = { size: 0, scopes: new Map() }));
    if (kept.size >= this.max) {
      kept.scopes.clear();
      kept.size = 0;
    }
    let inScope = kept.scopes.get(scope);
    if (!inScope) kept.scopes.set(scope, (inScope = new Map()));
    if (!inScope.has(key)) kept.size++;
    inScope.set(key, known);
  }
}

interface KnownScopes<T> {
  /** Entries over all scopes. */
  size: number;
  scopes: Map<string, Map<string, Known<T>>>;
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
  return knownRealms.read(ctx, host, '', loadRealm);
}

async function loadRealm(ctx: AppContext, host: string): Promise<RealmRow | undefined> {
  const realm = await realmsStore.getRealmByStringId(ctx.db, host);
  return realm && Object.freeze(realm);
}

/** The organization and user behind an API key used on a host. */
function readKey(ctx: AppContext, hostname: string, key: string): KeyRows | Promise<KeyRows> {
  return knownKeys.read(ctx, subdomainOf(hostname, ctx.config.externalUrl), key, loadKeyRows);
}

async function loadKeyRows(ctx: AppContext, host: string, key: string): Promise<KeyRows> {
  const realm = await readRealm(ctx, host);
  const user = realm ? await usersStore.getUserByApiKey(ctx.db, key) : undefined;
  return { realm, user: user && Object.freeze(user) };
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
  return knownActors.read(ctx, hostname, authorization, loadActor);
}

/**
 * The actor one connection's last request authenticated as. A client sends the same
 * Authorization and Host headers with every request on a connection, so two string comparisons
 * with the last ones replace hashing the header to look it up in knownActors (a new string
 * each request, about 70 bytes). It is reused on knownActors' terms: at the same accounts
 * version only, and only after a success.
 */
export class ConnectionActor {
  private knownAuthorization = '';
  private knownHostname = '';
  private knownVersion = -1;
  private knownActor: Actor | null = null;

  authenticate(
    ctx: AppContext,
    authorization: string | undefined,
    hostname: string,
  ): Actor | Promise<Actor> {
    const version = ctx.store.accountsVersion();
    if (
      version === this.knownVersion &&
      authorization === this.knownAuthorization &&
      hostname === this.knownHostname &&
      this.knownActor !== null
    )
      return this.knownActor;
    const actor = authenticateBasic(ctx, authorization, hostname);
    // Known at once, so at this version: no other work ran in between.
    if (typeof version === 'number' && authorization !== undefined && !(actor instanceof Promise)) {
      this.knownAuthorization = authorization;
      this.knownHostname = hostname;
      this.knownVersion = version;
      this.knownActor = actor;
    }
    return actor;
  }
}

function loadActor(ctx: AppContext, hostname: string, authorization: string): Promise<Actor> {
  return checkBasic(ctx, authorization, hostname);
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
