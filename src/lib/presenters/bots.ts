// Bot objects as GET /bots, realm_bot events and the realm_bots register section show them
// to the bot's owner and administrators (they include credentials), and the bot's
// downloadable configuration file.
import type { BotConfigDataRow, BotServiceRow, UserRow } from '../../store/schema.ts';
import { BOT_TYPE } from '../bots.ts';
import { avatarUrl } from './users.ts';

/** The `services` list: outgoing webhooks show their endpoint, embedded bots their config. */
export function presentBotServices(
  bot: Pick<UserRow, 'bot_type'>,
  service: BotServiceRow | undefined,
  config: BotConfigDataRow[] = [],
): Record<string, unknown>[] {
  if (!service) return [];
  if (bot.bot_type === BOT_TYPE.outgoingWebhook) {
    return [{ base_url: service.base_url, interface: service.interface, token: service.token }];
  }
  if (bot.bot_type === BOT_TYPE.embedded) {
    return [{ service_name: service.service_name, config_data: presentBotConfigData(config) }];
  }
  return [];
}

export function presentBotConfigData(config: BotConfigDataRow[]): Record<string, string> {
  return Object.fromEntries(config.map((c) => [c.key, c.value]));
}

export function presentBot(
  bot: UserRow,
  service: BotServiceRow | undefined,
  config: BotConfigDataRow[] = [],
): Record<string, unknown> {
  return {
    user_id: bot.id,
    email: bot.email,
    full_name: bot.full_name,
    bot_type: bot.bot_type,
    is_active: bot.is_active === 1,
    api_key: bot.api_key,
    avatar_url: avatarUrl(bot),
    // Default channels are not stored yet, so no bot has one.
    default_sending_stream: null,
    default_events_register_stream: null,
    default_all_public_streams: bot.default_all_public_streams === 1,
    owner_id: bot.bot_owner_id,
    services: presentBotServices(bot, service, config),
  };
}

/**
 * The client configuration file (INI, as the API bindings read it): the bot's API
 * email, key and the organization's URL, and for outgoing webhooks the token their
 * payloads carry, which the receiving service checks.
 */
export function presentBotConfigFile(
  bot: Pick<UserRow, 'email' | 'api_key' | 'bot_type'>,
  service: BotServiceRow | undefined,
  site: string,
): string {
  const lines = ['[api]', `email=${bot.email}`, `key=${bot.api_key}`, `site=${site}`];
  if (bot.bot_type === BOT_TYPE.outgoingWebhook && service) lines.push(`token=${service.token}`);
  return `${lines.join('\n')}\n`;
}
