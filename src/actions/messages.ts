// Sending messages: to a channel topic or a direct-message conversation. The message is
// rendered once; each recipient gets a delivery row with their flags and a message event.
// Where it goes, who receives it and whether the sender may: message-destinations.ts; the
// event each recipient gets: message-event.ts.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { badRequest, JsonableError } from '../lib/errors.ts';
import { FLAG_BITS } from '../lib/message-flags.ts';
import { defaultReadBySender, normalizeContent, normalizeTopic } from '../lib/messages.ts';
import { unixNow } from '../infra/clock.ts';
import { knownAccountsVersion, type Db, type Q } from '../store/db.ts';
import * as messagesStore from '../store/messages.ts';
import * as mutedUsersStore from '../store/muted-users.ts';
import { lockRealmForSends } from '../store/realms.ts';
import type { ChannelRow, MessageRow, RealmRow, UserRow } from '../store/schema.ts';
import type { RecipientRow } from '../store/users.ts';
import { usersWhoCanSeeChannel } from './channel-access.ts';
import {
  channelRecipients,
  checkWildcardMentions,
  directRecipient,
  resolveDestination,
  resolveDestinationByReading,
  type Destination,
} from './message-destinations.ts';
import { realmMessageSettings } from './message-present.ts';
import { renderMessage, renderingFlags, type MessageRendering } from './message-render.ts';
import { emitMessageEvent } from './message-event.ts';
import { enqueueOutgoingWebhooks } from './outgoing-webhooks.ts';
import { accessCurrentActor } from './permissions.ts';
import { BatchQueue, type Outcome } from './group-commit.ts';
import {
  checkpoint,
  nextTurn,
  withSharedTransaction,
  withTransaction,
  type SharedCommitHooks,
  type Work,
} from './transaction.ts';

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

export async function sendMessage(
  ctx: AppContext,
  actor: Actor,
  params: SendMessageParams,
): Promise<{ id: number }> {
  const { realm } = actor;
  const toChannel = params.type === 'stream' || params.type === 'channel';
  if (toChannel && params.topic === undefined) throw badRequest('Missing topic');
  const content = normalizeContent(params.content);
  if (ctx.store.dialect === 'postgres') {
    const send = await planBatchedSend(ctx, actor, params, content);
    if (send) return sendBatchOf(ctx, realm.id).add(send);
  }
  return withTransaction(ctx, realm.id, async (work) => {
    const { me, destination } = await readSend(work.db, actor, params);
    return deliverMessage(ctx, work, me, destination, content, params, false);
  });
}

/**
 * The sender as they are now (one deactivated, or made a guest, meanwhile sends as such) and
 * where the message goes, creating a direct conversation that does not exist yet.
 */
async function readSend(
  db: Q,
  actor: Actor,
  params: SendMessageParams,
): Promise<{ me: Actor; destination: Destination }> {
  const me = await accessCurrentActor(db, actor);
  const settings = realmMessageSettings(me.realm);
  return { me, destination: await resolveDestination(db, me, params, settings) };
}

/** Points where a test may run an action inside a send, to force an interleaving. */
export type SendHookPoint = 'planned';
type SendHook = (point: SendHookPoint) => Promise<void>;
let sendHook: SendHook | null = null;
export function setSendHook(hook: SendHook | null): void {
  sendHook = hook;
}

/** A send planned before its batch (PostgreSQL), to be checked again inside it. */
interface BatchedSend {
  plan: PlannedMessage;
  /** The accounts counter (store/db.ts) as read before the plan's reads; null if unknown. */
  readAt: number | null;
  /** The plan made again from reads inside the batch's transaction. */
  planAgain(trx: Q): Promise<PlannedMessage>;
}

/**
 * PostgreSQL: plan a send outside any transaction, so that its batch holds its realm's turn
 * only to write (writeTogether checks the plan is still current). Null for a send that
 * starts a conversation or goes to more than ROWS_PER_TURN recipients: those read and write
 * in a transaction of their own.
 */
async function planBatchedSend(
  ctx: AppContext,
  actor: Actor,
  params: SendMessageParams,
  content: string,
): Promise<BatchedSend | null> {
  const readAt = knownAccountsVersion(ctx.db);
  const me = await accessCurrentActor(ctx.db, actor);
  const settings = realmMessageSettings(me.realm);
  const destination = await resolveDestinationByReading(ctx.db, me, params, settings);
  if (!destination || destination.recipients.length > ROWS_PER_TURN) return null;
  const plan = await planMessage(ctx, ctx.db, me, destination, content, params, false);
  await sendHook?.('planned');
  return {
    plan,
    readAt,
    async planAgain(trx) {
      const again = await readSend(trx, actor, params);
      return planMessage(ctx, trx, again.me, again.destination, content, params, false);
    },
  };
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
 * that came near the 20 ms the fan-out benchmark allows a stall (docs/performance-history.md).
 */
const ROWS_PER_TURN = 1000;

/** A send worked out from reads alone: the message to store and who gets it with which flags. */
interface PlannedMessage {
  actor: Actor;
  destination: Destination;
  message: messagesStore.NewMessage;
  mentionedUserIds: readonly number[];
  flags: Map<number, number>;
  echo: { queueId?: string; localId?: string };
}

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
  // A large send lets other requests in between its steps (reading the recipients, writing
  // their rows, committing) rather than holding the process for all of them at once.
  const large = destination.recipients.length > ROWS_PER_TURN;
  if (large) await nextTurn();
  const plan = await planMessage(ctx, work.db, actor, destination, content, params, internal);
  const { ids } = await storeMessages(ctx, work.db, [work], [plan], large);
  if (large) await nextTurn();
  return { id: ids[0] };
}

/**
 * Store planned messages and announce them, each with its own Work, in the transaction db:
 * the messages in one statement, then their delivery rows, their events, and the first
 * message of a channel that had none. Whether one did is returned as well.
 */
async function storeMessages(
  ctx: AppContext,
  db: Q,
  works: Work[],
  plans: PlannedMessage[],
  large: boolean,
): Promise<{ ids: number[]; givesFirstMessage: boolean }> {
  const channels = [
    ...new Map(
      plans.flatMap(({ destination: { channel } }) => (channel ? [[channel.id, channel]] : [])),
    ).values(),
  ];
  const firstBefore = await firstMessageIds(db, channels);
  const rows = await messagesStore.insertMessages(
    db,
    plans.map((p) => p.message),
  );
  for (let i = 0; i < rows.length; i++) checkpoint('message-inserted');
  const userRows: messagesStore.UserMessageRow[] = [];
  for (let i = 0; i < plans.length; i++) addUserMessageRows(userRows, plans[i], rows[i].id);
  for (let at = 0; at < userRows.length; at += ROWS_PER_TURN) {
    // Rendering and the flags came before the first chunk: a turn between them as well.
    if (large) await nextTurn();
    await messagesStore.insertUserMessages(db, userRows.slice(at, at + ROWS_PER_TURN));
  }
  for (let i = 0; i < plans.length; i++) await announceMessage(ctx, works[i], plans[i], rows[i]);
  // A new message can only become its channel's first when the channel had none.
  let givesFirstMessage = false;
  for (const channel of channels) {
    if (firstBefore.get(channel.id) !== null) continue;
    givesFirstMessage = true;
    // Announced with the first of the sends to the channel, whose message it is.
    const first = plans.findIndex((p) => p.destination.channel?.id === channel.id);
    await announceFirstMessageIds(works[first], plans[first].actor.realm, [channel], firstBefore);
  }
  return { ids: rows.map((r) => r.id), givesFirstMessage };
}

/**
 * Everything a send decides before it writes: the rendering (and the mention checks that
 * may refuse it), each recipient's flags and the message row. Reads only.
 */
async function planMessage(
  ctx: AppContext,
  db: Q,
  actor: Actor,
  destination: Destination,
  content: string,
  params: Pick<SendMessageParams, 'client' | 'readBySender' | 'queueId' | 'localId'>,
  internal: boolean,
): Promise<PlannedMessage> {
  const { realm, user: sender } = actor;
  const { channel, topic, recipientId, recipients, subscriberCount } = destination;
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
  const r = rendering.rendered;
  const readBySender = params.readBySender ?? defaultReadBySender(params.client);
  const alertWords = channel
    ? await messagesStore.listChannelAlertWords(db, channel.id, sender.id)
    : await messagesStore.listAlertWords(
        db,
        recipients.map((u) => u.id),
      );
  // A message from someone the recipient muted arrives read, as muting marked the older ones.
  const muters = await mutedUsersStore.listMuterIds(db, sender.id);
  const flags = recipientFlags(recipients, rendering, alertWords, participants, muters, {
    senderId: sender.id,
    readBySender,
  });
  return {
    actor,
    destination,
    message: {
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
    },
    mentionedUserIds: r.mentionedUserIds,
    flags,
    echo: { queueId: params.queueId, localId: params.localId },
  };
}

/**
 * Each recipient's flag bits. A loop of its own, out of the async planMessage: V8 compiles a
 * function when its loops make it hot, and planMessage, with its awaits, took TurboFan 12-16 ms
 * on a background thread, on a server's one core, in the first fan-outs after a start
 * (docs/performance.md, item 4, session 54). This loop compiles in a fraction of that.
 */
function recipientFlags(
  recipients: readonly RecipientRow[],
  rendering: MessageRendering,
  alertWords: Map<number, string[]>,
  participants: Set<number>,
  muters: Set<number>,
  sending: { senderId: number; readBySender: boolean },
): Map<number, number> {
  const flags = new Map<number, number>();
  for (const u of recipients) {
    let bits = renderingFlags(rendering, u.id, alertWords.get(u.id), participants.has(u.id));
    if (u.id === sending.senderId && sending.readBySender) bits |= FLAG_BITS.read;
    if (muters.has(u.id)) bits |= FLAG_BITS.read;
    flags.set(u.id, bits);
  }
  return flags;
}

/**
 * The planned message's delivery rows, once it has its id, added to rows. Made from the flags
 * map without its entries as arrays: a send to 10,000 made 10,000 of them, and their iterator
 * results, about 1.5 MB more for a collection inside the send to copy
 * (docs/performance-history.md, item 4). Pushed, not flatMap'd: V8's flatMap read each row of
 * the inner list through its generic property lookup, 85 µs for a send to 1,000 against 11
 * for the loop (docs/performance.md, session 53).
 */
function addUserMessageRows(
  rows: messagesStore.UserMessageRow[],
  plan: PlannedMessage,
  messageId: number,
): void {
  plan.flags.forEach((flags, user_id) => rows.push({ user_id, message_id: messageId, flags }));
}

/** After the stored message and its rows: the outgoing webhooks it triggers and its event. */
async function announceMessage(
  ctx: AppContext,
  work: Work,
  plan: PlannedMessage,
  row: MessageRow,
): Promise<void> {
  const { realm, user: sender } = plan.actor;
  const { channel, recipients } = plan.destination;
  await enqueueOutgoingWebhooks(
    ctx,
    work.db,
    realm,
    sender,
    row,
    recipients,
    plan.mentionedUserIds,
  );
  await emitMessageEvent(ctx, work, realm, row, channel, sender, recipients, plan.flags, plan.echo);
}

/**
 * Sends on PostgreSQL that arrive while a batch of the same organization is written are
 * written together in the next: their messages in one INSERT, their delivery rows in
 * another, one transaction and one commit for all. A transaction of its own for each send
 * cost PostgreSQL about 1.2 ms of CPU a send, where the same rows written a hundred messages
 * a transaction cost it 0.15 ms (docs/performance.md, item 1).
 *
 * The next batch starts while the previous one commits: its messages are inserted after the
 * previous batch's, so their ids are larger, and its commit waits for the previous one's on
 * the commit sequence's row lock, so the organization's commits keep the order of its
 * message ids; its events are published after the previous batch's. A batch that gives a
 * channel its first message commits before the next starts, since the next one's reading
 * of that channel's first message would miss it.
 */
const SENDS_PER_BATCH = 100;

interface RealmSends {
  queue: BatchQueue<BatchedSend, { id: number }>;
  /** Settles after the last batch's events are published. */
  published: Promise<unknown>;
}

const sendsByDb = new WeakMap<Db, Map<number, RealmSends>>();

function sendBatchOf(ctx: AppContext, realmId: number): BatchQueue<BatchedSend, { id: number }> {
  let byRealm = sendsByDb.get(ctx.db);
  if (!byRealm) sendsByDb.set(ctx.db, (byRealm = new Map()));
  let sends = byRealm.get(realmId);
  if (!sends) {
    const made: RealmSends = {
      queue: new BatchQueue(
        (batch, startNext) => writeSends(ctx, realmId, made, batch, startNext),
        SENDS_PER_BATCH,
      ),
      published: Promise.resolve(),
    };
    byRealm.set(realmId, (sends = made));
  }
  return sends.queue;
}

/**
 * Write a batch of planned sends in one transaction. When it fails, each send is written
 * again in a transaction of its own, so that one send's failure (a row the database
 * refuses) is its own and not its batch's.
 */
async function writeSends(
  ctx: AppContext,
  realmId: number,
  sends: RealmSends,
  batch: BatchedSend[],
  startNext: () => void,
): Promise<Array<Outcome<{ id: number }>>> {
  const publishAfter = sends.published;
  let published!: () => void;
  sends.published = new Promise<void>((resolve) => (published = resolve));
  try {
    return await writeTogether(ctx, realmId, batch, { publishAfter }, startNext);
  } catch (err) {
    if (batch.length === 1) return [{ ok: false, err }];
    const outcomes: Array<Outcome<{ id: number }>> = [];
    for (const send of batch) {
      await writeTogether(ctx, realmId, [send], { publishAfter }).then(
        ([outcome]) => outcomes.push(outcome),
        (e: unknown) => outcomes.push({ ok: false, err: e }),
      );
    }
    return outcomes;
  } finally {
    published();
  }
}

/**
 * Write planned sends in one transaction, in their realm's turn for sends
 * (lockRealmForSends): a send whose plan was read under another accounts counter (a role,
 * deactivation, archive, subscription or setting changed since, in this realm or another)
 * is planned again inside it, and refused there if it may no longer be sent.
 */
async function writeTogether(
  ctx: AppContext,
  realmId: number,
  batch: BatchedSend[],
  hooks: SharedCommitHooks,
  startNext?: () => void,
): Promise<Array<Outcome<{ id: number }>>> {
  let givesFirstMessage = false;
  return withSharedTransaction(
    ctx,
    realmId,
    batch.length,
    async (trx, works) => {
      const now = await lockRealmForSends(trx, realmId);
      const outcomes: Array<Outcome<{ id: number }>> = [];
      const kept: Array<{ at: number; plan: PlannedMessage; work: Work }> = [];
      for (const [at, send] of batch.entries()) {
        if (send.readAt !== null && send.readAt === now) {
          kept.push({ at, plan: send.plan, work: works[at] });
          continue;
        }
        try {
          kept.push({ at, plan: await send.planAgain(trx), work: works[at] });
        } catch (err) {
          // A refusal from the checks; a failed statement would have aborted the transaction.
          if (!(err instanceof JsonableError)) throw err;
          outcomes[at] = { ok: false, err };
        }
      }
      if (kept.length === 0) return outcomes;
      const stored = await storeMessages(
        ctx,
        trx,
        kept.map((k) => k.work),
        kept.map((k) => k.plan),
        false,
      );
      givesFirstMessage = stored.givesFirstMessage;
      kept.forEach((k, i) => (outcomes[k.at] = { ok: true, value: { id: stored.ids[i] } }));
      return outcomes;
    },
    {
      ...hooks,
      committing: () => {
        if (!givesFirstMessage) startNext?.();
      },
    },
  );
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
