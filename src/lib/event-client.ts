// What an event-queue client declared at registration: which events it wants, the
// narrow its message events must match, and the capabilities that decide the shape of
// what it receives. Pure: the queue layer and the register snapshot both read it.
import { badRequest } from './errors.ts';
import { DEFAULT_EMPTY_TOPIC_DISPLAY_NAME } from './realm-settings.ts';
import { lookupOwn } from './validation.ts';

/** Every client capability clients may declare; all default to false. */
export const CLIENT_CAPABILITIES = [
  'notification_settings_null',
  'bulk_message_deletion',
  'user_avatar_url_field_optional',
  'stream_typing_notifications',
  'user_settings_object',
  'linkifier_url_template',
  'user_list_incomplete',
  'include_deactivated_groups',
  'archived_channels',
  'empty_topic_name',
  'simplified_presence_events',
] as const;
export type ClientCapability = (typeof CLIENT_CAPABILITIES)[number];
export type ClientCapabilities = Record<ClientCapability, boolean>;

export interface EventNarrowTerm {
  operator: 'channel' | 'topic' | 'sender' | 'is';
  operand: string;
}

export interface ClientDescriptor {
  /** null: every type. */
  eventTypes: readonly string[] | null;
  narrow: readonly EventNarrowTerm[];
  allPublicStreams: boolean;
  applyMarkdown: boolean;
  clientGravatar: boolean;
  slimPresence: boolean;
  /** register's include_subscribers: whether the client keeps channel subscriber lists. */
  includeSubscribers: boolean | 'partial';
  capabilities: ClientCapabilities;
  /** Idle lifetime of the queue. */
  idleTimeoutSecs: number;
}

export function readCapabilities(raw: Record<string, unknown> | undefined): ClientCapabilities {
  const out = {} as ClientCapabilities;
  // Unknown keys are a newer client's capabilities: ignored, so that client keeps working.
  for (const name of CLIENT_CAPABILITIES) out[name] = raw?.[name] === true;
  return out;
}

export function wantsEventType(
  client: Pick<ClientDescriptor, 'eventTypes'>,
  type: string,
): boolean {
  return client.eventTypes === null || client.eventTypes.includes(type);
}

/** Whether a queue also listens to public-channel messages of channels its user is not in. */
export function isRealmWideListener(client: ClientDescriptor): boolean {
  return wantsEventType(client, 'message') && (client.allPublicStreams || client.narrow.length > 0);
}

const IS_OPERANDS = ['dm', 'private', 'starred', 'unread', 'mentioned', 'alerted', 'resolved'];
const OPERATOR_ALIASES: Record<string, EventNarrowTerm['operator']> = {
  channel: 'channel',
  stream: 'channel',
  topic: 'topic',
  sender: 'sender',
  is: 'is',
};

/** What clients without empty_topic_name see for the empty topic, from the realm setting. */
export function emptyTopicDisplayName(setting: unknown): string {
  return typeof setting === 'string' && setting !== '' ? setting : DEFAULT_EMPTY_TOPIC_DISPLAY_NAME;
}

/** Validate a register narrow: [operator, operand] pairs of the operators events support. */
export function checkEventNarrow(raw: readonly (readonly string[])[]): EventNarrowTerm[] {
  return raw.map((pair) => {
    if (pair.length !== 2)
      throw badRequest('Invalid narrow: each element must be [operator, operand]');
    const [rawOperator, operand] = pair;
    const operator = lookupOwn(OPERATOR_ALIASES, rawOperator);
    if (!operator) throw badRequest(`Operator ${rawOperator} not supported.`);
    if (operator === 'is' && !IS_OPERANDS.includes(operand)) {
      throw badRequest(`Operator is:${operand} not supported.`);
    }
    return { operator, operand };
  });
}

/** The fields of a message event payload a narrow looks at. */
export interface NarrowableMessage {
  type?: unknown;
  display_recipient?: unknown;
  stream_id?: unknown;
  subject?: unknown;
  sender_email?: unknown;
}

const RESOLVED_TOPIC_PREFIX = '✔ ';
const lower = (v: unknown): string => (typeof v === 'string' ? v.toLowerCase() : '');

function matchesTerm(
  term: EventNarrowTerm,
  m: NarrowableMessage,
  flags: readonly string[],
): boolean {
  const operand = term.operand.toLowerCase();
  const inChannel = m.type === 'stream';
  switch (term.operator) {
    case 'channel':
      return (
        inChannel && (lower(m.display_recipient) === operand || String(m.stream_id) === operand)
      );
    case 'topic':
      return inChannel && lower(m.subject) === operand;
    case 'sender':
      return lower(m.sender_email) === operand;
    case 'is':
      switch (term.operand) {
        case 'dm':
        case 'private':
          return m.type === 'private';
        case 'starred':
          return flags.includes('starred');
        case 'unread':
          return !flags.includes('read');
        case 'mentioned':
          return (
            flags.includes('mentioned') ||
            flags.includes('stream_wildcard_mentioned') ||
            flags.includes('topic_wildcard_mentioned')
          );
        case 'alerted':
          return flags.includes('has_alert_word');
        case 'resolved':
          return (
            inChannel &&
            typeof m.subject === 'string' &&
            m.subject.startsWith(RESOLVED_TOPIC_PREFIX)
          );
        default:
          return false;
      }
  }
}

/** Whether a message event passes every term of the queue's narrow (case-insensitively). */
export function messageMatchesNarrow(
  narrow: readonly EventNarrowTerm[],
  message: NarrowableMessage,
  flags: readonly string[],
): boolean {
  // A loop, not every(): this runs for each queue a message reaches, and a callback is an
  // allocation per queue.
  for (let i = 0; i < narrow.length; i++) if (!matchesTerm(narrow[i], message, flags)) return false;
  return true;
}
