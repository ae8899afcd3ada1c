// Checks on user-supplied names and addresses, shared by every area.
import { badRequest } from './errors.ts';

export const MAX_NAME_LENGTH = 100;
export const MAX_EMAIL_LENGTH = 254;
export const MIN_PASSWORD_LENGTH = 6;
export const MAX_PASSWORD_LENGTH = 100;
const NAME_FORBIDDEN = /[*`\\>"@\p{Cc}\p{Cf}]/u;
const EMAIL_RE =
  /^[A-Za-z0-9.!#$%&'*+/=?^_{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** A display name: trimmed, not blank, bounded, without characters that break mentions. */
export function checkFullName(raw: string): string {
  const name = raw.trim();
  if (name.length < 1) throw badRequest('Name too short!');
  if ([...name].length > MAX_NAME_LENGTH) throw badRequest('Name too long!');
  if (NAME_FORBIDDEN.test(name)) throw badRequest('Invalid characters in name!');
  return name;
}

/** An email address, normalised to lower case. */
export function checkEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  if (email.length > MAX_EMAIL_LENGTH || !EMAIL_RE.test(email))
    throw badRequest(`Invalid email '${raw}'`);
  return email;
}

export function checkPassword(password: string): string {
  if (password.length < MIN_PASSWORD_LENGTH) throw badRequest('The password is too weak.');
  if (password.length > MAX_PASSWORD_LENGTH) throw badRequest('The password is too long.');
  if (password.includes('\u0000')) throw badRequest('Invalid password');
  return password;
}

let knownTimezones: Set<string> | null = null;
/** An IANA time zone name, or "" for none. */
export function checkTimezone(tz: string): string {
  if (tz === '') return tz;
  knownTimezones ??= new Set(Intl.supportedValuesOf('timeZone').concat(['UTC', 'Etc/UTC']));
  if (!knownTimezones.has(tz)) throw badRequest(`Invalid timezone '${tz}'`);
  return tz;
}

export const API_KEY_LENGTH = 32;
export const API_KEY_RE = /^[A-Za-z0-9]{32}$/;
