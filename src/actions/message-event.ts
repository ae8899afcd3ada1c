// The message event of a send: one canonical payload that shaping turns into each client's
// form, with each recipient's own part (flags, avatar, echo, a placeholder sender).
import type { AppContext } from '../context.ts';
import { flagsToNames } from '../lib/message-flags.ts';
import { presentMessage } from '../lib/presenters/messages.ts';
import { canSeeDeliveryEmail } from '../lib/presenters/users.ts';
import { isGuest } from '../lib/roles.ts';
import type { Q } from '../store/db.ts';
import type { ChannelRow, MessageRow, RealmRow, UserRow } from '../store/schema.ts';
import type { RecipientRow } from '../store/users.ts';
import {
  loadForPresenting,
  newChannelMessageForPresenting,
  presentOptions,
  senderPlaceholder,
} from './message-present.ts';
import type { Work } from './transaction.ts';
import { accessibleUserIdsForLimitedGuest, guestsSeeEveryone } from './user-access.ts';

/**
 * The message event: one canonical payload (HTML in content, the Markdown source in
 * __raw_content) that shaping turns into each client's form; per recipient their flags,
 * whether client_gravatar may null the avatar, a placeholder sender for limited guests, and
 * for the sender's sending queue the local id to echo.
 */
export async function emitMessageEvent(
  ctx: AppContext,
  work: Work,
  realm: RealmRow,
  row: MessageRow,
  channel: ChannelRow | null,
  author: UserRow,
  recipients: readonly RecipientRow[],
  flags: Map<number, number>,
  echo: { queueId?: string; localId?: string },
): Promise<void> {
  // A channel message is presented from the rows the send holds (the sender as the request
  // authenticated it); a direct message's participants are loaded with it.
  const loaded = channel
    ? newChannelMessageForPresenting(row, author, channel.name)
    : (await loadForPresenting(work.db, realm.id, [row]))[0];
  const message = presentMessage(
    loaded,
    presentOptions(realm, null, {
      applyMarkdown: true,
      clientGravatar: false,
      allowEmptyTopicName: true,
    }),
  );
  // Added to the object just made, not spread into a copy: from about the eleventh send on,
  // V8 gave each spread copy a hidden class of its own, and the shaping code that reads every
  // message was thrown away and compiled again for each new one (docs/performance.md, item
  // 4, session 54).
  message.__raw_content = row.content;
  const sender = loaded.sender;
  const { userIds, perUser } = recipientParts(recipients, sender, flags, echo);
  await hideInaccessibleSender(ctx, work.db, realm, sender, recipients, message, perUser);
  work.emitOnCommit({ type: 'message', message, flags: [] }, userIds, {
    perUser,
    ...(channel
      ? { realmWide: { realmId: realm.id, publicChannel: channel.invite_only === 0 } }
      : {}),
  });
}

/**
 * The message event's recipients and each one's part: their flags, whether client_gravatar
 * may null the avatar, and for the sender's sending queue the local id to echo. Out of the
 * async emitMessageEvent, as recipientFlags is out of planMessage
 * (messages.ts): with this loop in it,
 * TurboFan took 26 ms compiling it.
 */
function recipientParts(
  recipients: readonly RecipientRow[],
  sender: UserRow,
  flags: Map<number, number>,
  echo: { queueId?: string; localId?: string },
): { userIds: number[]; perUser: Record<number, Record<string, unknown>> } {
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
  // The recipients' ids are gathered in this pass: a map of its own walked the frozen kept
  // read again, on V8's slower path for frozen arrays.
  const userIds = new Array<number>(recipients.length);
  for (let i = 0; i < recipients.length; i++) {
    const u = recipients[i];
    userIds[i] = u.id;
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
  return { userIds, perUser };
}

/** Limited guests who may not access the sender get the message with a placeholder sender. */
async function hideInaccessibleSender(
  ctx: AppContext,
  db: Q,
  realm: RealmRow,
  sender: UserRow,
  recipients: readonly RecipientRow[],
  message: Record<string, unknown>,
  perUser: Record<number, Record<string, unknown>>,
): Promise<void> {
  if (sender.is_bot === 1) return;
  const guests = guestsAmong(recipients);
  if (guests.length === 0 || (await guestsSeeEveryone(db, realm.id))) return;
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

/**
 * The guests among the recipients. A loop, not filter: recipients is a kept read, frozen, and
 * V8's filter takes its slow path on frozen arrays (28-30 µs for 1,000 against 7;
 * docs/performance.md, session 53). Out of the async hideInaccessibleSender, as
 * recipientParts is out of emitMessageEvent.
 */
function guestsAmong(recipients: readonly RecipientRow[]): RecipientRow[] {
  const guests: RecipientRow[] = [];
  for (const u of recipients) if (isGuest(u)) guests.push(u);
  return guests;
}
