// A user's alert words. A message's recipients' words are read with messages.ts's
// listAlertWords.
import type { Q } from './db.ts';
import { listAlertWords } from './messages.ts';

// Sorted here rather than in SQL: the databases' collations order text differently.
const byText = (a: string, b: string): number => {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : a < b ? -1 : a > b ? 1 : 0;
};

/** The user's alert words, alphabetically regardless of case. */
export async function listUserAlertWords(db: Q, userId: number): Promise<string[]> {
  return ((await listAlertWords(db, [userId])).get(userId) ?? []).sort(byText);
}

export async function insertAlertWords(db: Q, userId: number, words: string[]): Promise<void> {
  if (words.length === 0) return;
  await db
    .insertInto('alert_words')
    .values(words.map((word) => ({ user_id: userId, word })))
    // A concurrent request may have added the same word.
    .onConflict((oc) => oc.columns(['user_id', 'word']).doNothing())
    .execute();
}

/** Delete these words, matched exactly as stored. */
export async function deleteAlertWords(db: Q, userId: number, words: string[]): Promise<void> {
  if (words.length === 0) return;
  await db
    .deleteFrom('alert_words')
    .where('user_id', '=', userId)
    .where('word', 'in', words)
    .execute();
}
