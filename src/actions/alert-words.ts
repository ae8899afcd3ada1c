// A user's alert words: words or phrases that flag a message has_alert_word when it is
// sent to them (see messages.ts). Kept as given, trimmed, and unique regardless of case;
// removal also ignores case. Every answer is the whole list (alphabetical); a change sends the whole
// list to the user's clients as alert_words.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import * as alertWordsStore from '../store/alert-words.ts';
import { accessCurrentActor } from './permissions.ts';
import { withTransaction, type Work } from './transaction.ts';

/** Trimmed, without blanks. */
function cleanWords(words: string[]): string[] {
  return words.map((w) => w.trim()).filter((w) => w !== '');
}

export async function listAlertWords(ctx: AppContext, actor: Actor): Promise<string[]> {
  return alertWordsStore.listUserAlertWords(ctx.db, actor.user.id);
}

export async function addAlertWords(
  ctx: AppContext,
  actor: Actor,
  words: string[],
): Promise<string[]> {
  return withTransaction(ctx, actor.realm.id, async (work) => {
    // A user deactivated since changes nothing of theirs (architecture.md, Actions).
    const me = await accessCurrentActor(work.db, actor);
    const userId = me.user.id;
    const known = new Set(
      (await alertWordsStore.listUserAlertWords(work.db, userId)).map((w) => w.toLowerCase()),
    );
    const added: string[] = [];
    for (const word of cleanWords(words)) {
      const key = word.toLowerCase();
      if (known.has(key)) continue;
      known.add(key);
      added.push(word);
    }
    await alertWordsStore.insertAlertWords(work.db, userId, added);
    return finish(work, userId, added.length > 0);
  });
}

export async function removeAlertWords(
  ctx: AppContext,
  actor: Actor,
  words: string[],
): Promise<string[]> {
  return withTransaction(ctx, actor.realm.id, async (work) => {
    const me = await accessCurrentActor(work.db, actor);
    const userId = me.user.id;
    const gone = new Set(cleanWords(words).map((w) => w.toLowerCase()));
    const removed = (await alertWordsStore.listUserAlertWords(work.db, userId)).filter((w) =>
      gone.has(w.toLowerCase()),
    );
    await alertWordsStore.deleteAlertWords(work.db, userId, removed);
    return finish(work, userId, removed.length > 0);
  });
}

/** The list after a change, told to the user's clients when it changed. */
async function finish(work: Work, userId: number, changed: boolean): Promise<string[]> {
  const list = await alertWordsStore.listUserAlertWords(work.db, userId);
  if (changed) work.emitOnCommit({ type: 'alert_words', alert_words: list }, [userId]);
  return list;
}
