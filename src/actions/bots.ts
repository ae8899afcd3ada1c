// Bots: creation, listing, changes, deactivation and API keys.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { presentBot } from '../lib/presenters/bots.ts';
import { isAdmin } from '../lib/roles.ts';
import * as usersStore from '../store/users.ts';

/** The bots the actor may manage: their own, or every bot for administrators. */
export async function listBotsFor(
  ctx: AppContext,
  actor: Actor,
): Promise<Record<string, unknown>[]> {
  const bots = isAdmin(actor.user)
    ? await usersStore.listBots(ctx.db, actor.realm.id)
    : await usersStore.listBotsOwnedBy(ctx.db, actor.user.id);
  const services = await usersStore.listBotServices(
    ctx.db,
    bots.map((b) => b.id),
  );
  return bots.map((b) =>
    presentBot(
      b,
      services.find((s) => s.bot_id === b.id),
    ),
  );
}
