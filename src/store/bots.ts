import type { Q } from './db.ts';
import type { BotConfigDataRow, BotServiceRow, NewBotService } from './schema.ts';

export async function insertBotService(db: Q, row: NewBotService): Promise<BotServiceRow> {
  return db.insertInto('bot_services').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function getBotService(db: Q, botId: number): Promise<BotServiceRow | undefined> {
  return db.selectFrom('bot_services').selectAll().where('bot_id', '=', botId).executeTakeFirst();
}

export async function listBotServices(db: Q, botIds: number[]): Promise<BotServiceRow[]> {
  if (botIds.length === 0) return [];
  return db.selectFrom('bot_services').selectAll().where('bot_id', 'in', botIds).execute();
}

export async function updateBotService(
  db: Q,
  botId: number,
  changes: Partial<Pick<BotServiceRow, 'base_url' | 'interface'>>,
): Promise<void> {
  await db.updateTable('bot_services').set(changes).where('bot_id', '=', botId).execute();
}

export async function listBotConfigData(db: Q, botIds: number[]): Promise<BotConfigDataRow[]> {
  if (botIds.length === 0) return [];
  return db
    .selectFrom('bot_config_data')
    .selectAll()
    .where('bot_id', 'in', botIds)
    .orderBy('bot_id')
    .orderBy('key')
    .execute();
}

/** Set the given keys of a bot's configuration, keeping the others. */
export async function setBotConfigData(
  db: Q,
  botId: number,
  entries: Record<string, string>,
): Promise<void> {
  for (const [key, value] of Object.entries(entries)) {
    await db
      .insertInto('bot_config_data')
      .values({ bot_id: botId, key, value })
      .onConflict((oc) => oc.columns(['bot_id', 'key']).doUpdateSet({ value }))
      .execute();
  }
}

/** Whether an active user (person or bot) of the realm has exactly this name. */
export async function isActiveFullNameTaken(
  db: Q,
  realmId: number,
  fullName: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('realm_id', '=', realmId)
    .where('is_active', '=', 1)
    .where('full_name', '=', fullName)
    .executeTakeFirst();
  return row !== undefined;
}
