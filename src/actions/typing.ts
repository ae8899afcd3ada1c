// Typing notifications: whether the user is composing to a conversation or editing a
// message. The server keeps no typing state (clients expire a "start" on their own, per
// the server_typing_* timings of /register): each request is relayed at once to the
// conversation's users who receive typing notifications. Channels with many subscribers
// get none at all, to keep the fan-out cheap.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { badRequest } from '../lib/errors.ts';
import { readRealmSettings } from '../lib/realm-settings.ts';
import { readUserSettings } from '../lib/user-settings.ts';
import { unixNow } from '../infra/clock.ts';
import * as channelsStore from '../store/channels.ts';
import type { Q } from '../store/db.ts';
import * as messagesStore from '../store/messages.ts';
import type { UserRow } from '../store/schema.ts';
import * as usersStore from '../store/users.ts';
import { loadChannelAccessById } from './channel-access.ts';
import { accessMessage } from './message-access.ts';
import { checkContentEditable } from './message-edit.ts';
import { checkCanPost } from './message-destinations.ts';
import { topicNamedIn } from './message-present.ts';
import { emitNow } from './transaction.ts';
import { canAccessUser, isUserId } from './user-access.ts';

/** Channels with more subscribers than this get no typing notifications. */
export const MAX_CHANNEL_SIZE_FOR_TYPING_NOTIFICATIONS = 100;

export type TypingOp = 'start' | 'stop';

export interface TypingParams {
  op: TypingOp;
  type?: 'direct' | 'stream' | 'channel';
  to?: number[];
  streamId?: number;
  topic?: string;
}

const receivesTyping = (u: UserRow): boolean =>
  u.is_active === 1 && readUserSettings(u.settings).receives_typing_notifications !== false;

function checkSendsTyping(user: UserRow, inChannel: boolean): void {
  const settings = readUserSettings(user.settings);
  if (inChannel && settings.send_stream_typing_notifications === false) {
    throw badRequest('User has disabled typing notifications for channel messages');
  }
  if (!inChannel && settings.send_private_typing_notifications === false) {
    throw badRequest('User has disabled typing notifications for direct messages');
  }
}

/** Subscribers of the channel to notify, or none when the channel is too big for typing. */
async function channelTypingRecipients(db: Q, realmId: number, channelId: number) {
  const ids = await channelsStore.listSubscriberIds(db, channelId);
  if (ids.length > MAX_CHANNEL_SIZE_FOR_TYPING_NOTIFICATIONS) return [];
  const users = await usersStore.listUsersByIds(db, realmId, ids);
  return users.filter(receivesTyping).map((u) => u.id);
}

/** The conversation's users (the sender included), in the order named; all must exist. */
async function directParticipants(ctx: AppContext, actor: Actor, to: number[]) {
  const ids = [...new Set([...to, actor.user.id])];
  const found = new Map(
    (await usersStore.listUsersByIds(ctx.db, actor.realm.id, ids.filter(isUserId))).map((u) => [
      u.id,
      u,
    ]),
  );
  const out: UserRow[] = [];
  for (const id of ids) {
    const user = found.get(id);
    // Users the sender cannot see are reported as unknown, not revealed.
    if (!user || !(await canAccessUser(ctx.db, actor.realm, actor.user, user))) {
      throw badRequest(`Invalid user ID ${id}`);
    }
    out.push(user);
  }
  return out;
}

/** POST /typing. */
export async function doSendTyping(
  ctx: AppContext,
  actor: Actor,
  params: TypingParams,
): Promise<void> {
  const sender = { user_id: actor.user.id, email: actor.user.email };
  if (params.type === 'stream' || params.type === 'channel') {
    if (params.streamId === undefined) throw badRequest("Missing 'stream_id' argument");
    if (params.topic === undefined) throw badRequest('Missing topic');
    checkSendsTyping(actor.user, true);
    const { channel } = await loadChannelAccessById(ctx.db, actor, params.streamId, {
      content: true,
    });
    await checkCanPost(ctx.db, actor.user, channel);
    const topic = topicNamedIn(actor.realm, params.topic);
    await emitNow(
      ctx,
      {
        type: 'typing',
        op: params.op,
        message_type: 'stream',
        sender,
        stream_id: channel.id,
        topic,
      },
      await channelTypingRecipients(ctx.db, actor.realm.id, channel.id),
    );
    return;
  }
  if (params.to === undefined) throw badRequest("Missing 'to' argument");
  if (params.to.length === 0) throw badRequest("Empty 'to' list");
  checkSendsTyping(actor.user, false);
  const users = await directParticipants(ctx, actor, params.to);
  await emitNow(
    ctx,
    {
      type: 'typing',
      op: params.op,
      message_type: 'direct',
      sender,
      recipients: users.map((u) => ({ user_id: u.id, email: u.email })),
    },
    users.filter(receivesTyping).map((u) => u.id),
  );
}

/** POST /messages/{message_id}/typing: the user is editing one of their messages. */
export async function doSendMessageEditTyping(
  ctx: AppContext,
  actor: Actor,
  messageId: number,
  op: TypingOp,
): Promise<void> {
  const { message } = await accessMessage(ctx.db, actor, messageId, { modifying: true });
  checkContentEditable(
    actor,
    message,
    readRealmSettings(actor.realm.settings),
    unixNow(ctx.clock),
    0,
  );
  const base = {
    type: 'typing_edit_message',
    op,
    sender_id: actor.user.id,
    message_id: message.id,
  };
  if (message.channel_id !== null) {
    checkSendsTyping(actor.user, true);
    await emitNow(
      ctx,
      {
        ...base,
        recipient: { type: 'channel', channel_id: message.channel_id, topic: message.topic },
      },
      await channelTypingRecipients(ctx.db, actor.realm.id, message.channel_id),
    );
    return;
  }
  checkSendsTyping(actor.user, false);
  const ids =
    (await messagesStore.listDirectParticipants(ctx.db, [message.recipient_id])).get(
      message.recipient_id,
    ) ?? [];
  const users = await usersStore.listUsersByIds(ctx.db, actor.realm.id, ids);
  await emitNow(
    ctx,
    { ...base, recipient: { type: 'direct', user_ids: ids } },
    users.filter(receivesTyping).map((u) => u.id),
  );
}
