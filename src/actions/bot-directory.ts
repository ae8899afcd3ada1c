// Reading bots as their managers see them (with credentials): GET /bots, the realm_bots
// register section, and the realm_bot events when someone starts or stops managing bots.
import { presentBot } from '../lib/presenters/bots.ts';
import { isAdmin } from '../lib/roles.ts';
import * as botsStore from '../store/bots.ts';
import type { Q } from '../store/db.ts';
import type { BotConfigDataRow, RealmRow, UserRow } from '../store/schema.ts';
import * as usersStore from '../store/users.ts';
import type { Work } from './transaction.ts';

export async function presentBots(db: Q, bots: UserRow[]): Promise<Record<string, unknown>[]> {
  const ids = bots.map((b) => b.id);
  const services = new Map((await botsStore.listBotServices(db, ids)).map((s) => [s.bot_id, s]));
  const config = new Map<number, BotConfigDataRow[]>();
  for (const row of await botsStore.listBotConfigData(db, ids)) {
    config.set(row.bot_id, [...(config.get(row.bot_id) ?? []), row]);
  }
  return bots.map((b) => presentBot(b, services.get(b.id), config.get(b.id)));
}

/** The bots a user may manage: their own, or every bot for administrators. */
export async function listManagedBots(
  db: Q,
  realmId: number,
  user: UserRow,
): Promise<Record<string, unknown>[]> {
  const bots = isAdmin(user)
    ? await usersStore.listBots(db, realmId)
    : await usersStore.listBotsOwnedBy(db, user.id);
  return presentBots(db, bots);
}

/**
 * Administrators manage every bot: a user who becomes one learns of the bots they do not
 * own (realm_bot add), and one who stops being one forgets them (realm_bot delete).
 */
export async function doAnnounceBotManagement(
  work: Work,
  realm: RealmRow,
  before: UserRow,
  after: UserRow,
): Promise<void> {
  if (isAdmin(before) === isAdmin(after) || after.is_bot || !after.is_active) return;
  const others = (await usersStore.listBots(work.db, realm.id)).filter(
    (b) => b.bot_owner_id !== after.id,
  );
  if (isAdmin(after)) {
    for (const bot of await presentBots(work.db, others))
      work.emitOnCommit({ type: 'realm_bot', op: 'add', bot }, [after.id]);
  } else {
    for (const bot of others)
      work.emitOnCommit({ type: 'realm_bot', op: 'delete', bot: { user_id: bot.id } }, [after.id]);
  }
}
