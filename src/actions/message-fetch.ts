// Reading messages: GET /messages (narrows, anchors, message_ids), GET /messages/{id},
// and rendering a preview. Narrow names become ids here; store/message-search.ts runs them.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { badRequest, JsonableError } from '../lib/errors.ts';
import { FLAG_BITS } from '../lib/message-flags.ts';
import { directKey, MAX_MESSAGES_PER_FETCH } from '../lib/messages.ts';
import {
  badNarrow,
  highlightHtml,
  highlightTopic,
  LARGER_THAN_MAX_MESSAGE_ID,
  parseAnchor,
  parseNarrow,
  searchWords,
  type NarrowTerm,
  type UserRef,
} from '../lib/narrow.ts';
import { canSeeDeliveryEmail } from '../lib/presenters/users.ts';
import { isGuest } from '../lib/roles.ts';
import * as channelsStore from '../store/channels.ts';
import type { Q } from '../store/db.ts';
import {
  findAfter,
  findAmong,
  findBefore,
  findById,
  findFirstUnread,
  type FoundMessage,
  type MessageCondition,
  type MessageSearch,
} from '../store/message-search.ts';
import * as messagesStore from '../store/messages.ts';
import type { ChannelRow, UserRow } from '../store/schema.ts';
import * as usersStore from '../store/users.ts';
import { getChannelAccess, listChannelAccess } from './channel-access.ts';
import { accessMessage, filterReadableMessages } from './message-access.ts';
import { presentMessagesFor, type ViewOptions } from './message-present.ts';
import { renderMessage } from './message-render.ts';

export interface FetchMessagesParams {
  anchor?: number | string;
  includeAnchor: boolean;
  numBefore?: number;
  numAfter?: number;
  narrow: unknown[];
  useFirstUnreadAnchor: boolean;
  messageIds?: number[];
  view: ViewOptions;
}

export interface ResolvedNarrow {
  search: MessageSearch;
  /** Words of search terms, to mark in match_content and match_subject. */
  words: string[];
  /** The narrow names a conversation or channel: muted ones count for first_unread. */
  specific: boolean;
}

async function resolveUser(db: Q, actor: Actor, ref: UserRef, what: string): Promise<UserRow> {
  let user: UserRow | undefined;
  if (typeof ref === 'number') {
    user = await usersStore.getUserById(db, actor.realm.id, ref);
  } else {
    user = await usersStore.getUserByApiEmail(db, actor.realm.id, ref);
    if (!user) {
      const real = await usersStore.getUserByDeliveryEmail(db, actor.realm.id, ref);
      if (real && canSeeDeliveryEmail(actor.user, real)) user = real;
    }
  }
  if (!user) throw badNarrow(`unknown user in ${what}`);
  return user;
}

/** A channel named by the narrow: visible to the user, or unknown. */
async function resolveChannel(db: Q, actor: Actor, ref: number | string): Promise<ChannelRow> {
  const channel =
    typeof ref === 'number'
      ? await channelsStore.getChannel(db, actor.realm.id, ref)
      : await channelsStore.getChannelByName(db, actor.realm.id, ref);
  if (!channel || !(await getChannelAccess(db, actor.user, channel)).metadata) {
    throw badNarrow(`unknown channel ${String(ref)}`);
  }
  return channel;
}

/** with:<id> becomes the conversation of that message, when the user may read it. */
async function expandWith(db: Q, actor: Actor, terms: NarrowTerm[]): Promise<NarrowTerm[]> {
  const withTerm = terms.find((t) => t.operator === 'with');
  if (!withTerm) return terms;
  const rest = terms.filter((t) => t !== withTerm);
  let message;
  try {
    ({ message } = await accessMessage(db, actor, withTerm.operand as number));
  } catch (err) {
    if (err instanceof JsonableError) return rest;
    throw err;
  }
  const conversationOps = new Set(['channel', 'topic', 'dm']);
  const others = rest.filter((t) => !conversationOps.has(t.operator));
  if (message.channel_id !== null) {
    return [
      { operator: 'channel', operand: message.channel_id, negated: false },
      { operator: 'topic', operand: message.topic, negated: false },
      ...others,
    ];
  }
  const participants = (await messagesStore.listDirectParticipants(db, [message.recipient_id])).get(
    message.recipient_id,
  ) ?? [actor.user.id];
  return [{ operator: 'dm', operand: participants, negated: false }, ...others];
}

const MENTION_BITS =
  FLAG_BITS.mentioned | FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned;

/** A narrow as a search over the actor's messages (also used by POST /messages/flags/narrow). */
export async function resolveNarrow(db: Q, actor: Actor, raw: unknown[]): Promise<ResolvedNarrow> {
  const terms = await expandWith(db, actor, parseNarrow(raw));
  const conditions: MessageCondition[] = [];
  const words: string[] = [];
  // Shared history is searched only when every channel the narrow requires allows it.
  let historyTerms = 0;
  let channelTerms = 0;
  let flagTerms = false;
  for (const t of terms) {
    const negated = t.negated;
    switch (t.operator) {
      case 'channel': {
        const channel = await resolveChannel(db, actor, t.operand);
        conditions.push({ kind: 'recipients', recipientIds: [channel.recipient_id!], negated });
        if (!negated) {
          channelTerms++;
          const access = await getChannelAccess(db, actor.user, channel);
          if (access.content && channel.history_public_to_subscribers === 1) historyTerms++;
        }
        break;
      }
      case 'channels': {
        const all = await listChannelAccess(db, actor.realm, actor.user);
        const chosen = all
          .map((a) => a.channel)
          .filter((c) => (t.operand === 'public' ? c.invite_only === 0 : c.is_web_public === 1));
        conditions.push({
          kind: 'recipients',
          recipientIds: chosen.map((c) => c.recipient_id!),
          negated,
        });
        if (!negated) {
          channelTerms++;
          if (t.operand === 'public' && !isGuest(actor.user)) historyTerms++;
        }
        break;
      }
      case 'topic':
        conditions.push({ kind: 'topic', topic: t.operand, negated });
        break;
      case 'sender': {
        const user = await resolveUser(db, actor, t.operand, 'sender');
        conditions.push({ kind: 'sender', userId: user.id, negated });
        break;
      }
      case 'dm': {
        const ids = [actor.user.id];
        for (const ref of t.operand) ids.push((await resolveUser(db, actor, ref, 'dm')).id);
        const recipient = await messagesStore.getDirectRecipient(
          db,
          actor.realm.id,
          directKey(ids),
        );
        conditions.push({
          kind: 'recipients',
          recipientIds: recipient ? [recipient.id] : [],
          negated,
        });
        break;
      }
      case 'dm-including':
      case 'group-pm-with': {
        const user = await resolveUser(db, actor, t.operand, t.operator);
        const minParticipants = t.operator === 'group-pm-with' ? 3 : 1;
        conditions.push({ kind: 'directWith', userId: user.id, minParticipants, negated });
        break;
      }
      case 'is':
        if (t.operand !== 'resolved' && t.operand !== 'followed') flagTerms = true;
        conditions.push(isCondition(actor.user.id, t.operand, negated));
        break;
      case 'has':
        conditions.push({ kind: 'has', what: t.operand, negated });
        break;
      case 'id':
        conditions.push({ kind: 'id', id: t.operand, negated });
        break;
      case 'search': {
        const w = searchWords(t.operand);
        if (!negated) words.push(...w);
        conditions.push({ kind: 'search', words: w, negated });
        break;
      }
      case 'near':
      case 'with':
        break;
    }
  }
  const includeHistory = channelTerms > 0 && historyTerms === channelTerms && !flagTerms;
  const specific = terms.some(
    (t) => !t.negated && ['channel', 'channels', 'topic', 'dm'].includes(t.operator),
  );
  return {
    search: { realmId: actor.realm.id, userId: actor.user.id, includeHistory, conditions },
    words,
    specific,
  };
}

function isCondition(userId: number, operand: string, negated: boolean): MessageCondition {
  switch (operand) {
    case 'dm':
    case 'private':
      return { kind: 'direct', negated };
    case 'starred':
      return { kind: 'flagsAny', mask: FLAG_BITS.starred, negated };
    case 'mentioned':
      return { kind: 'flagsAny', mask: MENTION_BITS, negated };
    case 'alerted':
      return { kind: 'flagsAny', mask: FLAG_BITS.has_alert_word, negated };
    case 'unread':
      return { kind: 'unread', negated };
    case 'resolved':
      return { kind: 'resolved', negated };
    case 'followed':
      return { kind: 'topicPolicy', userId, policy: 3, negated };
    default:
      return { kind: 'muted', userId, negated };
  }
}

function unsupportedCombination(names: string[]): JsonableError {
  return badRequest(`Unsupported parameter combination: ${names.join(', ')}`);
}

export async function fetchMessages(
  ctx: AppContext,
  actor: Actor,
  p: FetchMessagesParams,
): Promise<Record<string, unknown>> {
  const db = ctx.db;
  const { search, words, specific } = await resolveNarrow(db, actor, p.narrow);
  let found: FoundMessage[];
  const out: Record<string, unknown> = {};
  if (p.messageIds !== undefined) {
    const given = [
      ['anchor', p.anchor !== undefined],
      ['num_before', p.numBefore !== undefined],
      ['num_after', p.numAfter !== undefined],
      ['use_first_unread_anchor', p.useFirstUnreadAnchor],
    ].filter(([, on]) => on);
    if (given.length > 0) {
      throw unsupportedCombination(['message_ids', ...given.map(([n]) => n as string)]);
    }
    found = await findAmong(db, { ...search, includeHistory: true }, p.messageIds);
    Object.assign(out, { found_anchor: false, found_oldest: false, found_newest: false });
  } else {
    for (const [name, value] of [
      ['num_before', p.numBefore],
      ['num_after', p.numAfter],
    ] as const) {
      if (value === undefined) {
        throw new JsonableError(`Missing '${name}' argument`, 'REQUEST_VARIABLE_MISSING', 400, {
          var_name: name,
        });
      }
    }
    if (p.numBefore! + p.numAfter! > MAX_MESSAGES_PER_FETCH) {
      throw badRequest(`Too many messages requested (maximum ${MAX_MESSAGES_PER_FETCH}).`);
    }
    const range = await findAnchoredRange(
      db,
      { search, specific },
      {
        anchor: p.anchor,
        useFirstUnreadAnchor: p.useFirstUnreadAnchor,
        includeAnchor: p.includeAnchor,
        numBefore: p.numBefore!,
        numAfter: p.numAfter!,
      },
    );
    found = range.found;
    Object.assign(out, {
      anchor: range.anchor,
      found_anchor: range.foundAnchor,
      found_oldest: range.foundOldest,
      found_newest: range.foundNewest,
    });
  }
  const rows = await messagesStore.listMessagesByIds(
    db,
    actor.realm.id,
    found.map((f) => f.id),
  );
  const flagsById = new Map(found.map((f) => [f.id, f.flags]));
  let items = rows.map((message) => ({
    message,
    flags: flagsById.get(message.id) as number | undefined,
  }));
  if (p.messageIds !== undefined) {
    // By id the search spans every channel: keep only what the user may read.
    const readable = new Set(
      (await filterReadableMessages(db, actor.user, rows)).map((r) => r.message.id),
    );
    items = items.filter((i) => readable.has(i.message.id));
  }
  const messages = await presentMessagesFor(ctx, db, actor.realm, actor.user, items, p.view);
  if (words.length > 0) {
    for (const [i, m] of messages.entries()) {
      m.match_content = highlightHtml(items[i].message.rendered_content, words);
      m.match_subject = highlightTopic(m.subject as string, words);
    }
  }
  return { messages, ...out, history_limited: false };
}

export interface AnchoredRange {
  found: FoundMessage[];
  anchor: number;
  foundAnchor: boolean;
  foundOldest: boolean;
  foundNewest: boolean;
}

/**
 * The messages of a resolved narrow around an anchor (an id, newest, oldest or
 * first_unread), oldest first: GET /messages and POST /messages/flags/narrow alike.
 */
export async function findAnchoredRange(
  db: Q,
  narrow: Pick<ResolvedNarrow, 'search' | 'specific'>,
  p: {
    anchor: number | string | undefined;
    useFirstUnreadAnchor: boolean;
    includeAnchor: boolean;
    numBefore: number;
    numAfter: number;
  },
): Promise<AnchoredRange> {
  const { search, specific } = narrow;
  let { numBefore, numAfter } = p;
  let anchor = parseAnchor(p.anchor, p.useFirstUnreadAnchor);
  if (anchor === null) {
    anchor = (await findFirstUnread(db, search, !specific)) ?? LARGER_THAN_MAX_MESSAGE_ID;
  }
  const anchoredToLeft = anchor === 0;
  const anchoredToRight = anchor >= LARGER_THAN_MAX_MESSAGE_ID;
  if (anchoredToLeft) numBefore = 0;
  if (anchoredToRight) numAfter = 0;
  const before = (await findBefore(db, search, anchor, numBefore)).reverse();
  const atAnchor =
    p.includeAnchor && !anchoredToLeft && !anchoredToRight
      ? await findById(db, search, anchor)
      : null;
  const after = await findAfter(db, search, anchor, numAfter, false);
  return {
    found: [...before, ...(atAnchor ? [atAnchor] : []), ...after],
    anchor,
    foundAnchor: atAnchor !== null,
    foundOldest: anchoredToLeft || before.length < numBefore,
    foundNewest: anchoredToRight || after.length < numAfter,
  };
}

/** GET /messages/{id}: the message as the viewer sees it, plus its Markdown source. */
export async function fetchMessage(
  ctx: AppContext,
  actor: Actor,
  id: number,
  view: ViewOptions,
): Promise<Record<string, unknown>> {
  const { message, flags } = await accessMessage(ctx.db, actor, id);
  const [presented] = await presentMessagesFor(
    ctx,
    ctx.db,
    actor.realm,
    actor.user,
    [{ message, flags }],
    view,
  );
  return { raw_content: message.content, message: presented };
}

/** POST /messages/render: the HTML the content would be sent as. */
export async function renderPreview(
  ctx: AppContext,
  actor: Actor,
  content: string,
): Promise<string> {
  const r = await renderMessage(ctx, ctx.db, actor.realm, actor.user, content, {
    checkGroupMentions: false,
  });
  return r.rendered.html;
}
