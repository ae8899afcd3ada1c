// Narrows of GET /messages: the search terms a client sends, checked and put in one
// canonical form. Both the legacy [operator, operand] pairs and {operator, operand,
// negated} objects are accepted; legacy operator names map to the current ones. Looking
// up names and ids is the caller's work (actions/message-fetch.ts); this is pure.
import { JsonableError } from './errors.ts';
import { lookupOwn } from './validation.ts';

export const NARROW_OPERATORS = [
  'channel',
  'channels',
  'topic',
  'sender',
  'dm',
  'dm-including',
  'group-pm-with',
  'is',
  'has',
  'near',
  'id',
  'search',
  'with',
] as const;
export type NarrowOperator = (typeof NARROW_OPERATORS)[number];

const OPERATOR_ALIASES: Record<string, NarrowOperator> = {
  stream: 'channel',
  streams: 'channels',
  'pm-with': 'dm',
};

export const IS_OPERANDS = [
  'dm',
  'private',
  'starred',
  'unread',
  'mentioned',
  'alerted',
  'resolved',
  'followed',
  'muted',
] as const;
export const HAS_OPERANDS = ['link', 'image', 'attachment', 'reaction'] as const;
export const CHANNELS_OPERANDS = ['public', 'web-public'] as const;

export type IsOperand = (typeof IS_OPERANDS)[number];
export type HasOperand = (typeof HAS_OPERANDS)[number];

/** A user named by id or by API email. */
export type UserRef = number | string;

export type NarrowTerm =
  | { operator: 'channel'; operand: number | string; negated: boolean }
  | { operator: 'channels'; operand: (typeof CHANNELS_OPERANDS)[number]; negated: boolean }
  | { operator: 'topic'; operand: string; negated: boolean }
  | { operator: 'sender' | 'dm-including' | 'group-pm-with'; operand: UserRef; negated: boolean }
  | { operator: 'dm'; operand: UserRef[]; negated: boolean }
  | { operator: 'is'; operand: IsOperand; negated: boolean }
  | { operator: 'has'; operand: HasOperand; negated: boolean }
  | { operator: 'near' | 'id' | 'with'; operand: number; negated: boolean }
  | { operator: 'search'; operand: string; negated: boolean };

export function badNarrow(description: string): JsonableError {
  return new JsonableError(`Invalid narrow operator: ${description}`, 'BAD_NARROW', 400);
}

const invalidNarrow = (): JsonableError => new JsonableError('Invalid narrow', 'BAD_NARROW', 400);

interface RawTerm {
  operator: string;
  operand: unknown;
  negated: boolean;
}

function readRawTerm(element: unknown): RawTerm {
  if (Array.isArray(element)) {
    if (element.length !== 2 || typeof element[0] !== 'string') throw invalidNarrow();
    return { operator: element[0], operand: element[1], negated: false };
  }
  if (element === null || typeof element !== 'object') throw invalidNarrow();
  const obj = element as Record<string, unknown>;
  for (const key of Object.keys(obj)) {
    if (!['operator', 'operand', 'negated'].includes(key)) throw invalidNarrow();
  }
  if (typeof obj.operator !== 'string' || !('operand' in obj)) throw invalidNarrow();
  if (obj.negated !== undefined && typeof obj.negated !== 'boolean') throw invalidNarrow();
  return { operator: obj.operator, operand: obj.operand, negated: obj.negated === true };
}

/** Ids are 32-bit: a larger number names nothing that can exist. */
export const MAX_ID = 2147483647;
const isId = (v: unknown): v is number =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && v <= MAX_ID;

function messageIdOperand(operator: string, operand: unknown): number {
  if (isId(operand)) return operand;
  if (
    typeof operand === 'string' &&
    /^\d{1,10}$/.test(operand.trim()) &&
    Number(operand) <= MAX_ID
  ) {
    return Number(operand);
  }
  throw badNarrow(operator === 'with' ? "Invalid 'with' operator" : 'Invalid message ID');
}

function stringOperand(operator: string, operand: unknown): string {
  if (typeof operand !== 'string') throw badNarrow(`invalid operand for ${operator}`);
  return operand;
}

function userOperand(operator: string, operand: unknown): UserRef {
  if (isId(operand)) return operand;
  const s = stringOperand(operator, operand).trim();
  return /^\d{1,10}$/.test(s) && Number(s) <= MAX_ID ? Number(s) : s;
}

/** dm operands: a list of ids, one id, or emails separated by commas. */
function userListOperand(operand: unknown): UserRef[] {
  if (Array.isArray(operand)) {
    if (operand.length === 0 || !operand.every(isId)) throw badNarrow('invalid operand for dm');
    return operand;
  }
  if (isId(operand)) return [operand];
  const parts = stringOperand('dm', operand)
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (parts.length === 0) throw badNarrow('invalid operand for dm');
  return parts.map((p) => (/^\d{1,10}$/.test(p) && Number(p) <= MAX_ID ? Number(p) : p));
}

function checkTerm(raw: RawTerm): NarrowTerm {
  const operator = lookupOwn(OPERATOR_ALIASES, raw.operator) ?? raw.operator;
  const { operand, negated } = raw;
  switch (operator) {
    case 'channel': {
      if (isId(operand)) return { operator, operand, negated };
      const name = stringOperand(operator, operand).trim();
      return { operator, operand: name, negated };
    }
    case 'channels': {
      const value = stringOperand(operator, operand);
      if (!(CHANNELS_OPERANDS as readonly string[]).includes(value)) {
        throw badNarrow(`unknown channels operand ${value}`);
      }
      return { operator, operand: value as (typeof CHANNELS_OPERANDS)[number], negated };
    }
    case 'topic':
      return { operator, operand: stringOperand(operator, operand).trim(), negated };
    case 'sender':
    case 'dm-including':
    case 'group-pm-with':
      return { operator, operand: userOperand(operator, operand), negated };
    case 'dm':
      return { operator, operand: userListOperand(operand), negated };
    case 'is': {
      const value = stringOperand(operator, operand);
      if (!(IS_OPERANDS as readonly string[]).includes(value)) {
        throw badNarrow(`unknown 'is' operand ${value}`);
      }
      return { operator, operand: value as IsOperand, negated };
    }
    case 'has': {
      const value = stringOperand(operator, operand);
      if (!(HAS_OPERANDS as readonly string[]).includes(value)) {
        throw badNarrow(`unknown 'has' operand ${value}`);
      }
      return { operator, operand: value as HasOperand, negated };
    }
    case 'near':
    case 'id':
    case 'with':
      if (operator === 'with' && negated) throw badNarrow("Invalid 'with' operator");
      return { operator, operand: messageIdOperand(operator, operand), negated };
    case 'search': {
      const text = stringOperand(operator, operand);
      if (text.trim() === '') throw badNarrow('search operand cannot be blank');
      return { operator, operand: text, negated };
    }
    default:
      throw badNarrow(`unknown operator ${raw.operator}`);
  }
}

const CHANNEL_OPERATORS = new Set(['channel', 'channels']);
const DM_OPERATORS = new Set(['dm', 'dm-including', 'group-pm-with']);

/** Check a narrow as decoded from JSON text and return it in canonical form. */
export function parseNarrow(raw: unknown): NarrowTerm[] {
  if (!Array.isArray(raw)) throw invalidNarrow();
  const terms = raw.map((element) => checkTerm(readRawTerm(element)));
  const positive = terms.filter((t) => !t.negated);
  const inChannel = positive.some((t) => CHANNEL_OPERATORS.has(t.operator));
  const isDirect =
    positive.some((t) => DM_OPERATORS.has(t.operator)) ||
    positive.some((t) => t.operator === 'is' && (t.operand === 'dm' || t.operand === 'private'));
  if (inChannel && isDirect) {
    throw new JsonableError(
      'No message can be both a channel message and direct message',
      'BAD_NARROW',
      400,
    );
  }
  if (terms.filter((t) => t.operator === 'with').length > 1) {
    throw new JsonableError("Duplicate 'with' operators.", 'BAD_NARROW', 400);
  }
  return terms;
}

/** The anchor a client asked for: a message id, or null for the first unread message. */
export const LARGER_THAN_MAX_MESSAGE_ID = 10000000000000000;

export function parseAnchor(
  raw: number | string | undefined,
  useFirstUnreadAnchor: boolean,
): number | null {
  if (useFirstUnreadAnchor) return null;
  if (raw === undefined) {
    throw new JsonableError("Missing 'anchor' argument.", 'REQUEST_VARIABLE_MISSING', 400, {
      var_name: 'anchor',
    });
  }
  if (raw === 'oldest') return 0;
  if (raw === 'newest') return LARGER_THAN_MAX_MESSAGE_ID;
  if (raw === 'first_unread') return null;
  const text = String(raw).trim();
  if (!/^-?\d+$/.test(text)) throw new JsonableError('Invalid anchor', 'BAD_REQUEST', 400);
  if (text.startsWith('-')) return 0;
  // Beyond the safe integers every anchor means "after the newest message".
  return text.length > 16 || Number(text) > LARGER_THAN_MAX_MESSAGE_ID
    ? LARGER_THAN_MAX_MESSAGE_ID
    : Number(text);
}

/** Words of a search operand; "quoted phrases" stay together. */
export function searchWords(operand: string): string[] {
  const words: string[] = [];
  const re = /"([^"]*)"|(\S+)/g;
  for (let m = re.exec(operand); m !== null; m = re.exec(operand)) {
    const w = (m[1] ?? m[2]).trim();
    if (w !== '') words.push(w);
  }
  return words;
}

const escapeHtml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function highlightText(text: string, words: string[]): string {
  if (words.length === 0) return text;
  const re = new RegExp(`(${words.map(escapeRegExp).join('|')})`, 'giu');
  return text.replace(re, '<span class="highlight">$1</span>');
}

/** A topic with the search words marked, as HTML (match_subject). */
export function highlightTopic(topic: string, words: string[]): string {
  return highlightText(escapeHtml(topic), words.map(escapeHtml));
}

/** Rendered content with the search words marked in its text, never inside tags (match_content). */
export function highlightHtml(html: string, words: string[]): string {
  const escaped = words.map(escapeHtml);
  return html
    .split(/(<[^>]*>)/)
    .map((part) => (part.startsWith('<') ? part : highlightText(part, escaped)))
    .join('');
}
