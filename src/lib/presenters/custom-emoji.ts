// Custom emoji as the API shows them: paths relative to the organization's URL, served by
// http/routes/custom-emoji.ts.
import type { RealmEmojiRow } from '../../store/schema.ts';

export interface RealmEmojiJson {
  id: string;
  name: string;
  source_url: string;
  still_url: string | null;
  deactivated: boolean;
  author_id: number | null;
}

export const emojiImagePath = (realmId: number, id: number, ext: string): string =>
  `/user_avatars/${realmId}/emoji/images/${id}.${ext}`;

/** The first frame of an animated emoji, always a PNG. */
export const emojiStillPath = (realmId: number, id: number): string =>
  `/user_avatars/${realmId}/emoji/images/still/${id}.png`;

export function presentRealmEmoji(row: RealmEmojiRow): RealmEmojiJson {
  return {
    id: String(row.id),
    name: row.name,
    source_url: emojiImagePath(row.realm_id, row.id, row.file_ext),
    still_url: row.is_animated ? emojiStillPath(row.realm_id, row.id) : null,
    deactivated: row.deactivated === 1,
    author_id: row.author_id,
  };
}

/** The realm_emoji map of GET /realm/emoji, register and events: keyed by id, all emoji. */
export function presentRealmEmojiMap(rows: RealmEmojiRow[]): Record<string, RealmEmojiJson> {
  return Object.fromEntries(rows.map((row) => [String(row.id), presentRealmEmoji(row)]));
}
