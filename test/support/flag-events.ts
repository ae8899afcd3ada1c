// What a client does with update_message_flags events to its register snapshot
// (unread_msgs, starred_messages), and the declared shapes of those events. Written from
// the API description, independently of the server, for the event-contract suite.
import { Type, type TSchema } from 'typebox';
import { addStreamUnread, removeUnreads, sortUnreads, type Unreads } from './message-events.ts';

type Obj = Record<string, unknown>;
type State = Obj;

const byNumber = (a: number, b: number) => a - b;

/** Put newly unread messages back into unread_msgs from the event's message_details. */
function addUnreads(state: State, u: Unreads, ids: number[], details: Record<string, Obj>): void {
  const me = state.user_id as number;
  for (const id of ids) {
    const d = details[String(id)];
    const flags = d.mentioned === true ? ['mentioned'] : [];
    if (d.type === 'stream') {
      addStreamUnread(state, u, d.stream_id as number, d.topic as string, id, flags);
      continue;
    }
    u.count += 1;
    if (d.mentioned === true) u.mentions.push(id);
    const others = [...(d.user_ids as number[])].sort(byNumber);
    if (others.length <= 1) {
      const other = others[0] ?? me;
      let entry = u.pms.find((p) => p.other_user_id === other);
      if (!entry) {
        u.pms.push((entry = { other_user_id: other, sender_id: other, unread_message_ids: [] }));
      }
      entry.unread_message_ids.push(id);
    } else {
      const key = [...others, me].sort(byNumber).join(',');
      let entry = u.huddles.find((h) => h.user_ids_string === key);
      if (!entry) u.huddles.push((entry = { user_ids_string: key, unread_message_ids: [] }));
      entry.unread_message_ids.push(id);
    }
  }
  sortUnreads(u);
}

export function applyFlagEvent(state: State, e: Obj): void {
  const ids = e.messages as number[];
  const add = e.op === 'add';
  if (e.flag === 'starred' && 'starred_messages' in state) {
    const set = new Set(state.starred_messages as number[]);
    for (const id of ids) {
      if (add) set.add(id);
      else set.delete(id);
    }
    state.starred_messages = [...set].sort(byNumber);
  }
  if (e.flag !== 'read' || !('unread_msgs' in state)) return;
  const u = state.unread_msgs as Unreads;
  if (add && e.all === true) {
    Object.assign(u, { pms: [], streams: [], huddles: [], mentions: [], count: 0 });
  } else if (add) {
    removeUnreads(state, u, ids);
  } else {
    addUnreads(state, u, ids, e.message_details as Record<string, Obj>);
  }
}

const strict = (fields: Record<string, TSchema>) =>
  Type.Object(fields, { additionalProperties: false });

const Details = Type.Record(
  Type.String(),
  Type.Union([
    strict({
      type: Type.Literal('stream'),
      stream_id: Type.Integer(),
      topic: Type.String(),
      unmuted_stream_msg: Type.Boolean(),
      mentioned: Type.Optional(Type.Literal(true)),
    }),
    strict({
      type: Type.Literal('private'),
      user_ids: Type.Array(Type.Integer()),
      mentioned: Type.Optional(Type.Literal(true)),
    }),
  ]),
);

const flagEvent = (op: 'add' | 'remove', extra: Record<string, TSchema> = {}) =>
  strict({
    id: Type.Integer({ minimum: 0 }),
    type: Type.Literal('update_message_flags'),
    op: Type.Literal(op),
    operation: Type.Literal(op),
    flag: Type.Union([Type.Literal('read'), Type.Literal('starred'), Type.Literal('collapsed')]),
    messages: Type.Array(Type.Integer()),
    all: Type.Boolean(),
    ...extra,
  });

export const FLAG_EVENT_SHAPES: Record<string, TSchema[]> = {
  update_message_flags: [
    flagEvent('add'),
    flagEvent('remove', { message_details: Type.Optional(Details) }),
  ],
};
