// Drafts: a user's unsent messages, kept on the server so all of the user's clients share
// them. Only for users with enable_drafts_synchronization; each change goes to the user's
// own clients as a drafts event.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { MAX_TOPIC_LENGTH } from '../lib/channel-settings.ts';
import { badRequest, resourceNotFound } from '../lib/errors.ts';
import { normalizeContent } from '../lib/messages.ts';
import { presentDraft, type PresentedDraft } from '../lib/presenters/drafts.ts';
import { readUserSettings } from '../lib/user-settings.ts';
import { unixNow } from '../infra/clock.ts';
import type { Q } from '../store/db.ts';
import * as draftsStore from '../store/drafts.ts';
import type { UserRow } from '../store/schema.ts';
import * as usersStore from '../store/users.ts';
import { loadChannelAccessById } from './channel-access.ts';
import { accessCurrentActor } from './permissions.ts';
import { withTransaction, type Work } from './transaction.ts';

/** The most drafts a register snapshot carries. */
export const MAX_DRAFTS_IN_REGISTER = 1000;

export interface DraftInput {
  type: '' | 'stream' | 'private';
  to: number[];
  topic: string;
  content: string;
  /** UNIX seconds, fractions allowed; the server's time when absent. */
  timestamp?: number;
}

interface CheckedDraft {
  type: string;
  to_ids: string;
  topic: string;
  content: string;
  last_edit_time: number;
}

const draftNotFound = () => resourceNotFound('Draft does not exist');

function checkSynchronizing(actor: Actor): void {
  if (readUserSettings(actor.user.settings).enable_drafts_synchronization === false)
    throw badRequest('User has disabled synchronizing drafts.');
}

/**
 * A draft as stored: content normalized as a message's, the topic kept only for channel
 * drafts, the recipients checked and in a canonical order.
 */
async function checkDraft(
  ctx: AppContext,
  db: Q,
  actor: Actor,
  draft: DraftInput,
): Promise<CheckedDraft> {
  const content = normalizeContent(draft.content);
  const timestamp = draft.timestamp ?? unixNow(ctx.clock);
  if (timestamp < 0) throw badRequest('Timestamp must not be negative.');
  let type: string = draft.type;
  let to: number[] = [];
  let topic = '';
  if (draft.type === 'stream') {
    if (draft.topic.includes('\u0000')) throw badRequest('Topic must not contain null bytes');
    const chars = [...draft.topic];
    topic =
      chars.length > MAX_TOPIC_LENGTH
        ? `${chars.slice(0, MAX_TOPIC_LENGTH - 3).join('')}...`
        : draft.topic;
    if (draft.to.length !== 1)
      throw badRequest('Must specify exactly 1 channel ID for channel messages');
    const { channel } = await loadChannelAccessById(db, actor, draft.to[0], { content: true });
    to = [channel.id];
  } else if (draft.type === 'private' && draft.to.length > 0) {
    to = await checkDirectRecipients(db, actor, draft.to);
  } else {
    // An unaddressed draft, or a direct one without recipients yet.
    type = '';
  }
  return {
    type,
    to_ids: JSON.stringify(to),
    topic,
    content,
    last_edit_time: Math.floor(timestamp),
  };
}

/** The other participants by id (the user alone for a note to self). */
async function checkDirectRecipients(db: Q, actor: Actor, ids: number[]): Promise<number[]> {
  const wanted = [...new Set(ids)];
  const users = await usersStore.listUsersByIds(db, actor.realm.id, wanted);
  const missing = wanted.find((id) => !users.some((u) => u.id === id));
  if (missing !== undefined) throw badRequest(`Invalid user ID ${missing}`);
  const gone = users.find((u) => u.is_active !== 1);
  if (gone) throw badRequest(`'${gone.email}' is no longer using Parley.`);
  const others = wanted.filter((id) => id !== actor.user.id).sort((a, b) => a - b);
  return others.length > 0 ? others : [actor.user.id];
}

/** GET /drafts: every draft, oldest edit first. */
export async function listDrafts(
  ctx: AppContext,
  actor: Actor,
): Promise<{ count: number; drafts: PresentedDraft[] }> {
  checkSynchronizing(actor);
  const rows = await draftsStore.listDrafts(ctx.db, actor.user.id, { newestFirst: false });
  return { count: rows.length, drafts: rows.map(presentDraft) };
}

/** The register snapshot's drafts: newest edit first, at most MAX_DRAFTS_IN_REGISTER. */
export async function listDraftsForRegister(db: Q, user: UserRow): Promise<PresentedDraft[]> {
  const rows = await draftsStore.listDrafts(db, user.id, {
    newestFirst: true,
    limit: MAX_DRAFTS_IN_REGISTER,
  });
  return rows.map(presentDraft);
}

/** POST /drafts: the new drafts' ids, in the order given. */
export async function createDrafts(
  ctx: AppContext,
  actor: Actor,
  drafts: DraftInput[],
): Promise<number[]> {
  return withTransaction(ctx, actor.realm.id, async (work) => {
    // Inside: turning synchronizing off deletes every draft; none may be stored after it.
    // The channels a draft may name are the actor's as they are now (a guest's by now).
    const me = await accessCurrentActor(work.db, actor);
    checkSynchronizing(me);
    const checked: CheckedDraft[] = [];
    for (const d of drafts) checked.push(await checkDraft(ctx, work.db, me, d));
    const created: PresentedDraft[] = [];
    for (const c of checked) {
      created.push(
        presentDraft(await draftsStore.insertDraft(work.db, { user_id: me.user.id, ...c })),
      );
    }
    if (created.length > 0)
      work.emitOnCommit({ type: 'drafts', op: 'add', drafts: created }, [me.user.id]);
    return created.map((d) => d.id);
  });
}

/** PATCH /drafts/{id}: replace the draft. */
export async function editDraft(
  ctx: AppContext,
  actor: Actor,
  draftId: number,
  draft: DraftInput,
): Promise<void> {
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const me = await accessCurrentActor(work.db, actor);
    checkSynchronizing(me);
    const row = await draftsStore.getDraft(work.db, me.user.id, draftId);
    if (!row) throw draftNotFound();
    const checked = await checkDraft(ctx, work.db, me, draft);
    const updated = await draftsStore.updateDraft(work.db, row.id, checked);
    work.emitOnCommit({ type: 'drafts', op: 'update', draft: presentDraft(updated) }, [me.user.id]);
  });
}

/** DELETE /drafts/{id}. */
export async function deleteDraft(ctx: AppContext, actor: Actor, draftId: number): Promise<void> {
  checkSynchronizing(actor);
  await withTransaction(ctx, actor.realm.id, async (work) => {
    // As the user is now: deactivated since, they delete nothing; no longer synchronizing,
    // they are answered so rather than told their drafts are gone (architecture.md, Actions).
    const me = await accessCurrentActor(work.db, actor);
    checkSynchronizing(me);
    const row = await draftsStore.getDraft(work.db, me.user.id, draftId);
    if (!row) throw draftNotFound();
    await draftsStore.deleteDraft(work.db, row.id);
    work.emitOnCommit({ type: 'drafts', op: 'remove', draft_id: row.id }, [me.user.id]);
  });
}

/**
 * A user who stops synchronizing drafts has them deleted from the server. No remove events,
 * as in the reference server: the clients keep their own copies, which remove events would
 * delete.
 */
export async function doStopSynchronizingDrafts(work: Work, user: UserRow): Promise<void> {
  await draftsStore.deleteUserDrafts(work.db, user.id);
}
