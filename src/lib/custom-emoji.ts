// Custom emoji names: letters, digits, dashes and spaces; case-insensitive, and a space
// the same as an underscore, so each name has one stored spelling.
import { badRequest } from './errors.ts';

export const MAX_EMOJI_NAME_LENGTH = 60;

/** The stored spelling of a name as typed, or a JsonableError saying what is wrong. */
export function normalizeEmojiName(raw: string): string {
  const name = raw.trim().toLowerCase().replace(/ /g, '_');
  if (name === '') throw badRequest('Emoji name is missing');
  if (name.length > MAX_EMOJI_NAME_LENGTH) throw badRequest('Emoji name is too long');
  // ASCII only, as the reference server and the Markdown :name: syntax accept.
  if (!/^[0-9a-z_-]+$/.test(name)) {
    throw badRequest('Invalid characters in emoji name');
  }
  if (/[_-]$/.test(name)) throw badRequest('Emoji names must end with either a letter or digit.');
  return name;
}
