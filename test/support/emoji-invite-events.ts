// What a client does with realm_emoji and invites_changed events to its register snapshot,
// and the declared shapes of those events. Written from the API description, independently
// of the server, for the event-contract suite.
import { Type, type TSchema } from 'typebox';

type Obj = Record<string, unknown>;

/** Apply a custom emoji or invitation event; returns false for other types. */
export function applyEmojiInviteEvent(state: Obj, e: Obj): boolean {
  switch (e.type) {
    // The event carries the whole map, deactivated emoji included.
    case 'realm_emoji':
      if ('realm_emoji' in state) state.realm_emoji = structuredClone(e.realm_emoji);
      return true;
    // No snapshot key holds invitations: clients refetch GET /invites.
    case 'invites_changed':
      return true;
    default:
      return false;
  }
}

const strict = (fields: Record<string, TSchema>) =>
  Type.Object(fields, { additionalProperties: false });

const RealmEmoji = strict({
  id: Type.String(),
  name: Type.String(),
  source_url: Type.String(),
  still_url: Type.Union([Type.String(), Type.Null()]),
  deactivated: Type.Boolean(),
  author_id: Type.Union([Type.Integer(), Type.Null()]),
});

export const EMOJI_INVITE_EVENT_SHAPES: Record<string, TSchema[]> = {
  realm_emoji: [
    strict({
      id: Type.Integer({ minimum: 0 }),
      type: Type.Literal('realm_emoji'),
      op: Type.Literal('update'),
      realm_emoji: Type.Record(Type.String(), RealmEmoji),
    }),
  ],
  invites_changed: [
    strict({ id: Type.Integer({ minimum: 0 }), type: Type.Literal('invites_changed') }),
  ],
};
