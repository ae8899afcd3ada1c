// Custom emoji: uploaded by whoever the organization allows, resized to one standard size
// (animated ones stay animated, with a still first frame beside them), and deactivated
// rather than deleted, so old messages and reactions keep showing them.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { normalizeEmojiName } from '../lib/custom-emoji.ts';
import { badRequest, JsonableError, notAllowed } from '../lib/errors.ts';
import { isKnownEmojiName } from '../lib/markdown/index.ts';
import { presentRealmEmojiMap, type RealmEmojiJson } from '../lib/presenters/custom-emoji.ts';
import { EXTRA_EMOJI_NAMES } from '../lib/reactions.ts';
import { isAdmin } from '../lib/roles.ts';
import { unixNow } from '../infra/clock.ts';
import type { Q } from '../store/db.ts';
import * as emojiStore from '../store/custom-emoji.ts';
import type { RealmEmojiRow } from '../store/schema.ts';
import { listActiveUserIds } from '../store/users.ts';
import { accessCurrentActor, checkRealmPermission } from './permissions.ts';
import { readingIn, withTransaction, type Work } from './transaction.ts';

/** The size the reference server stores custom emoji at. */
export const EMOJI_SIZE = 64;

/** The route's transport limit: the largest the setting allows; the setting is checked here. */
export const MAX_EMOJI_UPLOAD_BYTES = 100 * 1024 * 1024;

export interface EmojiUpload {
  data: Buffer;
}

const imageKey = (realmId: number, id: number, ext: string): string =>
  `realms/${realmId}/emoji/${id}.${ext}`;
const stillKey = (realmId: number, id: number): string => `realms/${realmId}/emoji/still-${id}.png`;

/** GET /realm/emoji: every emoji of the organization, deactivated ones included. */
export async function listRealmEmoji(
  ctx: AppContext,
  actor: Actor,
): Promise<Record<string, RealmEmojiJson>> {
  return presentRealmEmojiMap(await emojiStore.listRealmEmoji(ctx.db, actor.realm.id));
}

/** The active emoji, as Markdown rendering looks them up. */
export async function listActiveEmojiRows(db: Q, realmId: number): Promise<RealmEmojiRow[]> {
  return (await emojiStore.listRealmEmoji(db, realmId)).filter((e) => e.deactivated === 0);
}

/**
 * Whether the actor may add an emoji of this name: checked before the image is resized, on
 * the actor as authentication read them, and again, deciding, inside the change.
 */
async function checkMayAdd(ctx: AppContext, actor: Actor, name: string): Promise<void> {
  await checkRealmPermission(ctx, actor, 'can_add_custom_emoji_group');
  if ((isKnownEmojiName(name) || EXTRA_EMOJI_NAMES.includes(name)) && !isAdmin(actor.user)) {
    throw badRequest('Only administrators can override default emoji.');
  }
}

/** POST /realm/emoji/{emoji_name}. */
export async function uploadRealmEmoji(
  ctx: AppContext,
  actor: Actor,
  rawName: string,
  files: EmojiUpload[],
): Promise<void> {
  const name = normalizeEmojiName(rawName);
  await checkMayAdd(ctx, actor, name);
  if (files.length !== 1) throw badRequest('You must upload exactly one file.');
  const [file] = files;
  const limitMib = ctx.config.maxEmojiFileSizeMib;
  if (file.data.length > limitMib * 1024 * 1024) {
    throw new JsonableError(
      `Uploaded file is larger than the allowed limit of ${limitMib} MiB`,
      'BAD_REQUEST',
      413,
    );
  }
  const image = await ctx.images.resizeSquare(file.data, EMOJI_SIZE, { keepAnimation: true });
  const still = image.animated ? await ctx.images.resizeSquare(file.data, EMOJI_SIZE) : null;
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const me = await accessCurrentActor(work.db, actor);
    await checkMayAdd(readingIn(ctx, work), me, name);
    if (await emojiStore.getActiveEmojiByName(work.db, actor.realm.id, name)) {
      throw badRequest('A custom emoji with this name already exists.');
    }
    const row = await emojiStore.insertEmoji(work.db, {
      realm_id: actor.realm.id,
      name,
      author_id: me.user.id,
      file_ext: image.format,
      is_animated: image.animated ? 1 : 0,
      deactivated: 0,
      date_created: unixNow(ctx.clock),
    });
    // Written inside the transaction: a failed write leaves no row pointing at nothing.
    await ctx.files.put(
      imageKey(row.realm_id, row.id, row.file_ext),
      image.bytes,
      image.contentType,
    );
    if (still) await ctx.files.put(stillKey(row.realm_id, row.id), still.bytes, still.contentType);
    await emitRealmEmoji(work, actor.realm.id);
  });
}

/** DELETE /realm/emoji/{emoji_name}: the author or an administrator. */
export async function deactivateRealmEmoji(
  ctx: AppContext,
  actor: Actor,
  rawName: string,
): Promise<void> {
  const name = rawName.trim().toLowerCase().replace(/ /g, '_');
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const me = await accessCurrentActor(work.db, actor);
    const emoji = await emojiStore.getActiveEmojiByName(work.db, actor.realm.id, name);
    if (!emoji) throw new JsonableError(`Emoji '${rawName}' does not exist`, 'BAD_REQUEST', 404);
    if (!isAdmin(me.user) && emoji.author_id !== me.user.id) {
      throw notAllowed('Must be an organization administrator or emoji author');
    }
    await emojiStore.deactivateEmoji(work.db, emoji.id);
    await emitRealmEmoji(work, actor.realm.id);
  });
}

/** The full map, deactivated emoji included, to every active user. */
async function emitRealmEmoji(work: Work, realmId: number): Promise<void> {
  work.emitOnCommit(
    {
      type: 'realm_emoji',
      op: 'update',
      realm_emoji: presentRealmEmojiMap(await emojiStore.listRealmEmoji(work.db, realmId)),
    },
    await listActiveUserIds(work.db, realmId),
  );
}

export interface EmojiFile {
  bytes: Buffer;
  contentType: string;
}

/**
 * An emoji's image, for anyone (like the reference server's local storage): deactivated
 * emoji included, since old messages still show them.
 */
export async function readEmojiImage(
  ctx: AppContext,
  realmId: number,
  id: number,
  ext: string,
  still: boolean,
): Promise<EmojiFile | null> {
  const emoji = await emojiStore.getEmojiById(ctx.db, realmId, id);
  if (!emoji) return null;
  if (still) {
    if (!emoji.is_animated || ext !== 'png') return null;
    return ctx.files.get(stillKey(realmId, id));
  }
  if (ext !== emoji.file_ext) return null;
  return ctx.files.get(imageKey(realmId, id, ext));
}
