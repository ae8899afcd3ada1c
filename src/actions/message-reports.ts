// Reporting a message to the organization's moderators: the realm's Notification Bot posts
// the report into the moderation request channel (moderation_request_channel_id).
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { badRequest } from '../lib/errors.ts';
import { presentBot } from '../lib/presenters/bots.ts';
import { reportContent, reportTopic, type ReportType } from '../lib/message-reports.ts';
import { readRealmSettings } from '../lib/realm-settings.ts';
import { fakeEmailDomain } from '../lib/realm-url.ts';
import { isGuest, ROLE } from '../lib/roles.ts';
import * as channelsStore from '../store/channels.ts';
import type { RealmRow, UserRow } from '../store/schema.ts';
import * as usersStore from '../store/users.ts';
import { accessMessage } from './message-access.ts';
import { sendInternalChannelMessage } from './messages.ts';
import { accessCurrentActor } from './permissions.ts';
import { withTransaction, type Work } from './transaction.ts';
import { doCreateUser } from './users.ts';

export const NOTIFICATION_BOT_NAME = 'Notification Bot';

export interface ReportParams {
  reportType: ReportType;
  description: string;
}

const noModerationChannel = () =>
  badRequest('Moderation request channel must be specified to enable message reporting.');

/**
 * The organization's Notification Bot, created on first use. The reference server has one
 * cross-realm bot per server; Parley keeps organizations apart, so each has its own.
 */
export async function notificationBot(
  ctx: AppContext,
  work: Work,
  realm: RealmRow,
): Promise<UserRow> {
  const email = `notification-bot@${fakeEmailDomain(ctx.config.externalUrl, realm.string_id)}`;
  const existing = await usersStore.getUserByDeliveryEmail(work.db, realm.id, email);
  if (existing) return existing;
  const bot = await doCreateUser(ctx, work, realm, {
    email,
    fullName: NOTIFICATION_BOT_NAME,
    role: ROLE.member,
    isBot: true,
    botType: 1,
    botOwnerId: null,
  });
  // Administrators list every bot of the organization (realm_bots); this one has no owner.
  work.emitOnCommit(
    { type: 'realm_bot', op: 'add', bot: presentBot(bot, undefined, []) },
    await usersStore.listActiveAdminIds(work.db, realm.id),
  );
  return bot;
}

/** POST /messages/{id}/report. */
export async function reportMessage(
  ctx: AppContext,
  actor: Actor,
  messageId: number,
  p: ReportParams,
): Promise<void> {
  // Early refusals on authentication's rows; the transaction decides on the current ones.
  const channelId = readRealmSettings(actor.realm.settings).moderation_request_channel_id;
  if (channelId === -1) throw noModerationChannel();
  if (isGuest(actor.user)) throw badRequest('Not allowed for guest users');
  const description = p.description.trim();
  if (p.reportType === 'other' && description === '') {
    throw badRequest('An explanation is required.');
  }
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const db = work.db;
    // The actor as they are now (a guest by now may not report, nor read the message), and
    // the organization as it is now: the moderation channel may have been changed or unset
    // since, and the report is posted under its settings of now.
    const me = await accessCurrentActor(db, actor);
    if (isGuest(me.user)) throw badRequest('Not allowed for guest users');
    const { message, channel } = await accessMessage(db, me, messageId);
    if (message.sender_id === me.user.id) throw badRequest("You can't report this message.");
    const currentId = readRealmSettings(me.realm.settings).moderation_request_channel_id;
    if (currentId === -1) throw noModerationChannel();
    const moderation = await channelsStore.getChannel(db, me.realm.id, currentId as number);
    // A deleted or archived channel is no destination: reporting is off until one is set.
    if (!moderation || moderation.is_archived === 1) throw noModerationChannel();
    const reported = await usersStore.getUserById(db, me.realm.id, message.sender_id);
    const bot = await notificationBot(ctx, work, me.realm);
    await sendInternalChannelMessage(
      ctx,
      work,
      me.realm,
      bot,
      moderation,
      reportTopic(reported!),
      reportContent({
        reporter: me.user,
        reported: reported!,
        reportType: p.reportType,
        description,
        message: { id: message.id, content: message.content },
        channel: channel ? { name: channel.name, topic: message.topic } : null,
      }),
    );
  });
}
