// Channel folders: administrators create, rename, describe, archive, unarchive and reorder
// them; everyone may list them. Every change goes to all active users of the realm.
// Channels join a folder through their folder_id (see checkChannelFolderId).
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { unprintablePosition } from '../lib/channel-settings.ts';
import { badRequest, type JsonableError } from '../lib/errors.ts';
import {
  presentChannelFolder,
  type PresentedChannelFolder,
} from '../lib/presenters/channel-folders.ts';
import { unixNow } from '../infra/clock.ts';
import * as foldersStore from '../store/channel-folders.ts';
import type { Q } from '../store/db.ts';
import type { ChannelFolderRow, RealmRow } from '../store/schema.ts';
import * as usersStore from '../store/users.ts';
import { renderChannelDescription } from './channels.ts';
import { accessCurrentAdmin, checkAdmin } from './permissions.ts';
import { withTransaction, type Work } from './transaction.ts';

const invalidFolderId = (): JsonableError => badRequest('Invalid channel folder ID');

/** The realm's folders by position; archived ones only when asked (register asks). */
export async function listChannelFolders(
  db: Q,
  realm: RealmRow,
  includeArchived: boolean,
): Promise<PresentedChannelFolder[]> {
  return (await foldersStore.listChannelFolders(db, realm.id, { includeArchived })).map(
    presentChannelFolder,
  );
}

async function accessChannelFolder(db: Q, realm: RealmRow, id: number): Promise<ChannelFolderRow> {
  const folder = await foldersStore.getChannelFolder(db, realm.id, id);
  if (!folder) throw invalidFolderId();
  return folder;
}

/**
 * A folder a channel may be put in: one of the realm's, not archived. null (no folder) and
 * undefined (no change) pass.
 */
export async function checkChannelFolderId(
  db: Q,
  realm: RealmRow,
  folderId: number | null | undefined,
): Promise<void> {
  if (folderId === undefined || folderId === null) return;
  const folder = await foldersStore.getChannelFolder(db, realm.id, folderId);
  if (!folder || folder.is_archived === 1) throw invalidFolderId();
}

async function checkFolderName(db: Q, realm: RealmRow, name: string): Promise<void> {
  if (name.trim() === '') throw badRequest("Channel folder name can't be empty.");
  const position = unprintablePosition(name);
  if (position !== null)
    throw badRequest(`Invalid character in channel folder name, at position ${position}.`);
  if (await foldersStore.channelFolderNameTaken(db, realm.id, name))
    throw badRequest('Channel folder name already in use');
}

async function emitToEveryone(
  work: Work,
  realm: RealmRow,
  event: Record<string, unknown>,
): Promise<void> {
  const users = await usersStore.listActiveUserIds(work.db, realm.id);
  work.emitOnCommit({ type: 'channel_folder', ...event }, users);
}

/** POST /channel_folders/create. */
export async function createChannelFolder(
  ctx: AppContext,
  actor: Actor,
  params: { name: string; description: string },
): Promise<number> {
  checkAdmin(actor);
  return withTransaction(ctx, actor.realm.id, async (work) => {
    const me = await accessCurrentAdmin(work.db, actor);
    const realm = me.realm;
    await checkFolderName(work.db, realm, params.name);
    const folder = await foldersStore.insertChannelFolder(work.db, {
      realm_id: realm.id,
      name: params.name,
      description: params.description,
      rendered_description: await renderChannelDescription(
        ctx,
        work.db,
        realm,
        me.user,
        params.description,
      ),
      date_created: unixNow(ctx.clock),
      creator_id: me.user.id,
      is_archived: 0,
    });
    await emitToEveryone(work, realm, { op: 'add', channel_folder: presentChannelFolder(folder) });
    return folder.id;
  });
}

/** PATCH /channel_folders: new positions; the list must name every folder once. */
export async function reorderChannelFolders(
  ctx: AppContext,
  actor: Actor,
  order: number[],
): Promise<void> {
  checkAdmin(actor);
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const { realm } = await accessCurrentAdmin(work.db, actor);
    const folders = await foldersStore.listChannelFolders(work.db, realm.id, {
      includeArchived: true,
    });
    const known = new Set(folders.map((f) => f.id));
    const listed = new Set(order);
    const exact =
      listed.size === order.length &&
      order.length === known.size &&
      order.every((id) => known.has(id));
    if (!exact) throw badRequest('Invalid order mapping.');
    for (const [position, id] of order.entries()) {
      await foldersStore.updateChannelFolder(work.db, id, { sort_order: position });
    }
    await emitToEveryone(work, realm, { op: 'reorder', order });
  });
}

export interface UpdateChannelFolderParams {
  name?: string;
  description?: string;
  is_archived?: boolean;
}

/** PATCH /channel_folders/{id}: one update event per field that changes. */
export async function updateChannelFolder(
  ctx: AppContext,
  actor: Actor,
  folderId: number,
  p: UpdateChannelFolderParams,
): Promise<void> {
  checkAdmin(actor);
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const me = await accessCurrentAdmin(work.db, actor);
    const realm = me.realm;
    const folder = await accessChannelFolder(work.db, realm, folderId);
    const rename = p.name !== undefined && p.name !== folder.name;
    const describe = p.description !== undefined && p.description !== folder.description;
    const archive = p.is_archived !== undefined && (folder.is_archived === 1) !== p.is_archived;
    // Every check before any change, so a refused request changes nothing.
    if (rename) await checkFolderName(work.db, realm, p.name!);
    if (
      archive &&
      p.is_archived &&
      (await foldersStore.channelFolderHasChannels(work.db, folderId))
    )
      throw badRequest('You need to remove all the channels from this folder to archive it.');
    const update = (data: Record<string, unknown>) =>
      emitToEveryone(work, realm, { op: 'update', channel_folder_id: folderId, data });
    if (rename) {
      await foldersStore.updateChannelFolder(work.db, folderId, { name: p.name });
      await update({ name: p.name });
    }
    if (describe) {
      const description = p.description!;
      const rendered = await renderChannelDescription(ctx, work.db, realm, me.user, description);
      await foldersStore.updateChannelFolder(work.db, folderId, {
        description,
        rendered_description: rendered,
      });
      await update({ description, rendered_description: rendered });
    }
    if (archive) {
      await foldersStore.updateChannelFolder(work.db, folderId, {
        is_archived: p.is_archived ? 1 : 0,
      });
      await update({ is_archived: p.is_archived });
    }
  });
}
