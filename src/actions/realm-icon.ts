// The organization icon: uploaded by administrators, stored as a 100×100 PNG in the file
// store, or generated. Every change advances icon_version, so icon URLs change with it.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { badRequest, JsonableError } from '../lib/errors.ts';
import { realmIconUrl } from '../lib/presenters/server.ts';
import { MAX_ICON_FILE_SIZE_MIB } from '../lib/server-limits.ts';
import * as realmsStore from '../store/realms.ts';
import { listActiveUserIds } from '../store/users.ts';
import type { RealmRow } from '../store/schema.ts';
import { accessCurrentAdmin, checkAdmin } from './permissions.ts';
import { withTransaction } from './transaction.ts';

/** The size the reference server stores organization icons at. */
export const REALM_ICON_SIZE = 100;
export const MAX_ICON_FILE_BYTES = MAX_ICON_FILE_SIZE_MIB * 1024 * 1024;

type IconSource = 'U' | 'G';

/** One file per version: a version's bytes never change, so its URL can be cached for long. */
const iconKey = (realmId: number, version: number): string =>
  `realms/${realmId}/icon-${version}.png`;

export interface IconUpload {
  data: Buffer;
}

/**
 * Switch the icon source and advance the version in one transaction; for an upload, the
 * new file is written inside it, so a failed write changes nothing. The replaced file is
 * deleted after commit.
 */
async function doChangeIconSource(
  ctx: AppContext,
  actor: Actor,
  source: IconSource,
  png: Buffer | null,
): Promise<{ icon_url: string }> {
  const after = await withTransaction(ctx, actor.realm.id, async (work) => {
    await accessCurrentAdmin(work.db, actor);
    // Writing first takes the row lock (PostgreSQL), so the version read next is the latest.
    await realmsStore.updateRealm(work.db, actor.realm.id, { icon_source: source });
    const realm = (await realmsStore.getRealmById(work.db, actor.realm.id))!;
    const after: RealmRow = { ...realm, icon_version: realm.icon_version + 1 };
    await realmsStore.updateRealm(work.db, after.id, { icon_version: after.icon_version });
    if (png) await ctx.files.put(iconKey(after.id, after.icon_version), png, 'image/png');
    work.emitOnCommit(
      {
        type: 'realm',
        op: 'update_dict',
        property: 'icon',
        data: { icon_url: realmIconUrl(after), icon_source: source },
      },
      await listActiveUserIds(work.db, after.id),
    );
    return after;
  });
  // The previous version's file, if it was an upload (deleting a missing key is a no-op).
  await deleteIconFile(ctx, after.id, after.icon_version - 1);
  return { icon_url: realmIconUrl(after) };
}

/** A leftover file is harmless; a failed delete must not fail the change that committed. */
async function deleteIconFile(ctx: AppContext, realmId: number, version: number): Promise<void> {
  try {
    await ctx.files.delete(iconKey(realmId, version));
  } catch (err) {
    ctx.log.warn({ err, realmId, version }, 'could not delete a replaced organization icon');
  }
}

/** POST /realm/icon: administrators; exactly one image, stored as a 100×100 PNG. */
export async function uploadRealmIcon(
  ctx: AppContext,
  actor: Actor,
  files: IconUpload[],
): Promise<{ icon_url: string }> {
  checkAdmin(actor);
  if (files.length !== 1) throw badRequest('You must upload exactly one icon.');
  const [file] = files;
  if (file.data.length > MAX_ICON_FILE_BYTES) {
    throw new JsonableError(
      `Uploaded file is larger than the allowed limit of ${MAX_ICON_FILE_SIZE_MIB} MiB`,
      'BAD_REQUEST',
      413,
    );
  }
  const icon = await ctx.images.resizeSquare(file.data, REALM_ICON_SIZE);
  return doChangeIconSource(ctx, actor, 'U', icon.bytes);
}

/** DELETE /realm/icon: administrators; back to the generated icon. */
export async function deleteRealmIcon(
  ctx: AppContext,
  actor: Actor,
): Promise<{ icon_url: string }> {
  checkAdmin(actor);
  return doChangeIconSource(ctx, actor, 'G', null);
}

export interface RealmIconFile {
  bytes: Buffer;
  contentType: string;
  version: number;
}

/** The current uploaded icon of an active organization, for anyone (icons are public). */
export async function readRealmIcon(
  ctx: AppContext,
  realmId: number,
): Promise<RealmIconFile | null> {
  const realm = await realmsStore.getRealmById(ctx.db, realmId);
  if (!realm || realm.deactivated || realm.icon_source !== 'U') return null;
  const file = await ctx.files.get(iconKey(realm.id, realm.icon_version));
  return file && { ...file, version: realm.icon_version };
}
