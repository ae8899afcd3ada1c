// Per-client rewriting at delivery. An action emits one canonical event; each queue gets
// the form its client declared it understands (capabilities and register flags), or
// nothing when the client did not ask for it. Each event type has at most one shaper;
// an area adds its own line to SHAPERS.
//
// Top-level fields whose names start with "__" are hints from the action to its shaper
// (per-recipient defaults, which copy is for which clients); no client ever sees them.
import {
  messageMatchesNarrow,
  wantsEventType,
  type ClientDescriptor,
  type NarrowableMessage,
} from '../lib/event-client.ts';
import { markShared } from './event-json.ts';
import type { GenericEvent, ParleyEvent } from './types.ts';

export interface DeliveryContext {
  /** What clients without empty_topic_name see instead of the empty topic. */
  emptyTopicName: string;
  /** False when the queue gets a channel message only as a realm-wide listener. */
  recipient: boolean;
  /**
   * The queue delivered to (the sender's own queue echoes its local message id). Read only for
   * an event with a `__local_echo` part: queues.ts gives every other event's shaping to the
   * next queue of the same client form without shaping again.
   */
  queueId: string;
}

/** Returns the events this client receives in place of one (none, one or several). */
export type Shaper = (
  event: ParleyEvent,
  client: ClientDescriptor,
  dc: DeliveryContext,
) => ParleyEvent[];

type Fields = GenericEvent;

const GRAVATAR_PREFIX = 'https://secure.gravatar.com/avatar/';

function topicFor(topic: unknown, client: ClientDescriptor, dc: DeliveryContext): unknown {
  return topic === '' && !client.capabilities.empty_topic_name ? dc.emptyTopicName : topic;
}

/** A copy with the named topic fields rewritten for clients without empty_topic_name. */
function withTopics(
  event: ParleyEvent,
  keys: string[],
  client: ClientDescriptor,
  dc: DeliveryContext,
): ParleyEvent {
  if (client.capabilities.empty_topic_name) return event;
  const e = event as Fields;
  if (!keys.some((k) => e[k] === '')) return event;
  const out: Fields = { ...e };
  for (const k of keys) if (k in out) out[k] = topicFor(out[k], client, dc);
  return out as ParleyEvent;
}

const sameEvent: Shaper = (event) => [event];

/** One bulk event with sorted ids, or one event per message for older clients. */
const deleteMessage: Shaper = (event, client, dc) => {
  const { message_ids, message_id, ...rest } = withTopics(event, ['topic'], client, dc) as Fields;
  const ids = (Array.isArray(message_ids) ? (message_ids as number[]) : [message_id as number])
    .slice()
    .sort((a, b) => a - b);
  if (client.capabilities.bulk_message_deletion)
    return [{ ...rest, message_ids: ids } as ParleyEvent];
  return ids.map((id) => ({ ...rest, message_id: id }) as ParleyEvent);
};

/** Channel typing only for clients that render it. */
const typing: Shaper = (event, client, dc) => {
  const e = event as Fields;
  const inChannel = e.message_type === 'stream' || e.message_type === 'channel';
  if (inChannel && !client.capabilities.stream_typing_notifications) return [];
  return [withTopics(event, ['topic'], client, dc)];
};

/** The messages' details of "mark unread" carry topics too. */
const updateMessageFlags: Shaper = (event, client, dc) => {
  const e = event as Fields;
  const details = e.message_details as Record<string, Record<string, unknown>> | undefined;
  if (!details || client.capabilities.empty_topic_name) return [event];
  const rewritten: Record<string, Record<string, unknown>> = {};
  for (const [id, d] of Object.entries(details)) {
    rewritten[id] = d.topic === '' ? { ...d, topic: dc.emptyTopicName } : d;
  }
  return [{ ...e, message_details: rewritten } as ParleyEvent];
};

/**
 * Presence events are emitted with both forms; the client gets the simplified one
 * (`presences` keyed by user id) or the legacy one (user_id, email, server_timestamp, presence),
 * without the deprecated email for slim_presence clients.
 */
const presence: Shaper = (event, client) => {
  const {
    presences,
    user_id,
    email,
    server_timestamp,
    presence: legacy,
    ...rest
  } = event as Fields;
  if (client.capabilities.simplified_presence_events)
    return [{ ...rest, presences } as ParleyEvent];
  if (client.slimPresence) return [{ ...rest, user_id, server_timestamp, presence: legacy }];
  return [{ ...rest, user_id, email, server_timestamp, presence: legacy } as ParleyEvent];
};

/** Editing a channel message names its topic, which older clients see renamed when empty. */
const typingEditMessage: Shaper = (event, client, dc) => {
  const e = event as Fields;
  const recipient = e.recipient as Fields | undefined;
  if (recipient?.type !== 'channel' || recipient.topic !== '') return [event];
  const topic = topicFor(recipient.topic, client, dc);
  return [{ ...e, recipient: { ...recipient, topic } } as ParleyEvent];
};

/**
 * Clients that cannot show deactivated groups see a deactivation as a removal, and nothing
 * about the group after it (__deactivated_group).
 */
const userGroup: Shaper = (event, client) => {
  const e = event as Fields;
  if (e.__deactivated_group === true && !client.capabilities.include_deactivated_groups) return [];
  const data = e.data as Record<string, unknown> | undefined;
  if (
    e.op === 'update' &&
    data?.deactivated === true &&
    !client.capabilities.include_deactivated_groups
  ) {
    return [{ type: 'user_group', op: 'remove', group_id: e.group_id } as ParleyEvent];
  }
  return [event];
};

/**
 * client_gravatar: a person whose avatar is the Gravatar of an address this viewer can see
 * gets avatar_url null, as in the register snapshot; the client computes it. A placeholder
 * for a user the viewer cannot access (__unless_user_list_incomplete) goes only to clients
 * whose user list is otherwise complete.
 */
const realmUser: Shaper = (event, client) => {
  const e = event as Fields;
  if (e.__unless_user_list_incomplete === true && client.capabilities.user_list_incomplete) {
    return [];
  }
  const person = e.person as Record<string, unknown> | undefined;
  if (
    e.op !== 'add' ||
    !client.clientGravatar ||
    !person ||
    person.delivery_email === null ||
    typeof person.avatar_url !== 'string' ||
    !person.avatar_url.startsWith(GRAVATAR_PREFIX)
  ) {
    return [event];
  }
  return [{ ...e, person: { ...person, avatar_url: null } } as ParleyEvent];
};

/**
 * Message events pass the queue's narrow, then take the client's form: the rendered HTML
 * or the Markdown source (__raw_content) per apply_markdown, a null avatar where the
 * client computes the sender's Gravatar (__gravatar_avatar_null, per recipient), the
 * empty topic's display name, and local_message_id on the sender's sending queue
 * (__local_echo).
 */
type MessageFields = NarrowableMessage & Record<string, unknown>;

/**
 * The message object for one client form. Every receiver of that form gets the same object
 * (marked shared, so its JSON is made once: event-json.ts); it is never changed afterwards.
 */
const messageForms = new WeakMap<object, Map<string, MessageFields>>();
/**
 * A form's key without a topic of its own, by markdown and null avatar: made once, where a key
 * made for each queue offered a message was a new string for the map to hash each time.
 */
const FORM_KEYS = ['00', '01', '10', '11'];

function messageInForm(
  source: MessageFields,
  markdown: boolean,
  avatarNull: boolean,
  topic: string | null,
): MessageFields {
  const form = (markdown ? 2 : 0) + (avatarNull ? 1 : 0);
  const key = topic === null ? FORM_KEYS[form] : `${FORM_KEYS[form]}${topic}`;
  let forms = messageForms.get(source);
  const known = forms?.get(key);
  if (known) return known;
  const { __raw_content: raw, ...msg } = source;
  if (!markdown && typeof raw === 'string') {
    Object.assign(msg, { content: raw, content_type: 'text/x-markdown' });
  }
  if (avatarNull) msg.avatar_url = null;
  if (topic !== null) msg.subject = topic;
  if (!forms) messageForms.set(source, (forms = new Map()));
  forms.set(key, msg);
  markShared(msg);
  return msg;
}

/** A message event as realm-wide listeners get it: no flags, since they are no recipients. */
const listenerForms = new WeakMap<object, Fields>();
/** A message event per form of its message: every receiver of both shares one event. */
const shapedMessages = new WeakMap<object, Map<MessageFields, Fields>>();

const message: Shaper = (event, client, dc) => {
  let e = event as Fields;
  if (!dc.recipient) {
    const known = listenerForms.get(event);
    if (known) e = known;
    else listenerForms.set(event, (e = { ...e, flags: [] }));
  }
  const source = (e.message ?? {}) as MessageFields;
  const flags = Array.isArray(e.flags) ? (e.flags as string[]) : [];
  if (!messageMatchesNarrow(client.narrow, source, flags)) return [];
  const emptyTopic =
    source.type === 'stream' && source.subject === '' && !client.capabilities.empty_topic_name;
  const msg = messageInForm(
    source,
    client.applyMarkdown,
    e.__gravatar_avatar_null === true && client.clientGravatar,
    emptyTopic ? dc.emptyTopicName : null,
  );
  const echo = e.__local_echo as { queueId?: string; localId?: string } | undefined;
  if (echo && echo.queueId === dc.queueId) {
    // The sender's sending queue alone gets its local id back: a copy of its own.
    const out = copyWithoutHints(e);
    out.message = msg;
    out.local_message_id = echo.localId;
    return [out as ParleyEvent];
  }
  // Made without the hints, so withoutHints has nothing left to do; shared, so never changed.
  let forms = shapedMessages.get(e);
  let out = forms?.get(msg);
  if (!out) {
    out = copyWithoutHints(e);
    out.message = msg;
    if (!forms) shapedMessages.set(e, (forms = new Map()));
    forms.set(msg, out);
    markShared(out);
  }
  return [out as ParleyEvent];
};

/**
 * Events about archived channels (__archived_channels) go only to clients with
 * archived_channels: for the others archiving was the channels' deletion, so they know
 * nothing of them to update.
 */
const aboutArchived = (e: Fields, client: ClientDescriptor): boolean =>
  e.__archived_channels === true && !client.capabilities.archived_channels;

/**
 * Channel events per archived_channels: with it, archiving and unarchiving are is_archived
 * updates; without it, archiving looks like deletion (__for_archiving) and unarchiving like
 * creation (__for_unarchiving).
 */
const stream: Shaper = (event, client) => {
  const e = event as Fields;
  if (aboutArchived(e, client)) return [];
  const archivedAware = client.capabilities.archived_channels;
  if (e.op === 'delete' && e.__for_archiving === true && archivedAware) return [];
  if (e.op === 'create' && e.__for_unarchiving === true && archivedAware) return [];
  if (e.op === 'update' && e.property === 'is_archived' && !archivedAware) return [];
  return [event];
};

const SUBSCRIPTION_NOTIFICATION_SETTINGS = [
  'desktop_notifications',
  'audible_notifications',
  'push_notifications',
  'email_notifications',
  'wildcard_mentions_notify',
];

/**
 * Subscriptions carry null for notification settings that inherit the user's defaults;
 * clients without notification_settings_null get the defaults (__notification_defaults)
 * instead. Subscriber lists sent only for clients that keep them (__only_with_subscribers)
 * go only to queues registered with include_subscribers.
 */
const subscription: Shaper = (event, client) => {
  const e = event as Fields;
  if (e.__only_with_subscribers === true && !client.includeSubscribers) return [];
  if (aboutArchived(e, client)) return [];
  // Clients that kept an archived channel's subscriptions get unarchiving as its update.
  if (e.__for_unarchiving === true && client.capabilities.archived_channels) return [];
  const defaults = e.__notification_defaults as Record<string, unknown> | undefined;
  if (e.op !== 'add' || !defaults || client.capabilities.notification_settings_null) return [event];
  const subscriptions = (e.subscriptions as Record<string, unknown>[]).map((sub) => {
    const out = { ...sub };
    for (const name of SUBSCRIPTION_NOTIFICATION_SETTINGS) {
      if (out[name] === null && name in defaults) out[name] = defaults[name];
    }
    return out;
  });
  return [{ ...e, subscriptions } as ParleyEvent];
};

const legacySettings: Shaper = (event, client) =>
  client.capabilities.user_settings_object ? [] : [event];

const linkifiers: Shaper = (event, client) =>
  client.capabilities.linkifier_url_template ? [event] : [];

const SHAPERS: Record<string, Shaper> = {
  delete_message: deleteMessage,
  update_message: (event, client, dc) => [
    withTopics(event, ['orig_subject', 'subject', 'topic'], client, dc),
  ],
  user_topic: (event, client, dc) => [withTopics(event, ['topic_name'], client, dc)],
  typing,
  typing_edit_message: typingEditMessage,
  update_message_flags: updateMessageFlags,
  presence,
  user_group: userGroup,
  realm_user: realmUser,
  message,
  stream,
  subscription,
  update_display_settings: legacySettings,
  update_global_notifications: legacySettings,
  realm_linkifiers: linkifiers,
};

/** Whether the queue asked for this type at all. */
export function acceptsType(type: string, client: ClientDescriptor): boolean {
  if (!wantsEventType(client, type)) return false;
  // A client asking for both gets the topic visibility once, in the modern form.
  return !(type === 'muted_topics' && client.eventTypes?.includes('user_topic'));
}

const isHint = (key: string): boolean => key.charCodeAt(0) === 95 && key.charCodeAt(1) === 95;

/**
 * A copy without the hint fields, built field by field: deleting them from a copy would put
 * it in V8's slow dictionary mode for every later read (the answer's JSON, above all).
 */
function copyWithoutHints(event: Fields): Fields {
  const out: Fields = {} as Fields;
  for (const key in event) if (!isHint(key)) out[key] = event[key];
  return out;
}

function withoutHints(event: ParleyEvent): ParleyEvent {
  for (const key in event) if (isHint(key)) return copyWithoutHints(event as Fields) as ParleyEvent;
  return event;
}

/** The events one client receives for one emitted event. */
export function shapeForClient(
  event: ParleyEvent,
  client: ClientDescriptor,
  dc: DeliveryContext,
): ParleyEvent[] {
  if (!acceptsType(event.type, client)) return [];
  // Every shaper returns a list of its own: cleaned in place, since this runs per queue.
  const shaped = (SHAPERS[event.type] ?? sameEvent)(event, client, dc);
  for (let i = 0; i < shaped.length; i++) {
    const own = withoutHints(shaped[i]);
    // Passed on unchanged: every queue offered this event holds the same object.
    if (own === event) markShared(own);
    shaped[i] = own;
  }
  return shaped;
}
