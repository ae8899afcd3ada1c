// What a client does with drafts and channel_folder events to its register snapshot
// (drafts, channel_folders), and the declared shapes of those events. Written from the API
// description, independently of the server, for the event-contract suite.
import { Type, type TSchema } from 'typebox';

type Obj = Record<string, unknown>;
type State = Obj;

/** Clients show drafts newest edit first. */
function sortDrafts(list: Obj[]): void {
  list.sort(
    (a, b) =>
      (b.timestamp as number) - (a.timestamp as number) || (b.id as number) - (a.id as number),
  );
}

/** Folders in their order (id breaks ties). */
function sortFolders(list: Obj[]): void {
  list.sort(
    (a, b) => (a.order as number) - (b.order as number) || (a.id as number) - (b.id as number),
  );
}

function applyDrafts(state: State, e: Obj): void {
  if (!('drafts' in state)) return;
  let list = state.drafts as Obj[];
  if (e.op === 'add') {
    list.push(...structuredClone(e.drafts as Obj[]));
  } else if (e.op === 'update') {
    const draft = e.draft as Obj;
    list = list.filter((d) => d.id !== draft.id);
    list.push(structuredClone(draft));
  } else if (e.op === 'remove') {
    list = list.filter((d) => d.id !== e.draft_id);
  } else {
    throw new Error(`drafts event op ${String(e.op)} not handled`);
  }
  sortDrafts(list);
  state.drafts = list;
}

function applyChannelFolder(state: State, e: Obj): void {
  if (!('channel_folders' in state)) return;
  const list = state.channel_folders as Obj[];
  if (e.op === 'add') {
    list.push(structuredClone(e.channel_folder as Obj));
  } else if (e.op === 'update') {
    const target = list.find((f) => f.id === e.channel_folder_id);
    if (!target)
      throw new Error(`channel_folder update for unknown folder ${String(e.channel_folder_id)}`);
    Object.assign(target, e.data);
  } else if (e.op === 'reorder') {
    const order = e.order as number[];
    for (const f of list) f.order = order.indexOf(f.id as number);
  } else {
    throw new Error(`channel_folder event op ${String(e.op)} not handled`);
  }
  sortFolders(list);
}

/**
 * A user who stops synchronizing drafts has none left on the server; the client keeps its
 * own copies elsewhere, so its snapshot of the server's drafts is empty.
 */
export function applyDraftsSetting(state: State, e: Obj): void {
  // The modern (user_settings) and the legacy (update_display_settings) form.
  const name = e.property ?? e.setting_name;
  const value = 'value' in e ? e.value : e.setting;
  if (name === 'enable_drafts_synchronization' && value === false && 'drafts' in state)
    state.drafts = [];
}

/** Apply a drafts or channel_folder event; returns false for other types. */
export function applyDraftsFoldersEvent(state: State, e: Obj): boolean {
  if (e.type === 'drafts') applyDrafts(state, e);
  else if (e.type === 'channel_folder') applyChannelFolder(state, e);
  else return false;
  return true;
}

const strict = (fields: Record<string, TSchema>) =>
  Type.Object(fields, { additionalProperties: false });
const eventOf = (type: string, op: string, fields: Record<string, TSchema>) =>
  strict({
    id: Type.Integer({ minimum: 0 }),
    type: Type.Literal(type),
    op: Type.Literal(op),
    ...fields,
  });

const Draft = strict({
  id: Type.Integer(),
  type: Type.Union([Type.Literal(''), Type.Literal('stream'), Type.Literal('private')]),
  to: Type.Array(Type.Integer()),
  topic: Type.String(),
  content: Type.String(),
  timestamp: Type.Integer(),
});

const ChannelFolder = strict({
  id: Type.Integer(),
  name: Type.String(),
  description: Type.String(),
  rendered_description: Type.String(),
  order: Type.Integer(),
  date_created: Type.Integer(),
  creator_id: Type.Union([Type.Integer(), Type.Null()]),
  is_archived: Type.Boolean(),
});

export const DRAFTS_FOLDERS_EVENT_SHAPES: Record<string, TSchema[]> = {
  drafts: [
    eventOf('drafts', 'add', { drafts: Type.Array(Draft) }),
    eventOf('drafts', 'update', { draft: Draft }),
    eventOf('drafts', 'remove', { draft_id: Type.Integer() }),
  ],
  channel_folder: [
    eventOf('channel_folder', 'add', { channel_folder: ChannelFolder }),
    eventOf('channel_folder', 'update', {
      channel_folder_id: Type.Integer(),
      data: Type.Union([
        strict({ name: Type.String() }),
        strict({ description: Type.String(), rendered_description: Type.String() }),
        strict({ is_archived: Type.Boolean() }),
      ]),
    }),
    eventOf('channel_folder', 'reorder', { order: Type.Array(Type.Integer()) }),
  ],
};
