// Which emoji a reaction may use, resolved and validated without the database: built-in
// Unicode emoji (lib/markdown's table), the built-in extra emoji, and custom emoji (which
// the caller looks up and passes in).
import { badRequest } from './errors.ts';
import { emojiCodeForName, emojiNameForCode } from './markdown/index.ts';
import { lookupOwn } from './validation.ts';

export type ReactionType = 'unicode_emoji' | 'realm_emoji' | 'svc_extra_emoji';

/**
 * Built-in emoji that are not Unicode: their code is their name. `zulip` keeps the name
 * existing clients offer in their pickers, so their reactions keep working.
 */
export const EXTRA_EMOJI_NAMES: readonly string[] = ['zulip'];

/** Existing clients send the upstream name of the extra-emoji type; it means the same. */
const TYPE_ALIASES: Record<string, string> = { zulip_extra_emoji: 'svc_extra_emoji' };

/** The reaction type as stored and shown: legacy names become the current one. */
export function canonicalReactionType(type: string): string {
  return lookupOwn(TYPE_ALIASES, type) ?? type;
}

/** A custom emoji as reactions need it. */
export interface ReactionCustomEmoji {
  id: number;
  name: string;
  deactivated: boolean;
}

/**
 * The emoji a bare name means: the active custom emoji of that name (custom emoji may
 * override built-in names), else a built-in extra emoji, else a Unicode emoji.
 */
export function emojiForName(
  name: string,
  custom?: ReactionCustomEmoji,
): { code: string; type: ReactionType } {
  if (custom && !custom.deactivated) return { code: String(custom.id), type: 'realm_emoji' };
  if (EXTRA_EMOJI_NAMES.includes(name)) return { code: name, type: 'svc_extra_emoji' };
  const code = emojiCodeForName(name);
  if (code !== undefined) return { code, type: 'unicode_emoji' };
  throw badRequest(`Emoji '${name}' does not exist`);
}

/**
 * Refuse a name, code and type that do not name one emoji. For realm_emoji, `custom` is the
 * organization's custom emoji whose id is the code, if any; a deactivated one may not be
 * newly reacted with.
 */
export function checkReactionEmoji(
  name: string,
  code: string,
  type: string,
  custom?: ReactionCustomEmoji,
): void {
  switch (canonicalReactionType(type)) {
    case 'realm_emoji':
      if (!custom || custom.deactivated || String(custom.id) !== code) {
        throw badRequest('Invalid custom emoji.');
      }
      if (custom.name !== name) throw badRequest('Invalid custom emoji name.');
      return;
    case 'svc_extra_emoji':
      if (!EXTRA_EMOJI_NAMES.includes(code)) throw badRequest('Invalid emoji code.');
      if (name !== code) throw badRequest('Invalid emoji name.');
      return;
    case 'unicode_emoji':
      // Any name or alias of the code will do; the code must be a canonical one.
      if (emojiNameForCode(code) === undefined) throw badRequest('Invalid emoji code.');
      if (emojiCodeForName(name) !== code) throw badRequest('Invalid emoji name.');
      return;
    default:
      throw badRequest('Invalid emoji type.');
  }
}
