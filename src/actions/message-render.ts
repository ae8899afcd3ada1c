// Rendering a message: look up the users, groups and channels its Markdown names, render
// once (at send and on edit), and decide each recipient's mention and alert-word flags.
import type { AppContext } from '../context.ts';
import { JsonableError } from '../lib/errors.ts';
import {
  findAlertWords,
  parseContent,
  renderMarkdown,
  scanMarkdown,
  type RenderedMarkdown,
} from '../lib/markdown/index.ts';
import { FLAG_BITS } from '../lib/message-flags.ts';
import { presentRealmEmoji } from '../lib/presenters/custom-emoji.ts';
import { realmUrl } from '../lib/realm-url.ts';
import { safeJson } from '../lib/user-settings.ts';
import * as emojiStore from '../store/custom-emoji.ts';
import type { Q } from '../store/db.ts';
import * as messagesStore from '../store/messages.ts';
import type { RealmRow, UserRow } from '../store/schema.ts';
import * as groups from '../store/user-groups.ts';
import * as usersStore from '../store/users.ts';
import { listChannelAccess } from './channel-access.ts';
import { isUserInGroup } from './permissions.ts';

export interface MessageRendering {
  rendered: RenderedMarkdown;
  /** Text outside code, where alert words are looked for. */
  plainText: string;
  /** Members of the groups the message mentions (not silently). */
  groupMemberIds: Set<number>;
}

/**
 * Render content as the sender would see it sent. With checkGroupMentions, mentioning a
 * group whose can_mention_group does not hold the sender is refused.
 */
export async function renderMessage(
  ctx: AppContext,
  db: Q,
  realm: RealmRow,
  sender: UserRow,
  content: string,
  opts: { checkGroupMentions: boolean },
): Promise<MessageRendering> {
  const parsed = parseContent(content);
  const scan = scanMarkdown(parsed);
  const wantsUsers = scan.userNames.length > 0 || scan.userIds.length > 0;
  const allUsers = wantsUsers ? await usersStore.listUsers(db, realm.id) : [];
  const names = new Set(scan.userNames.map((n) => n.toLowerCase()));
  const ids = new Set(scan.userIds);
  const users = allUsers
    .filter((u) => names.has(u.full_name.toLowerCase()) || ids.has(u.id))
    .map((u) => ({ id: u.id, full_name: u.full_name, is_active: u.is_active === 1 }));
  const groupNames = new Set(scan.groupNames.map((n) => n.toLowerCase()));
  const namedGroups =
    groupNames.size > 0
      ? (await messagesStore.listNamedGroups(db, realm.id)).filter((g) =>
          groupNames.has(g.name.toLowerCase()),
        )
      : [];
  const channelNames = new Set(scan.channelNames.map((n) => n.toLowerCase()));
  const channels =
    channelNames.size > 0
      ? (await listChannelAccess(db, realm, sender))
          .filter((a) => a.metadata && channelNames.has(a.channel.name.toLowerCase()))
          .map((a) => ({ id: a.channel.id, name: a.channel.name }))
      : [];
  const realmEmoji =
    scan.emojiNames.length > 0
      ? (await emojiStore.listRealmEmoji(db, realm.id))
          .filter((e) => e.deactivated === 0)
          .map(presentRealmEmoji)
      : [];
  const rendered = renderMarkdown(parsed, {
    users,
    groups: namedGroups.map((g) => ({ id: g.id, name: g.name, deactivated: g.deactivated === 1 })),
    channels,
    realmEmoji,
    realmUrl: realmUrl(ctx.config.externalUrl, realm.string_id),
  });
  const groupMemberIds = new Set<number>();
  for (const groupId of rendered.mentionedGroupIds) {
    const group = namedGroups.find((g) => g.id === groupId)!;
    if (opts.checkGroupMentions) {
      const allowed = safeJson(group.settings).can_mention_group;
      if (typeof allowed === 'number' && !(await isUserInGroup(db, sender, allowed))) {
        throw new JsonableError(`You are not allowed to mention user group '${group.name}'.`);
      }
    }
    for (const id of await groups.listRecursiveMembers(db, groupId)) groupMemberIds.add(id);
  }
  return { rendered, plainText: scan.plainText, groupMemberIds };
}

/** The mention and alert-word bits a message's rendering gives one recipient. */
export function renderingFlags(
  r: MessageRendering,
  userId: number,
  alertWords: readonly string[] | undefined,
  topicParticipant: boolean,
): number {
  let bits = 0;
  if (r.rendered.mentionedUserIds.includes(userId) || r.groupMemberIds.has(userId)) {
    bits |= FLAG_BITS.mentioned;
  }
  if (r.rendered.streamWildcard) bits |= FLAG_BITS.stream_wildcard_mentioned;
  if (r.rendered.topicWildcard && topicParticipant) bits |= FLAG_BITS.topic_wildcard_mentioned;
  if (alertWords && alertWords.length > 0 && findAlertWords(r.plainText, alertWords).length > 0) {
    bits |= FLAG_BITS.has_alert_word;
  }
  return bits;
}

/** The flag bits rendering decides; edits recompute them. */
export const RENDERING_FLAG_BITS =
  FLAG_BITS.mentioned |
  FLAG_BITS.stream_wildcard_mentioned |
  FLAG_BITS.topic_wildcard_mentioned |
  FLAG_BITS.has_alert_word;
