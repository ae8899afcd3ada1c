// The one error type. Anything thrown as a JsonableError reaches the client as
// {result: "error", msg, code, ...extra} with its HTTP status; anything else is a bug
// and becomes a generic 500 (see http/errors.ts).

export type ErrorCode =
  | 'BAD_REQUEST'
  | 'REQUEST_VARIABLE_MISSING'
  | 'REQUEST_VARIABLE_INVALID'
  | 'REQUEST_CONFUSING_VAR'
  | 'INVALID_JSON'
  | 'UNAUTHORIZED'
  | 'UNAUTHORIZED_PRINCIPAL'
  | 'USER_DEACTIVATED'
  | 'REALM_DEACTIVATED'
  | 'AUTHENTICATION_FAILED'
  | 'NONEXISTENT_SUBDOMAIN'
  | 'BAD_EVENT_QUEUE_ID'
  | 'BAD_NARROW'
  | 'STREAM_DOES_NOT_EXIST'
  | 'CANNOT_DEACTIVATE_LAST_USER'
  | 'CANNOT_ADMINISTER_CHANNEL'
  | 'EXPECTATION_MISMATCH'
  | 'SYSTEM_GROUP_REQUIRED'
  | 'CANNOT_DEACTIVATE_GROUP_IN_USE'
  | 'INVITATION_FAILED'
  | 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED'
  | 'REACTION_ALREADY_EXISTS'
  | 'REACTION_DOES_NOT_EXIST'
  | 'STREAM_WILDCARD_MENTION_NOT_ALLOWED'
  | 'TOPIC_WILDCARD_MENTION_NOT_ALLOWED'
  | 'INVALID_PUSH_DEVICE_TOKEN'
  | 'RATE_LIMIT_HIT'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'REQUEST_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'STORAGE_FULL'
  | 'INTERNAL_SERVER_ERROR';

export class JsonableError extends Error {
  readonly code: ErrorCode;
  readonly httpStatus: number;
  readonly extra: Record<string, unknown>;

  constructor(
    msg: string,
    code: ErrorCode = 'BAD_REQUEST',
    httpStatus = 400,
    extra: Record<string, unknown> = {},
  ) {
    super(msg);
    this.name = 'JsonableError';
    this.code = code;
    this.httpStatus = httpStatus;
    this.extra = extra;
  }

  toJSON(): Record<string, unknown> {
    return { result: 'error', msg: this.message, code: this.code, ...this.extra };
  }
}

/** A plain 400 BAD_REQUEST, the reference server's default. */
export function badRequest(msg: string, extra: Record<string, unknown> = {}): JsonableError {
  return new JsonableError(msg, 'BAD_REQUEST', 400, extra);
}

/** A resource that does not exist: 404 with code BAD_REQUEST, as the reference server answers. */
export function resourceNotFound(msg: string): JsonableError {
  return new JsonableError(msg, 'BAD_REQUEST', 404);
}

/** The caller may not do this. 400 with UNAUTHORIZED_PRINCIPAL, as the reference server answers. */
export function notAllowed(msg: string): JsonableError {
  return new JsonableError(msg, 'UNAUTHORIZED_PRINCIPAL', 400);
}

/** Access denied to an existing resource: 403 BAD_REQUEST. */
export function accessDenied(msg = 'Access denied'): JsonableError {
  return new JsonableError(msg, 'BAD_REQUEST', 403);
}

export function unauthorized(msg: string): JsonableError {
  return new JsonableError(msg, 'UNAUTHORIZED', 401);
}

export const mustBeAdmin = (): JsonableError => notAllowed('Must be an organization administrator');
export const mustBeOwner = (): JsonableError => notAllowed('Must be an organization owner');

/**
 * What a full store reports: SQLite (a full disk, or the database's max_page_count),
 * PostgreSQL's disk_full, and the file system's ENOSPC and EDQUOT (uploads).
 */
const STORAGE_FULL_CODES: ReadonlySet<unknown> = new Set([
  'SQLITE_FULL',
  '53100',
  'ENOSPC',
  'EDQUOT',
]);

/** The change failed for want of room: nothing is wrong with the request, and it may work later. */
export function isStorageFull(err: unknown): boolean {
  return err instanceof Error && STORAGE_FULL_CODES.has((err as { code?: unknown }).code);
}
