// Outgoing-webhook bots: which messages trigger them (enqueued with the message, in its
// transaction) and one delivery attempt: the request, the bot's reply, and the notices
// when it fails. The worker in src/workers/ decides when attempts run.
import type { AppContext } from '../context.ts';
import { unixNow } from '../infra/clock.ts';
import { HttpFailure, type HttpPost } from '../infra/http-client.ts';
import { BOT_TYPE, SERVICE_INTERFACE } from '../lib/bots.ts';
import { JsonableError } from '../lib/errors.ts';
import { realmHost, realmUrl } from '../lib/realm-url.ts';
import * as botsStore from '../store/bots.ts';
import * as channelsStore from '../store/channels.ts';
import type { Q } from '../store/db.ts';
import * as messagesStore from '../store/messages.ts';
import * as deliveriesStore from '../store/outgoing-webhooks.ts';
import { getRealmById } from '../store/realms.ts';
import type {
  BotServiceRow,
  MessageRow,
  OutgoingWebhookDeliveryRow,
  RealmRow,
  UserRow,
} from '../store/schema.ts';
import * as usersStore from '../store/users.ts';
import type { RecipientRow } from '../store/users.ts';
import { presentMessageForWebhook } from './message-present.ts';
import { sendInternalChannelMessage, sendInternalDirectMessage } from './messages.ts';
import { withTransaction } from './transaction.ts';

/** Timeouts and connection errors are retried this many times, after these waits. */
export const MAX_RETRIES = 3;
export const RETRY_BACKOFF_SECONDS = [1, 2, 4];
/** How much of a failing response the owner's notice quotes. */
const QUOTED_BODY_CHARS = 1000;

const isOutgoingBot = (u: Pick<UserRow, 'is_bot' | 'bot_type' | 'is_active'>): boolean =>
  u.is_bot === 1 && u.bot_type === BOT_TYPE.outgoingWebhook && u.is_active === 1;

/**
 * Called by every message send inside its transaction. Bots never trigger bots (no loops);
 * channel messages trigger the bots they mention (mentions in code do not count, the
 * renderer leaves them out), direct messages every bot among the participants.
 */
export async function enqueueOutgoingWebhooks(
  ctx: AppContext,
  db: Q,
  realm: RealmRow,
  sender: UserRow,
  message: MessageRow,
  recipients: readonly RecipientRow[],
  mentionedUserIds: readonly number[],
): Promise<void> {
  if (sender.is_bot === 1) return;
  let bots: RecipientRow[];
  let trigger: string;
  if (message.channel_id === null) {
    bots = recipients.filter((u) => u.id !== sender.id && isOutgoingBot(u));
    trigger = 'direct_message';
  } else {
    if (mentionedUserIds.length === 0) return;
    const channel = await channelsStore.getChannel(db, realm.id, message.channel_id);
    // A private channel's messages reach no one who is not subscribed: a mentioned bot
    // outside it would post them to its owner's URL.
    const subscribed = new Set(recipients.map((u) => u.id));
    bots = (await usersStore.listUsersByIds(db, realm.id, [...mentionedUserIds])).filter(
      (b) => isOutgoingBot(b) && (channel?.invite_only !== 1 || subscribed.has(b.id)),
    );
    trigger = 'mention';
  }
  const now = unixNow(ctx.clock);
  await deliveriesStore.insertDeliveries(
    db,
    bots.map((b) => ({
      realm_id: realm.id,
      bot_id: b.id,
      message_id: message.id,
      trigger,
      next_attempt_at: now,
    })),
  );
}

export type DeliveryOutcome = 'replied' | 'no_reply' | 'retry' | 'failed' | 'dropped';

interface Delivery {
  row: OutgoingWebhookDeliveryRow;
  realm: RealmRow;
  bot: UserRow;
  service: BotServiceRow;
  message: MessageRow;
}

async function loadDelivery(db: Q, row: OutgoingWebhookDeliveryRow): Promise<Delivery | null> {
  const realm = await getRealmById(db, row.realm_id);
  if (!realm) return null;
  const bot = await usersStore.getUserById(db, realm.id, row.bot_id);
  const service = await botsStore.getBotService(db, row.bot_id);
  const message = await messagesStore.getMessage(db, realm.id, row.message_id);
  if (!bot || !isOutgoingBot(bot) || !service || !message) return null;
  return { row, realm, bot, service, message };
}

/** The native JSON payload, or the form fields a Slack-compatible receiver expects. */
async function buildRequest(ctx: AppContext, d: Delivery): Promise<Omit<HttpPost, 'timeoutMs'>> {
  const { realm, bot, service, message, row } = d;
  if (service.interface === SERVICE_INTERFACE.slack) {
    const sender = await usersStore.getUserById(ctx.db, realm.id, message.sender_id);
    const channel = await channelsStore.getChannel(ctx.db, realm.id, message.channel_id!);
    const form = new URLSearchParams({
      token: service.token,
      team_id: `T${realm.id}`,
      team_domain: realmHost(ctx.config.externalUrl, realm.string_id),
      channel_id: `C${message.channel_id}`,
      channel_name: channel?.name ?? '',
      timestamp: String(message.date_sent),
      user_id: `U${message.sender_id}`,
      user_name: sender?.full_name ?? '',
      text: message.content,
      trigger_word: row.trigger,
      service_id: String(service.id),
    });
    return { contentType: 'application/x-www-form-urlencoded', body: form.toString() };
  }
  const payload = {
    bot_email: bot.email,
    bot_full_name: bot.full_name,
    data: message.content,
    trigger: row.trigger,
    token: service.token,
    message: await presentMessageForWebhook(ctx, ctx.db, realm, bot, message),
  };
  return { contentType: 'application/json', body: JSON.stringify(payload) };
}

type Reply = { content: string } | { none: true } | { invalid: string };

/** What a 2xx body asks for: a reply, nothing, or it is not a valid answer. */
export function readReply(body: string, slack: boolean): Reply {
  if (body.trim() === '') return { none: true };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { invalid: 'the response is not valid JSON' };
  }
  // Older bot frameworks answer "" for no reply.
  if (parsed === '') return { none: true };
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { invalid: 'the response is not a JSON object' };
  }
  const obj = parsed as Record<string, unknown>;
  if (obj.response_not_required === true) return { none: true };
  const content = slack ? obj.text : (obj.content ?? obj.response_string);
  if (content === undefined || content === null) return { none: true };
  if (typeof content !== 'string') {
    return { invalid: `"${slack ? 'text' : 'content'}" is not a string` };
  }
  return content.trim() === '' ? { none: true } : { content };
}

/** A fence longer than any run of backticks in the quoted text. */
function quote(text: string): string {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((r) => r.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}\n${text}\n${fence}`;
}

interface Failure {
  /** Posted by the bot in the conversation. */
  notice: string;
  /** Sent to the bot's owner: the cause. */
  cause: string;
}

/** Finish a delivery in one transaction: the bot's posts, then the row is gone. */
async function finish(
  ctx: AppContext,
  d: Delivery,
  post: { reply?: string; failure?: Failure },
): Promise<void> {
  await withTransaction(ctx, d.realm.id, async (work) => {
    // Read again: the request took seconds, in which the bot may have been deactivated or
    // given a new owner, and the message deleted or moved. Then there is no one to answer.
    const now = await loadDelivery(work.db, d.row);
    if (!now) {
      await deliveriesStore.deleteDelivery(work.db, d.row.id);
      return;
    }
    const { realm, bot, message } = now;
    const toConversation = async (content: string): Promise<void> => {
      if (message.channel_id !== null) {
        const channel = await channelsStore.getChannel(work.db, realm.id, message.channel_id);
        // An archived channel takes no new messages, a bot's included.
        if (!channel || channel.is_archived === 1) return;
        await sendInternalChannelMessage(ctx, work, realm, bot, channel, message.topic, content);
        return;
      }
      const ids =
        (await messagesStore.listDirectParticipants(work.db, [message.recipient_id])).get(
          message.recipient_id,
        ) ?? [];
      const users = await usersStore.listUsersByIds(work.db, realm.id, ids);
      await sendInternalDirectMessage(ctx, work, realm, bot, users, content);
    };
    if (post.reply !== undefined) await toConversation(post.reply);
    if (post.failure) {
      await toConversation(post.failure.notice);
      const owner =
        bot.bot_owner_id === null
          ? undefined
          : await usersStore.getUserById(work.db, realm.id, bot.bot_owner_id);
      if (owner && owner.is_active === 1) {
        const link = `${realmUrl(ctx.config.externalUrl, realm.string_id)}/#narrow/id/${message.id}`;
        const text =
          `[A message](${link}) to your bot @_**${bot.full_name}** triggered an outgoing ` +
          `webhook, and the request failed: ${post.failure.cause}`;
        await sendInternalDirectMessage(ctx, work, realm, bot, [owner], text);
      }
    }
    await deliveriesStore.deleteDelivery(work.db, d.row.id);
  });
}

function failureOf(err: HttpFailure): Failure {
  if (err.kind === 'too_large') {
    return { notice: 'Failure! The bot sent an invalid response.', cause: `${err.message}.` };
  }
  if (err.kind === 'refused') {
    return {
      notice: 'Failure! Bot is unavailable',
      cause: `the URL configured for the bot is on a private or disallowed network (${err.message}).`,
    };
  }
  return {
    notice: 'Failure! Bot is unavailable',
    cause: `${err.kind === 'timeout' ? 'timeout' : 'connection error'}: ${err.message}, after ${MAX_RETRIES} retries.`,
  };
}

/** Schedule the next attempt with backoff, unless the retries are used up; says which. */
async function scheduleRetry(ctx: AppContext, row: OutgoingWebhookDeliveryRow): Promise<boolean> {
  if (row.attempts >= MAX_RETRIES) return false;
  const wait = RETRY_BACKOFF_SECONDS[row.attempts] ?? RETRY_BACKOFF_SECONDS.at(-1)!;
  await deliveriesStore.rescheduleDelivery(
    ctx.db,
    row.id,
    row.attempts + 1,
    unixNow(ctx.clock) + wait,
  );
  return true;
}

/**
 * After an attempt failed unexpectedly (a bug, the database, not the bot's server): try
 * again later like a timeout, at most MAX_RETRIES times, then drop the delivery rather than
 * retry it forever. Returns whether it will be tried again.
 */
export async function recordUnexpectedDeliveryFailure(
  ctx: AppContext,
  row: OutgoingWebhookDeliveryRow,
): Promise<boolean> {
  if (await scheduleRetry(ctx, row)) return true;
  await deliveriesStore.deleteDelivery(ctx.db, row.id);
  return false;
}

/** One attempt at one delivery the worker has claimed. */
export async function processOutgoingWebhook(
  ctx: AppContext,
  row: OutgoingWebhookDeliveryRow,
): Promise<DeliveryOutcome> {
  const d = await loadDelivery(ctx.db, row);
  if (!d) {
    // The message, bot or service is gone: nothing left to deliver.
    await deliveriesStore.deleteDelivery(ctx.db, row.id);
    return 'dropped';
  }
  const slack = d.service.interface === SERVICE_INTERFACE.slack;
  if (slack && d.message.channel_id === null) {
    await finish(ctx, d, {
      reply: 'Failure! Slack-compatible outgoing webhooks do not support direct messages.',
    });
    return 'failed';
  }
  const request = await buildRequest(ctx, d);
  let response;
  try {
    response = await ctx.http.post(d.service.base_url, {
      ...request,
      timeoutMs: ctx.config.outgoingWebhookTimeoutMs,
    });
  } catch (err) {
    if (!(err instanceof HttpFailure)) throw err;
    const retryable = err.kind === 'timeout' || err.kind === 'connection';
    if (retryable && (await scheduleRetry(ctx, row))) return 'retry';
    await finish(ctx, d, { failure: failureOf(err) });
    return 'failed';
  }
  if (response.status < 200 || response.status > 299) {
    const body = response.body.slice(0, QUOTED_BODY_CHARS);
    await finish(ctx, d, {
      failure: {
        notice: `Failure! Third party responded with ${response.status}`,
        cause:
          `the bot's server responded with status ${response.status}` +
          (body.trim() === '' ? '.' : ` and this body:\n${quote(body)}`),
      },
    });
    return 'failed';
  }
  const reply = readReply(response.body, slack);
  if ('invalid' in reply) {
    await finish(ctx, d, {
      failure: { notice: 'Failure! The bot sent an invalid response.', cause: `${reply.invalid}.` },
    });
    return 'failed';
  }
  if ('none' in reply) {
    await finish(ctx, d, {});
    return 'no_reply';
  }
  try {
    await finish(ctx, d, { reply: reply.content });
  } catch (err) {
    // A reply no message may carry (a null byte): reported like any invalid answer.
    if (!(err instanceof JsonableError)) throw err;
    await finish(ctx, d, {
      failure: {
        notice: 'Failure! The bot sent an invalid response.',
        cause: `the reply could not be posted (${err.message}).`,
      },
    });
    return 'failed';
  }
  return 'replied';
}
