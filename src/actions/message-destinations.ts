// Where a message goes and who receives it: the channel or the direct-message conversation,
// the sender's permission to post there, and the wildcard-mention policy. Sending itself:
// messages.ts.
import type { Actor } from '../lib/actor.ts';
import { badRequest, JsonableError } from '../lib/errors.ts';
import { checkTopicAllowed, directKey, normalizeTopic } from '../lib/messages.ts';
import { canSeeDeliveryEmail } from '../lib/presenters/users.ts';
import * as channelsStore from '../store/channels.ts';
import type { Q } from '../store/db.ts';
import * as messagesStore from '../store/messages.ts';
import type { ChannelRow, RealmRow, UserRow } from '../store/schema.ts';
import * as usersStore from '../store/users.ts';
import type { RecipientRow } from '../store/users.ts';
import {
  getChannelAccess,
  groupIdsOf,
  type ChannelAccess,
  inChannelGroup,
} from './channel-access.ts';
import type { realmMessageSettings } from './message-present.ts';
import type { MessageRendering } from './message-render.ts';
import type { SendMessageParams } from './messages.ts';
import { accessRealmSettings, hasRealmPermission, isUserInGroup } from './permissions.ts';
import { accessibleUserIds } from './user-access.ts';

/** Wildcard mentions in bigger conversations need can_mention_many_users_group. */
const WILDCARD_MENTION_THRESHOLD = 15;

const notAuthorizedToSend = (name: string): JsonableError =>
  badRequest(`Not authorized to send to channel '${name}'`);

/** What the checks of a channel send learn about the sender and, for a bot, its owner. */
interface PosterAccess {
  user: UserRow;
  groupIds: Set<number>;
  access: ChannelAccess;
}

/**
 * The sender and, for a bot, its active owner, with their groups and access to the channel:
 * read once and shared by the lookup and the posting checks.
 */
async function readPosterAccess(
  db: Q,
  sender: UserRow,
  channel: ChannelRow,
): Promise<PosterAccess[]> {
  const owner = await botOwner(db, sender);
  const out: PosterAccess[] = [];
  for (const user of [sender, ...(owner ? [owner] : [])]) {
    const groupIds = await groupIdsOf(db, user);
    out.push({ user, groupIds, access: await getChannelAccess(db, user, channel, groupIds) });
  }
  return out;
}

/** The channel a message is addressed to, by id or name; unknown and invisible alike. */
async function resolveChannel(
  db: Q,
  actor: Actor,
  to: SendMessageParams['to'],
): Promise<{ channel: ChannelRow; posters: PosterAccess[] }> {
  let target = to;
  if (Array.isArray(target)) {
    if (target.length !== 1) throw badRequest('Cannot send to multiple channels');
    target = target[0];
  }
  const byId = typeof target === 'number';
  const channel = byId
    ? await channelsStore.getChannel(db, actor.realm.id, target as number)
    : await channelsStore.getChannelByName(db, actor.realm.id, String(target));
  const notFound = (): JsonableError =>
    byId
      ? badRequest('Invalid channel ID')
      : new JsonableError(
          `Channel '${String(target)}' does not exist`,
          'STREAM_DOES_NOT_EXIST',
          400,
          {
            stream: String(target),
          },
        );
  if (!channel) throw notFound();
  const posters = await readPosterAccess(db, actor.user, channel);
  if (!posters.some((p) => p.access.metadata)) throw notFound();
  return { channel, posters };
}

async function botOwner(db: Q, user: UserRow): Promise<UserRow | null> {
  if (user.is_bot !== 1 || user.bot_owner_id === null) return null;
  const owner = await usersStore.getUserById(db, user.realm_id, user.bot_owner_id);
  return owner && owner.is_active === 1 ? owner : null;
}

/**
 * Whether the sender may post: the channel's can_send_message_group must hold them, the
 * channel must not be archived, and they must be able to read it. Bots may post where their
 * owner may.
 */
export async function checkCanPost(
  db: Q,
  sender: UserRow,
  channel: ChannelRow,
  known?: PosterAccess[],
): Promise<void> {
  const posters = known ?? (await readPosterAccess(db, sender, channel));
  if (!posters.some((p) => inChannelGroup(channel, 'can_send_message_group', p.groupIds)))
    throw badRequest('You do not have permission to post in this channel.');
  if (channel.is_archived === 1) throw notAuthorizedToSend(channel.name);
  if (!posters.some((p) => p.access.content)) throw notAuthorizedToSend(channel.name);
}

/** Direct-message recipients by ids or API emails (a comma-separated string is legacy). */
async function resolveDirectRecipients(
  db: Q,
  actor: Actor,
  to: SendMessageParams['to'],
): Promise<UserRow[]> {
  const list =
    typeof to === 'string'
      ? to
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '')
      : Array.isArray(to)
        ? to
        : [to];
  if (list.length === 0) throw badRequest('Message must have recipients');
  const ids = list.filter((x): x is number => typeof x === 'number');
  if (ids.length > 0 && ids.length < list.length) {
    throw badRequest('Recipient lists may contain emails or user IDs, but not both.');
  }
  const out: UserRow[] = [];
  if (ids.length > 0) {
    const found = await usersStore.listUsersByIds(db, actor.realm.id, [...new Set(ids)]);
    const missing = ids.find((id) => !found.some((u) => u.id === id));
    if (missing !== undefined) throw badRequest(`Invalid user ID ${missing}`);
    out.push(...found);
  } else {
    for (const email of new Set(list as string[])) {
      let user = await usersStore.getUserByApiEmail(db, actor.realm.id, email);
      if (!user) {
        const real = await usersStore.getUserByDeliveryEmail(db, actor.realm.id, email);
        if (real && canSeeDeliveryEmail(actor.user, real)) user = real;
      }
      if (!user) throw badRequest(`Invalid email '${email}'`);
      if (!out.some((u) => u.id === user.id)) out.push(user);
    }
  }
  for (const u of out) {
    if (u.is_active !== 1) throw badRequest(`'${u.email}' is no longer using Parley.`);
  }
  return out;
}

/** Direct-message permissions: who may be messaged, and who may start a conversation. */
async function checkCanSendDirect(
  db: Q,
  realm: RealmRow,
  sender: UserRow,
  recipients: UserRow[],
  recipientId: number | null,
): Promise<void> {
  const others = recipients.filter((u) => u.id !== sender.id);
  const accessible = await accessibleUserIds(db, realm, sender);
  if (accessible && others.some((u) => u.is_bot === 0 && !accessible.has(u.id))) {
    throw badRequest('You do not have permission to access some of the recipients.');
  }
  // Conversations with bots only, and with oneself, are always allowed.
  if (others.every((u) => u.is_bot === 1)) return;
  const settings = await accessRealmSettings(db, realm.id);
  const permitted = settings.direct_message_permission_group as number;
  let anyPermitted = false;
  for (const u of [sender, ...others]) {
    if (u.is_bot === 0 && (await isUserInGroup(db, u, permitted))) anyPermitted = true;
  }
  if (!anyPermitted) {
    throw badRequest('You do not have permission to send direct messages to this recipient.');
  }
  const isNew =
    recipientId === null || !(await messagesStore.conversationHasMessages(db, recipientId));
  if (isNew && !(await hasRealmPermission(db, sender, 'direct_message_initiator_group'))) {
    throw badRequest('You do not have permission to initiate direct message conversations.');
  }
}

/** Wildcard mentions reaching many people need can_mention_many_users_group. */
export async function checkWildcardMentions(
  db: Q,
  realm: RealmRow,
  sender: UserRow,
  r: MessageRendering,
  subscriberCount: number,
  topicParticipantCount: number,
): Promise<void> {
  const big =
    (r.rendered.streamWildcard && subscriberCount > WILDCARD_MENTION_THRESHOLD) ||
    (r.rendered.topicWildcard && topicParticipantCount > WILDCARD_MENTION_THRESHOLD);
  if (!big || (await hasRealmPermission(db, sender, 'can_mention_many_users_group'))) return;
  if (r.rendered.streamWildcard && subscriberCount > WILDCARD_MENTION_THRESHOLD) {
    throw new JsonableError(
      'You do not have permission to use channel wildcard mentions in this channel.',
      'STREAM_WILDCARD_MENTION_NOT_ALLOWED',
    );
  }
  throw new JsonableError(
    'You do not have permission to use topic wildcard mentions in this topic.',
    'TOPIC_WILDCARD_MENTION_NOT_ALLOWED',
  );
}

/** The direct-message conversation of these participants, created on first use. */
export async function directRecipient(db: Q, realmId: number, userIds: number[]): Promise<number> {
  const key = directKey(userIds);
  const existing = await messagesStore.getDirectRecipient(db, realmId, key);
  if (existing) return existing.id;
  return (await messagesStore.insertDirectRecipient(db, realmId, key, [...new Set(userIds)])).id;
}

export interface Destination {
  channel: ChannelRow | null;
  topic: string;
  recipientId: number;
  /** Everyone who gets a row: the channel's subscribers and the sender, or the participants. */
  recipients: readonly RecipientRow[];
  subscriberCount: number;
}

/** A channel message's recipients: the active subscribers and the sender, by id. */
export async function channelRecipients(
  db: Q,
  channel: ChannelRow,
  sender: UserRow,
): Promise<Pick<Destination, 'recipients' | 'subscriberCount'>> {
  const subscribers = await channelsStore.listSubscriberRecipients(db, channel.id);
  const subscriberCount = subscribers.length;
  // The sender's own row is the request's: no need to read it again. The subscribers' list
  // is shared (a cached read), so the sender goes into a copy.
  const at = subscribers.findIndex((u) => u.id >= sender.id);
  if (at !== -1 && subscribers[at].id === sender.id)
    return { recipients: subscribers, subscriberCount };
  const recipients =
    at === -1
      ? [...subscribers, sender]
      : [...subscribers.slice(0, at), sender, ...subscribers.slice(at)];
  return { recipients, subscriberCount };
}

/** Where a message goes and who receives it, with the permission checks for that. */
export async function resolveDestination(
  db: Q,
  actor: Actor,
  params: SendMessageParams,
  settings: ReturnType<typeof realmMessageSettings>,
): Promise<Destination> {
  return (await resolveDestinationIn(db, actor, params, settings, true))!;
}

/**
 * The same, with reads only: null for a direct message whose conversation does not exist
 * yet (resolveDestination creates it, in the caller's transaction).
 */
export function resolveDestinationByReading(
  db: Q,
  actor: Actor,
  params: SendMessageParams,
  settings: ReturnType<typeof realmMessageSettings>,
): Promise<Destination | null> {
  return resolveDestinationIn(db, actor, params, settings, false);
}

async function resolveDestinationIn(
  db: Q,
  actor: Actor,
  params: SendMessageParams,
  settings: ReturnType<typeof realmMessageSettings>,
  mayCreateConversation: boolean,
): Promise<Destination | null> {
  const { realm, user: sender } = actor;
  if (params.type === 'stream' || params.type === 'channel') {
    const { channel, posters } = await resolveChannel(db, actor, params.to);
    const topic = normalizeTopic(params.topic ?? '', settings.emptyTopicName);
    await checkCanPost(db, sender, channel, posters);
    checkTopicAllowed(topic, channel.topics_policy, settings.topicsPolicy, settings.emptyTopicName);
    return {
      channel,
      topic,
      recipientId: channel.recipient_id!,
      ...(await channelRecipients(db, channel, sender)),
    };
  }
  const others = await resolveDirectRecipients(db, actor, params.to);
  const participants = [sender, ...others.filter((u) => u.id !== sender.id)];
  const ids = participants.map((u) => u.id);
  const existing = await messagesStore.getDirectRecipient(db, realm.id, directKey(ids));
  await checkCanSendDirect(db, realm, sender, others, existing?.id ?? null);
  if (!existing && !mayCreateConversation) return null;
  const recipientId = existing?.id ?? (await directRecipient(db, realm.id, ids));
  return { channel: null, topic: '', recipientId, recipients: participants, subscriberCount: 0 };
}
