// Checks on user-supplied names and addresses, shared by every area.
import { badRequest } from './errors.ts';

export const MAX_NAME_LENGTH = 100;
export const MIN_NAME_LENGTH = 2;
export const MAX_EMAIL_LENGTH = 254;
export const MIN_PASSWORD_LENGTH = 6;
export const MAX_PASSWORD_LENGTH = 100;
// Characters that break mention syntax, and every control, format, private-use or
// unassigned code point.
const NAME_FORBIDDEN = /[*`\\>"@\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Cs}]/u;
const EMAIL_RE =
  /^[A-Za-z0-9.!#$%&'*+/=?^_{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/**
 * table[key] when key is one of the table's own: a client's "constructor" or "__proto__"
 * must not find what every object inherits.
 */
export function lookupOwn<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

/** A display name: trimmed, bounded, without characters that break mentions. */
export function checkFullName(raw: string): string {
  const name = raw.trim();
  const length = [...name].length;
  if (length > MAX_NAME_LENGTH) throw badRequest('Name too long!');
  if (length < MIN_NAME_LENGTH) throw badRequest('Name too short!');
  if (NAME_FORBIDDEN.test(name)) throw badRequest('Invalid characters in name!');
  // "Name|15" would read as a mention of user 15.
  if (/\|\d+$/.test(raw)) throw badRequest('Invalid format!');
  return name;
}

/** Whether the address is well formed (lower-cased by checkEmail before storing). */
export function isValidEmail(raw: string): boolean {
  const email = raw.trim();
  return email.length <= MAX_EMAIL_LENGTH && EMAIL_RE.test(email);
}

/** An email address, normalised to lower case. */
export function checkEmail(raw: string): string {
  if (!isValidEmail(raw)) throw badRequest(`Invalid email '${raw}'`);
  return raw.trim().toLowerCase();
}

/** Whether a password is long enough and usable (the reference server's strength gate). */
export function isStrongPassword(password: string): boolean {
  return (
    [...password].length >= MIN_PASSWORD_LENGTH &&
    password.length <= MAX_PASSWORD_LENGTH &&
    !password.includes('\u0000')
  );
}

export function checkPassword(password: string): string {
  if (!isStrongPassword(password)) throw badRequest('The password is too weak.');
  return password;
}

let knownTimezones: Set<string> | null = null;
/** Whether tz is an IANA time zone name, or "" for none. */
export function isKnownTimezone(tz: string): boolean {
  if (tz === '') return true;
  knownTimezones ??= new Set(Intl.supportedValuesOf('timeZone').concat(['UTC', 'Etc/UTC']));
  return knownTimezones.has(tz);
}

export function checkTimezone(tz: string): string {
  if (!isKnownTimezone(tz)) throw badRequest('timezone is not a recognized time zone');
  return tz;
}

export const API_KEY_LENGTH = 32;
export const API_KEY_RE = /^[A-Za-z0-9]{32}$/;
