// Sending messages: to a channel topic or a direct-message conversation. The message is
// rendered once; each recipient gets a delivery row with their flags and a message event.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { badRequest, JsonableError } from '../lib/errors.ts';
import { FLAG_BITS, flagsToNames } from '../lib/message-flags.ts';
import {
  checkTopicAllowed,
  defaultReadBySender,
  directKey,
  normalizeContent,
  normalizeTopic,
} from '../lib/messages.ts';
import { presentMessage } from '../lib/presenters/messages.ts';
import { canSeeDeliveryEmail } from '../lib/presenters/users.ts';
import { readRealmSettings } from '../lib/realm-settings.ts';
import { isGuest } from '../lib/roles.ts';
import { unixNow } from '../infra/clock.ts';
import * as channelsStore from '../store/channels.ts';
import type { Q } from '../store/db.ts';
import * as messagesStore from '../store/messages.ts';
import * as mutedUsersStore from '../store/muted-users.ts';
import type { ChannelRow, MessageRow, RealmRow, UserRow } from '../store/schema.ts';
import * as usersStore from '../store/users.ts';
import type { RecipientRow } from '../store/users.ts';
import {
  getChannelAccess,
  groupIdsOf,
  type ChannelAccess,
  inChannelGroup,
  usersWhoCanSeeChannel,
} from './channel-access.ts';
import {
  loadForPresenting,
  newChannelMessageForPresenting,
  presentOptions,
  realmMessageSettings,
  senderPlaceholder,
} from './message-present.ts';
import { renderMessage, renderingFlags, type MessageRendering } from './message-render.ts';
import { enqueueOutgoingWebhooks } from './outgoing-webhooks.ts';
import { hasRealmPermission, isUserInGroup } from './permissions.ts';
import { checkpoint, nextTurn, withTransaction, type Work } from './transaction.ts';
import {
  accessibleUserIds,
  accessibleUserIdsForLimitedGuest,
  guestsSeeEveryone,
} from './user-access.ts';

export interface SendMessageParams {
  type: 'direct' | 'private' | 'stream' | 'channel';
  to: number | string | Array<number | string>;
  content: string;
  topic?: string;
  queueId?: string;
  localId?: string;
  readBySender?: boolean;
  /** The sending client's name (from its User-Agent). */
  client: string;
}

/** Wildcard mentions in bigger conversations need can_mention_many_users_group. */
export const WILDCARD_MENTION_THRESHOLD = 15;

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
  const settings = readRealmSettings(realm.settings);
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
  if (isNew && !(await hasRealmPermission(db, realm, sender, 'direct_message_initiator_group'))) {
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
  if (!big || (await hasRealmPermission(db, realm, sender, 'can_mention_many_users_group'))) return;
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
async function directRecipient(db: Q, realmId: number, userIds: number[]): Promise<number> {
  const key = directKey(userIds);
  const existing = await messagesStore.getDirectRecipient(db, realmId, key);
  if (existing) return existing.id;
  return (await messagesStore.insertDirectRecipient(db, realmId, key, [...new Set(userIds)])).id;
}

interface Destination {
  channel: ChannelRow | null;
  topic: string;
  recipientId: number;
  /** Everyone who gets a row: the channel's subscribers and the sender, or the participants. */
  recipients: RecipientRow[];
  subscriberCount: number;
}

/** A channel message's recipients: the active subscribers and the sender, by id. */
async function channelRecipients(
  db: Q,
  channel: ChannelRow,
  sender: UserRow,
): Promise<Pick<Destination, 'recipients' | 'subscriberCount'>> {
  const recipients = await channelsStore.listSubscriberRecipients(db, channel.id);
  const subscriberCount = recipients.length;
  // The sender's own row is the request's: no need to read it again.
  const at = recipients.findIndex((u) => u.id >= sender.id);
  if (at === -1) recipients.push(sender);
  else if (recipients[at].id !== sender.id) recipients.splice(at, 0, sender);
  return { recipients, subscriberCount };
}

/** Where a message goes and who receives it, with the permission checks for that. */
async function resolveDestination(
  db: Q,
  actor: Actor,
  params: SendMessageParams,
  settings: ReturnType<typeof realmMessageSettings>,
): Promise<Destination> {
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
  const recipientId = existing?.id ?? (await directRecipient(db, realm.id, ids));
  return { channel: null, topic: '', recipientId, recipients: participants, subscriberCount: 0 };
}

export async function sendMessage(
  ctx: AppContext,
  actor: Actor,
  params: SendMessageParams,
): Promise<{ id: number }> {
  const { realm } = actor;
  const toChannel = params.type === 'stream' || params.type === 'channel';
  if (toChannel && params.topic === undefined) throw badRequest('Missing topic');
  const content = normalizeContent(params.content);
  const settings = realmMessageSettings(realm);
  return withTransaction(ctx, realm.id, async (work) => {
    const destination = await resolveDestination(work.db, actor, params, settings);
    return deliverMessage(ctx, work, actor, destination, content, params, false);
  });
}

/**
 * A message the server itself posts (notification bots) inside the caller's transaction.
 * Like the reference server's internal_send, it bypasses the channel's posting permissions,
 * the sender's channel access and the wildcard-mention policy: the action that calls it has
 * already decided the post is due.
 */
export async function sendInternalChannelMessage(
  ctx: AppContext,
  work: Work,
  realm: RealmRow,
  sender: UserRow,
  channel: ChannelRow,
  topic: string,
  content: string,
): Promise<{ id: number }> {
  const settings = realmMessageSettings(realm);
  const destination: Destination = {
    channel,
    topic: normalizeTopic(topic, settings.emptyTopicName),
    recipientId: channel.recipient_id!,
    ...(await channelRecipients(work.db, channel, sender)),
  };
  return deliverMessage(
    ctx,
    work,
    { realm, user: sender },
    destination,
    normalizeContent(content),
    { client: 'Internal' },
    true,
  );
}

/**
 * A direct message the server itself posts (bot replies, notices to a bot's owner) inside
 * the caller's transaction, without the direct-message permission checks.
 */
export async function sendInternalDirectMessage(
  ctx: AppContext,
  work: Work,
  realm: RealmRow,
  sender: UserRow,
  recipients: UserRow[],
  content: string,
): Promise<{ id: number }> {
  const participants = [sender, ...recipients.filter((u) => u.id !== sender.id)];
  const recipientId = await directRecipient(
    work.db,
    realm.id,
    participants.map((u) => u.id),
  );
  return deliverMessage(
    ctx,
    work,
    { realm, user: sender },
    { channel: null, topic: '', recipientId, recipients: participants, subscriberCount: 0 },
    normalizeContent(content),
    { client: 'Internal' },
    true,
  );
}

/**
 * Delivery rows written between two turns of the event loop in a large send. 2,000 took
 * 3-10 ms a chunk on a 2-core machine; with a young-generation collection in the same turn
 * that came near the 20 ms the fan-out benchmark allows a stall (docs/performance.md).
 */
const ROWS_PER_TURN = 1000;

/** Render, store and announce a message to a resolved destination. */
async function deliverMessage(
  ctx: AppContext,
  work: Work,
  actor: Actor,
  destination: Destination,
  content: string,
  params: Pick<SendMessageParams, 'client' | 'readBySender' | 'queueId' | 'localId'>,
  internal: boolean,
): Promise<{ id: number }> {
  const { realm, user: sender } = actor;
  const db = work.db;
  const { channel, topic, recipientId, recipients, subscriberCount } = destination;
  // A large send lets other requests in between its steps (reading the recipients, writing
  // their rows, committing) rather than holding the process for all of them at once.
  const large = recipients.length > ROWS_PER_TURN;
  if (large) await nextTurn();
  const rendering = await renderMessage(ctx, db, realm, sender, content, {
    checkGroupMentions: !internal,
  });
  const participants = new Set(
    channel && rendering.rendered.topicWildcard
      ? [...(await messagesStore.listTopicParticipants(db, channel.id, topic)), sender.id]
      : [sender.id],
  );
  if (channel && !internal) {
    await checkWildcardMentions(db, realm, sender, rendering, subscriberCount, participants.size);
  }
  const firstBefore = channel ? await firstMessageIds(db, [channel]) : null;
  const r = rendering.rendered;
  const row = await messagesStore.insertMessage(db, {
    realm_id: realm.id,
    recipient_id: recipientId,
    channel_id: channel?.id ?? null,
    sender_id: sender.id,
    topic,
    content,
    rendered_content: r.html,
    date_sent: unixNow(ctx.clock),
    sending_client: params.client,
    is_me_message: r.isMeMessage ? 1 : 0,
    last_edit_time: null,
    last_moved_time: null,
    edit_history: null,
    has_link: r.hasLink ? 1 : 0,
    has_image: r.hasImage ? 1 : 0,
    has_attachment: r.hasAttachment ? 1 : 0,
  });
  checkpoint('message-inserted');
  const readBySender = params.readBySender ?? defaultReadBySender(params.client);
  const alertWords = channel
    ? await messagesStore.listChannelAlertWords(db, channel.id, sender.id)
    : await messagesStore.listAlertWords(
        db,
        recipients.map((u) => u.id),
      );
  // A message from someone the recipient muted arrives read, as muting marked the older ones.
  const muters = await mutedUsersStore.listMuterIds(db, sender.id);
  const flags = new Map<number, number>();
  for (const u of recipients) {
    let bits = renderingFlags(rendering, u.id, alertWords.get(u.id), participants.has(u.id));
    if (u.id === sender.id && readBySender) bits |= FLAG_BITS.read;
    if (muters.has(u.id)) bits |= FLAG_BITS.read;
    flags.set(u.id, bits);
  }
  const rows = [...flags].map(([user_id, bits]) => ({ user_id, message_id: row.id, flags: bits }));
  for (let at = 0; at < rows.length; at += ROWS_PER_TURN) {
    // Rendering and the flags came before the first chunk: a turn between them as well.
    if (large) await nextTurn();
    await messagesStore.insertUserMessages(db, rows.slice(at, at + ROWS_PER_TURN));
  }
  await enqueueOutgoingWebhooks(ctx, db, realm, sender, row, recipients, r.mentionedUserIds);
  await emitMessageEvent(ctx, work, realm, row, channel, sender, recipients, flags, {
    queueId: params.queueId,
    localId: params.localId,
  });
  // A new message can only become its channel's first when the channel had none.
  if (channel && firstBefore!.get(channel.id) === null) {
    await announceFirstMessageIds(work, realm, [channel], firstBefore!);
  }
  if (large) await nextTurn();
  return { id: row.id };
}

/**
 * The message event: one canonical payload (HTML in content, the Markdown source in
 * __raw_content) that shaping turns into each client's form; per recipient their flags,
 * whether client_gravatar may null the avatar, a placeholder sender for limited guests, and
 * for the sender's sending queue the local id to echo.
 */
async function emitMessageEvent(
  ctx: AppContext,
  work: Work,
  realm: RealmRow,
  row: MessageRow,
  channel: ChannelRow | null,
  author: UserRow,
  recipients: RecipientRow[],
  flags: Map<number, number>,
  echo: { queueId?: string; localId?: string },
): Promise<void> {
  // A channel message is presented from the rows the send holds (the sender as the request
  // authenticated it); a direct message's participants are loaded with it.
  const loaded = channel
    ? newChannelMessageForPresenting(row, author, channel.name)
    : (await loadForPresenting(work.db, realm.id, [row]))[0];
  const canonical = presentMessage(
    loaded,
    presentOptions(realm, null, {
      applyMarkdown: true,
      clientGravatar: false,
      allowEmptyTopicName: true,
    }),
  );
  const message = { ...canonical, __raw_content: row.content };
  const sender = loaded.sender;
  const perUser: Record<number, Record<string, unknown>> = {};
  // The answer depends only on the viewer's role (or being the sender), and each call reads
  // the sender's settings again: once per role, not once per recipient of a large channel.
  const seesEmail = new Map<number, boolean>();
  const canSeeSenderEmail = (u: RecipientRow): boolean => {
    const key = u.id === sender.id ? -1 : u.role;
    let sees = seesEmail.get(key);
    if (sees === undefined) seesEmail.set(key, (sees = canSeeDeliveryEmail(u, sender)));
    return sees;
  };
  // Recipients with the same flags and avatar form share one object (never changed once
  // made): a send to a channel of 10,000 makes a handful of them, not 10,000 (and as many
  // flag lists) for the collector to copy while the send is delivered.
  const shared = new Map<number, Record<string, unknown>>();
  for (const u of recipients) {
    const bits = flags.get(u.id) ?? 0;
    const avatarNull = sender.avatar_source === 'G' && canSeeSenderEmail(u);
    const key = avatarNull ? -1 - bits : bits;
    let extra = shared.get(key);
    if (!extra) {
      extra = { flags: flagsToNames(bits) };
      if (avatarNull) extra.__gravatar_avatar_null = true;
      shared.set(key, extra);
    }
    const echoed = u.id === sender.id && echo.queueId !== undefined && echo.localId !== undefined;
    perUser[u.id] = echoed
      ? { ...extra, __local_echo: { queueId: echo.queueId, localId: echo.localId } }
      : extra;
  }
  await hideInaccessibleSender(ctx, work.db, realm, sender, recipients, message, perUser);
  work.emitOnCommit(
    { type: 'message', message, flags: [] },
    recipients.map((u) => u.id),
    {
      perUser,
      ...(channel
        ? { realmWide: { realmId: realm.id, publicChannel: channel.invite_only === 0 } }
        : {}),
    },
  );
}

/** Limited guests who may not access the sender get the message with a placeholder sender. */
async function hideInaccessibleSender(
  ctx: AppContext,
  db: Q,
  realm: RealmRow,
  sender: UserRow,
  recipients: RecipientRow[],
  message: Record<string, unknown>,
  perUser: Record<number, Record<string, unknown>>,
): Promise<void> {
  if (sender.is_bot === 1) return;
  const guests = recipients.filter(isGuest);
  if (guests.length === 0 || (await guestsSeeEveryone(db, realm))) return;
  for (const u of guests) {
    if ((await accessibleUserIdsForLimitedGuest(db, u)).has(sender.id)) continue;
    const p = senderPlaceholder(ctx, realm, sender.id);
    // A new object: recipients share their per-user fields (emitMessageEvent).
    const { __gravatar_avatar_null: _placeholderHasItsOwn, ...own } = perUser[u.id];
    perUser[u.id] = {
      ...own,
      message: {
        ...message,
        sender_full_name: p.full_name,
        sender_email: p.email,
        avatar_url: p.avatar_url,
      },
    };
  }
}

/** The oldest message id of each channel, before a change that may move it. */
export async function firstMessageIds(
  db: Q,
  channels: ChannelRow[],
): Promise<Map<number, number | null>> {
  const out = new Map<number, number | null>();
  for (const c of channels) out.set(c.id, await messagesStore.minChannelMessageId(db, c.id));
  return out;
}

/**
 * Channels whose oldest message changed (a first message, a deletion, a move) tell everyone
 * who can see them: first_message_id is part of the channel object.
 */
export async function announceFirstMessageIds(
  work: Work,
  realm: RealmRow,
  channels: ChannelRow[],
  before: Map<number, number | null>,
): Promise<void> {
  for (const c of channels) {
    const now = await messagesStore.minChannelMessageId(work.db, c.id);
    if (now === before.get(c.id)) continue;
    work.emitOnCommit(
      {
        type: 'stream',
        op: 'update',
        stream_id: c.id,
        name: c.name,
        property: 'first_message_id',
        value: now,
      },
      await usersWhoCanSeeChannel(work.db, realm, c),
    );
  }
}
