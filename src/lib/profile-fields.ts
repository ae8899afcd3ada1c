// Custom profile fields: the eight field types, what field_data each accepts, what a
// user's value may be, and the API form of a field. Pure code; the actions store and emit.
import { badRequest } from './errors.ts';
import type { CustomProfileFieldRow } from '../store/schema.ts';
import { lookupOwn } from './validation.ts';

export const FIELD_TYPE = {
  shortText: 1,
  longText: 2,
  select: 3,
  date: 4,
  url: 5,
  user: 6,
  externalAccount: 7,
  pronouns: 8,
} as const;

/** The field types as register's custom_profile_field_types describes them. */
export const FIELD_TYPES: Record<string, { id: number; name: string }> = {
  SHORT_TEXT: { id: 1, name: 'Text (short)' },
  LONG_TEXT: { id: 2, name: 'Text (long)' },
  SELECT: { id: 3, name: 'List of options' },
  DATE: { id: 4, name: 'Date picker' },
  URL: { id: 5, name: 'Link' },
  USER: { id: 6, name: 'Users' },
  EXTERNAL_ACCOUNT: { id: 7, name: 'External account' },
  PRONOUNS: { id: 8, name: 'Pronouns' },
};

export const MAX_NAME_LENGTH = 40;
export const MAX_HINT_LENGTH = 80;
export const MAX_SHORT_VALUE_LENGTH = 50;
export const MAX_LONG_VALUE_LENGTH = 500;
/** Fields shown in the profile summary (user cards), at most. */
export const MAX_SUMMARY_FIELDS = 2;

/** External account subtypes with a fixed name, hint and profile URL. */
export const DEFAULT_EXTERNAL_ACCOUNTS: Record<
  string,
  { name: string; hint: string; url_pattern: string }
> = {
  github: {
    name: 'GitHub',
    hint: 'Enter your GitHub username',
    url_pattern: 'https://github.com/%(username)s',
  },
  twitter: {
    name: 'Twitter',
    hint: 'Enter your Twitter username',
    url_pattern: 'https://twitter.com/%(username)s',
  },
};

/** Markdown types: their values are shown rendered (rendered_value). */
export const isRenderedType = (type: number): boolean =>
  type === FIELD_TYPE.shortText || type === FIELD_TYPE.longText;

export function checkFieldType(type: number): void {
  if (!Object.values(FIELD_TYPE).includes(type as 1)) throw badRequest('Invalid field type.');
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The stored field_data text of a field of this type: choices for select fields, a subtype
 * (and URL pattern for custom ones) for external accounts, '' for the others.
 */
export function checkFieldData(type: number, data: unknown): string {
  if (type === FIELD_TYPE.select) {
    if (!isPlainObject(data)) throw badRequest('field_data is not a dict');
    const choices = Object.entries(data);
    if (choices.length === 0) throw badRequest('Field must have at least one choice.');
    const texts = new Set<string>();
    for (const [key, choice] of choices) {
      const where = `field_data["${key}"]`;
      if (!isPlainObject(choice)) throw badRequest(`${where} is not a dict`);
      for (const name of ['text', 'order']) {
        if (!(name in choice)) throw badRequest(`${where} key is missing: ${name}`);
        if (typeof choice[name] !== 'string') {
          throw badRequest(`${where}["${name}"] is not a string`);
        }
      }
      const extra = Object.keys(choice).find((k) => k !== 'text' && k !== 'order');
      if (extra !== undefined) throw badRequest(`Unexpected arguments: ${extra}`);
      const text = (choice.text as string).trim();
      if (text === '') throw badRequest('Label cannot be blank.');
      if (texts.has(text)) throw badRequest('Field must not have duplicate choices.');
      texts.add(text);
    }
    return JSON.stringify(data);
  }
  if (type === FIELD_TYPE.externalAccount) {
    if (!isPlainObject(data)) throw badRequest('field_data is not a dict');
    const subtype = data.subtype;
    if (typeof subtype !== 'string') throw badRequest('field_data["subtype"] is not a string');
    if (subtype === 'custom') {
      const pattern = data.url_pattern;
      if (typeof pattern !== 'string' || pattern === '') {
        throw badRequest('Custom external account must define URL pattern');
      }
      if (pattern.split('%(username)s').length !== 2) {
        throw badRequest("URL pattern must contain '%(username)s'.");
      }
      if (!/^https?:\/\/[^\s/]+/.test(pattern.replace('%(username)s', 'username'))) {
        throw badRequest('field_data["url_pattern"] is not a URL');
      }
      return JSON.stringify({ subtype, url_pattern: pattern });
    }
    if (!Object.hasOwn(DEFAULT_EXTERNAL_ACCOUNTS, subtype))
      throw badRequest('Invalid external account type');
    return JSON.stringify({ subtype });
  }
  return '';
}

/** A default external account field: its name and hint are fixed. */
export function defaultExternalAccount(
  type: number,
  fieldData: string,
): { name: string; hint: string } | null {
  if (type !== FIELD_TYPE.externalAccount || fieldData === '') return null;
  const subtype = (JSON.parse(fieldData) as { subtype: string }).subtype;
  return lookupOwn(DEFAULT_EXTERNAL_ACCOUNTS, subtype) ?? null;
}

/** Whether the type may be shown in the profile summary. */
export const summaryAllowed = (type: number): boolean =>
  type !== FIELD_TYPE.longText && type !== FIELD_TYPE.user;

export function presentProfileField(row: CustomProfileFieldRow): Record<string, unknown> {
  return {
    id: row.id,
    name: row.name,
    type: row.field_type,
    hint: row.hint,
    field_data: row.field_data,
    order: row.field_order,
    required: row.required === 1,
    editable_by_user: row.editable_by_user === 1,
    ...(row.display_in_profile_summary === 1 ? { display_in_profile_summary: true } : {}),
  };
}

/** A date as YYYY-MM-DD that names a real day. */
function isDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.toISOString().slice(0, 10) === s;
}

function isUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * The stored text of a user's value for the field, or null for an empty value (which
 * clears it). isUser: whether an id names a user of the organization.
 */
export function checkFieldValue(
  field: CustomProfileFieldRow,
  value: unknown,
  isUser: (id: number) => boolean,
): string | null {
  const name = field.name;
  if (field.field_type === FIELD_TYPE.user) {
    if (!Array.isArray(value)) throw badRequest(`${name} is not a list`);
    if (value.length === 0) return null;
    for (const [i, id] of value.entries()) {
      if (typeof id !== 'number' || !Number.isInteger(id)) {
        throw badRequest(`${name}[${i}] is not an integer`);
      }
      if (!isUser(id)) throw badRequest(`Invalid user ID: ${id}`);
    }
    return JSON.stringify([...new Set(value as number[])]);
  }
  if (typeof value !== 'string') throw badRequest(`${name} is not a string`);
  if (value === '') return null;
  const limit =
    field.field_type === FIELD_TYPE.longText ? MAX_LONG_VALUE_LENGTH : MAX_SHORT_VALUE_LENGTH;
  if (field.field_type !== FIELD_TYPE.select && value.length > limit) {
    throw badRequest(`${name} is too long (limit: ${limit} characters)`);
  }
  if (field.field_type === FIELD_TYPE.date && !isDate(value)) {
    throw badRequest(`${name} is not a date`);
  }
  if (field.field_type === FIELD_TYPE.url && !isUrl(value)) {
    throw badRequest(`${name} is not a URL`);
  }
  if (field.field_type === FIELD_TYPE.select) {
    const choices = JSON.parse(field.field_data) as Record<string, unknown>;
    if (!Object.hasOwn(choices, value)) {
      throw badRequest(`'${value}' is not a valid choice for '${name}'.`);
    }
  }
  return value;
}
