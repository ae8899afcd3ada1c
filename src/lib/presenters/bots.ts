// Bot objects as GET /bots and the realm_bots register section show them to the bot's
// owner and administrators (they include credentials).
import type { BotServiceRow, UserRow } from '../../store/schema.ts';
import { avatarUrl } from './users.ts';

export function presentBot(
  bot: UserRow,
  service: BotServiceRow | undefined,
): Record<string, unknown> {
  return {
    user_id: bot.id,
    email: bot.email,
    full_name: bot.full_name,
    bot_type: bot.bot_type,
    is_active: bot.is_active === 1,
    api_key: bot.api_key,
    avatar_url: avatarUrl(bot),
    default_sending_stream: null,
    default_events_register_stream: null,
    default_all_public_streams: false,
    owner_id: bot.bot_owner_id,
    services: service
      ? [{ base_url: service.base_url, interface: service.interface, token: service.token }]
      : [],
  };
}
