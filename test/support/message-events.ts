// What a client does with message, update_message and delete_message events to its
// register snapshot (max_message_id, unread_msgs, starred_messages,
// recent_private_conversations), and the declared shapes of those events. Written from the
// API description, independently of the server, for the event-contract suite.
import { Type, type TSchema } from 'typebox';

type Obj = Record<string, unknown>;
type State = Obj;

export interface Unreads {
  pms: Array<{ other_user_id: number; sender_id: number; unread_message_ids: number[] }>;
  streams: Array<{ stream_id: number; topic: string; unread_message_ids: number[] }>;
  huddles: Array<{ user_ids_string: string; unread_message_ids: number[] }>;
  mentions: number[];
  count: number;
  old_unreads_missing: boolean;
}

const byNumber = (a: number, b: number) => a - b;
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const MENTION_FLAGS = ['mentioned', 'stream_wildcard_mentioned', 'topic_wildcard_mentioned'];

function subscription(state: State, streamId: number): Obj | undefined {
  return (state.subscriptions as Obj[] | undefined)?.find((s) => s.stream_id === streamId);
}

function subscribed(state: State, streamId: number): boolean {
  return !('subscriptions' in state) || subscription(state, streamId) !== undefined;
}

/** Muted: the topic muted, or the channel muted without the topic unmuted or followed. */
function muted(state: State, streamId: number, topic: string): boolean {
  const policy = (state.user_topics as Obj[] | undefined)?.find(
    (u) => u.stream_id === streamId && String(u.topic_name).toLowerCase() === topic.toLowerCase(),
  )?.visibility_policy;
  if (policy === 1) return true;
  if (policy === 2 || policy === 3) return false;
  return subscription(state, streamId)?.is_muted === true;
}

function isMention(flags: string[], wildcardCounts: boolean): boolean {
  return (
    flags.includes('mentioned') ||
    (wildcardCounts && MENTION_FLAGS.slice(1).some((f) => flags.includes(f)))
  );
}

export function sortUnreads(u: Unreads): void {
  u.pms.sort((a, b) => a.other_user_id - b.other_user_id);
  u.streams.sort((a, b) => a.stream_id - b.stream_id || byText(a.topic, b.topic));
  u.huddles.sort((a, b) => byText(a.user_ids_string, b.user_ids_string));
  u.mentions.sort(byNumber);
  for (const list of [u.pms, u.streams, u.huddles]) {
    for (const entry of list) entry.unread_message_ids.sort(byNumber);
  }
}

export function addStreamUnread(
  state: State,
  u: Unreads,
  streamId: number,
  topic: string,
  id: number,
  flags: string[],
): void {
  if (!subscribed(state, streamId)) return;
  const quiet = muted(state, streamId, topic);
  let bucket = u.streams.find((s) => s.stream_id === streamId && s.topic === topic);
  if (!bucket) {
    bucket = { stream_id: streamId, topic, unread_message_ids: [] };
    u.streams.push(bucket);
  }
  bucket.unread_message_ids.push(id);
  if (!quiet) u.count += 1;
  if (isMention(flags, !quiet)) u.mentions.push(id);
}

/** Remove ids from every unread list, with the count and mentions. */
export function removeUnreads(state: State, u: Unreads, ids: number[]): void {
  const gone = new Set(ids);
  for (const s of u.streams) {
    for (const id of s.unread_message_ids) {
      if (gone.has(id) && !muted(state, s.stream_id, s.topic)) u.count -= 1;
    }
  }
  for (const list of [u.pms, u.huddles]) {
    for (const e of list) u.count -= e.unread_message_ids.filter((id) => gone.has(id)).length;
  }
  for (const list of [u.pms, u.streams, u.huddles] as Array<
    Array<{ unread_message_ids: number[] }>
  >) {
    for (const e of list) e.unread_message_ids = e.unread_message_ids.filter((id) => !gone.has(id));
  }
  u.pms = u.pms.filter((e) => e.unread_message_ids.length > 0);
  u.streams = u.streams.filter((e) => e.unread_message_ids.length > 0);
  u.huddles = u.huddles.filter((e) => e.unread_message_ids.length > 0);
  u.mentions = u.mentions.filter((id) => !gone.has(id));
}

function applyNewMessage(state: State, e: Obj): void {
  const m = e.message as Obj;
  const flags = e.flags as string[];
  const id = m.id as number;
  const me = state.user_id as number;
  if ('max_message_id' in state)
    state.max_message_id = Math.max(state.max_message_id as number, id);
  const people =
    m.type === 'private' ? (m.display_recipient as Array<{ id: number }>).map((p) => p.id) : [];
  const others = people.filter((p) => p !== me).sort(byNumber);
  if ('unread_msgs' in state && !flags.includes('read')) {
    const u = state.unread_msgs as Unreads;
    if (m.type === 'stream') {
      addStreamUnread(state, u, m.stream_id as number, m.subject as string, id, flags);
    } else {
      u.count += 1;
      if (isMention(flags, true)) u.mentions.push(id);
      if (people.length <= 2) {
        const other = others[0] ?? me;
        let entry = u.pms.find((p) => p.other_user_id === other);
        if (!entry)
          u.pms.push((entry = { other_user_id: other, sender_id: other, unread_message_ids: [] }));
        entry.unread_message_ids.push(id);
      } else {
        const key = [...people].sort(byNumber).join(',');
        let entry = u.huddles.find((h) => h.user_ids_string === key);
        if (!entry) u.huddles.push((entry = { user_ids_string: key, unread_message_ids: [] }));
        entry.unread_message_ids.push(id);
      }
    }
    sortUnreads(u);
  }
  if ('recent_private_conversations' in state && m.type === 'private') {
    const list = state.recent_private_conversations as Array<{
      user_ids: number[];
      max_message_id: number;
    }>;
    const key = JSON.stringify(others);
    const entry = list.find((c) => JSON.stringify(c.user_ids) === key);
    if (entry) entry.max_message_id = Math.max(entry.max_message_id, id);
    else list.push({ user_ids: others, max_message_id: id });
    list.sort((a, b) => b.max_message_id - a.max_message_id);
  }
}

function applyUpdateMessage(state: State, e: Obj): void {
  if (!('unread_msgs' in state)) return;
  const u = state.unread_msgs as Unreads;
  const ids = e.message_ids as number[];
  const moved = e.new_stream_id !== undefined || e.subject !== undefined;
  if (moved) {
    const fromStream = e.stream_id as number;
    const fromTopic = e.orig_subject as string;
    const toStream = (e.new_stream_id ?? fromStream) as number;
    const toTopic = (e.subject ?? fromTopic) as string;
    const bucket = u.streams.find((s) => s.stream_id === fromStream && s.topic === fromTopic);
    const unread = ids.filter((id) => bucket?.unread_message_ids.includes(id));
    const mentioned = new Set(unread.filter((id) => u.mentions.includes(id)));
    removeUnreads(state, u, unread);
    for (const id of unread) {
      addStreamUnread(state, u, toStream, toTopic, id, mentioned.has(id) ? ['mentioned'] : []);
    }
  }
  // Mentions follow the edited message's flags while it is unread.
  const id = e.message_id as number;
  const flags = e.flags as string[];
  const where = u.streams.find((s) => s.unread_message_ids.includes(id));
  const unread =
    where !== undefined || [...u.pms, ...u.huddles].some((x) => x.unread_message_ids.includes(id));
  if (unread && !flags.includes('read')) {
    const counts = isMention(flags, where ? !muted(state, where.stream_id, where.topic) : true);
    u.mentions = u.mentions.filter((m) => m !== id);
    if (counts) u.mentions.push(id);
  }
  sortUnreads(u);
}

function applyDeleteMessage(state: State, e: Obj): void {
  const ids = (e.message_ids as number[] | undefined) ?? [e.message_id as number];
  if ('unread_msgs' in state) removeUnreads(state, state.unread_msgs as Unreads, ids);
  if ('starred_messages' in state) {
    state.starred_messages = (state.starred_messages as number[]).filter((id) => !ids.includes(id));
  }
}

/**
 * Recompute the unread count after topic or channel muting changed: messages in muted
 * conversations stay listed but do not count. (Wildcard mentions in them are not
 * recomputed: the snapshot does not say which unread messages are wildcard mentions.)
 */
export function recountUnreads(state: State): void {
  if (!('unread_msgs' in state)) return;
  const u = state.unread_msgs as Unreads;
  let count = 0;
  for (const s of u.streams) {
    if (!muted(state, s.stream_id, s.topic)) count += s.unread_message_ids.length;
  }
  for (const list of [u.pms, u.huddles]) {
    for (const e of list) count += e.unread_message_ids.length;
  }
  u.count = count;
}

/** Apply a message, update_message or delete_message event; returns false for other types. */
export function applyMessageEvent(state: State, e: Obj): boolean {
  switch (e.type) {
    case 'message':
      applyNewMessage(state, e);
      return true;
    case 'update_message':
      applyUpdateMessage(state, e);
      return true;
    case 'delete_message':
      applyDeleteMessage(state, e);
      return true;
    default:
      return false;
  }
}

const strict = (fields: Record<string, TSchema>) =>
  Type.Object(fields, { additionalProperties: false });
const opt = Type.Optional;
const TopicLinks = Type.Array(strict({ text: Type.String(), url: Type.String() }));

/** The Message resource, as message events carry it. */
const Message = strict({
  id: Type.Integer(),
  type: Type.Union([Type.Literal('stream'), Type.Literal('private')]),
  stream_id: opt(Type.Integer()),
  subject: Type.String(),
  content: Type.String(),
  content_type: Type.Union([Type.Literal('text/html'), Type.Literal('text/x-markdown')]),
  timestamp: Type.Integer(),
  client: Type.String(),
  is_me_message: Type.Boolean(),
  avatar_url: Type.Union([Type.String(), Type.Null()]),
  display_recipient: Type.Union([
    Type.String(),
    Type.Array(
      strict({
        id: Type.Integer(),
        email: Type.String(),
        full_name: Type.String(),
        is_mirror_dummy: Type.Boolean(),
      }),
    ),
  ]),
  recipient_id: Type.Integer(),
  sender_id: Type.Integer(),
  sender_email: Type.String(),
  sender_full_name: Type.String(),
  sender_realm_str: Type.String(),
  reactions: Type.Array(
    strict({
      emoji_name: Type.String(),
      emoji_code: Type.String(),
      reaction_type: Type.String(),
      user_id: Type.Integer(),
    }),
  ),
  submessages: Type.Array(Type.Unknown()),
  topic_links: TopicLinks,
});

const eventOf = (type: string, fields: Record<string, TSchema>) =>
  strict({ id: Type.Integer({ minimum: 0 }), type: Type.Literal(type), ...fields });

export const MESSAGE_EVENT_SHAPES: Record<string, TSchema[]> = {
  message: [
    eventOf('message', {
      message: Message,
      flags: Type.Array(Type.String()),
      local_message_id: opt(Type.String()),
    }),
  ],
  update_message: [
    eventOf('update_message', {
      user_id: Type.Union([Type.Integer(), Type.Null()]),
      rendering_only: Type.Boolean(),
      message_id: Type.Integer(),
      message_ids: Type.Array(Type.Integer()),
      flags: Type.Array(Type.String()),
      edit_timestamp: Type.Integer(),
      stream_name: opt(Type.String()),
      stream_id: opt(Type.Integer()),
      new_stream_id: opt(Type.Integer()),
      propagate_mode: opt(
        Type.Union([
          Type.Literal('change_one'),
          Type.Literal('change_later'),
          Type.Literal('change_all'),
        ]),
      ),
      orig_subject: opt(Type.String()),
      subject: opt(Type.String()),
      topic_links: opt(TopicLinks),
      orig_content: opt(Type.String()),
      orig_rendered_content: opt(Type.String()),
      content: opt(Type.String()),
      rendered_content: opt(Type.String()),
      is_me_message: opt(Type.Boolean()),
    }),
  ],
};
