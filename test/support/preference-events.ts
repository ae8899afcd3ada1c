// What a client does with reaction, user_topic, muted_topics and alert_words events to its
// register snapshot (user_topics, muted_topics, alert_words, and the unread count that
// topic preferences decide), and the declared shapes of those events. Written from the
// API description, independently of the server, for the event-contract suite.
import { Type, type TSchema } from 'typebox';
import { recountUnreads } from './message-events.ts';

type Obj = Record<string, unknown>;
type State = Obj;

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A client keeps one preference per topic regardless of case; policy 0 means none. */
function applyUserTopic(state: State, e: Obj): void {
  if ('user_topics' in state) {
    const key = String(e.topic_name).toLowerCase();
    const list = (state.user_topics as Obj[]).filter(
      (u) => !(u.stream_id === e.stream_id && String(u.topic_name).toLowerCase() === key),
    );
    if (e.visibility_policy !== 0) {
      const { stream_id, topic_name, last_updated, visibility_policy } = e;
      list.push({ stream_id, topic_name, last_updated, visibility_policy });
    }
    list.sort(
      (a, b) =>
        (a.stream_id as number) - (b.stream_id as number) ||
        byText(String(a.topic_name).toLowerCase(), String(b.topic_name).toLowerCase()) ||
        byText(String(a.topic_name), String(b.topic_name)),
    );
    state.user_topics = list;
  }
  // Muting and unmuting topics changes which unread messages count.
  recountUnreads(state);
}

/** The legacy list names channels: a renamed channel's entries take the new name. */
export function renameInMutedTopics(state: State, e: Obj): void {
  if (!('muted_topics' in state) || e.op !== 'update' || e.property !== 'name') return;
  for (const entry of state.muted_topics as unknown[][]) {
    if (entry[0] === e.name) entry[0] = e.value;
  }
}

/** Apply a preference or reaction event; returns false for other types. */
export function applyPreferenceEvent(state: State, e: Obj): boolean {
  switch (e.type) {
    // No snapshot key holds reactions (clients keep them with the messages they fetch).
    case 'reaction':
      return true;
    case 'user_topic':
      applyUserTopic(state, e);
      return true;
    case 'muted_topics':
      if ('muted_topics' in state) state.muted_topics = structuredClone(e.muted_topics);
      return true;
    case 'alert_words':
      if ('alert_words' in state) state.alert_words = structuredClone(e.alert_words);
      return true;
    default:
      return false;
  }
}

const strict = (fields: Record<string, TSchema>) =>
  Type.Object(fields, { additionalProperties: false });
const eventOf = (type: string, fields: Record<string, TSchema>) =>
  strict({ id: Type.Integer({ minimum: 0 }), type: Type.Literal(type), ...fields });

const Reaction = (op: string) =>
  eventOf('reaction', {
    op: Type.Literal(op),
    message_id: Type.Integer(),
    emoji_name: Type.String(),
    emoji_code: Type.String(),
    reaction_type: Type.Union([
      Type.Literal('unicode_emoji'),
      Type.Literal('realm_emoji'),
      Type.Literal('svc_extra_emoji'),
    ]),
    user_id: Type.Integer(),
    user: strict({ user_id: Type.Integer(), email: Type.String(), full_name: Type.String() }),
  });

export const PREFERENCE_EVENT_SHAPES: Record<string, TSchema[]> = {
  reaction: [Reaction('add'), Reaction('remove')],
  user_topic: [
    eventOf('user_topic', {
      stream_id: Type.Integer(),
      topic_name: Type.String(),
      last_updated: Type.Integer(),
      visibility_policy: Type.Union([0, 1, 2, 3].map((v) => Type.Literal(v))),
    }),
  ],
  muted_topics: [
    eventOf('muted_topics', {
      muted_topics: Type.Array(Type.Tuple([Type.String(), Type.String(), Type.Integer()])),
    }),
  ],
  alert_words: [eventOf('alert_words', { alert_words: Type.Array(Type.String()) })],
};
