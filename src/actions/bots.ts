// Bots: creation, listing, changes, deactivation, API keys and configuration files.
// A bot is a user row (is_bot) plus, for outgoing-webhook and embedded bots, a service
// row; embedded bots also keep key/value configuration. Its owner and the organization's
// administrators manage it and receive realm_bot events; everyone who can access the bot
// receives the realm_user events about it.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import {
  BOT_SERVICE_TOKEN_LENGTH,
  BOT_TYPE,
  botEmail,
  checkBotType,
  checkInterfaceType,
  checkPayloadUrl,
  missingArgument,
} from '../lib/bots.ts';
import { badRequest, mustBeAdmin, mustBeOwner, notAllowed } from '../lib/errors.ts';
import {
  presentBot,
  presentBotConfigData,
  presentBotConfigFile,
  presentBotServices,
} from '../lib/presenters/bots.ts';
import { avatarUrl } from '../lib/presenters/users.ts';
import { fakeEmailDomain, realmUrl } from '../lib/realm-url.ts';
import { isAdmin, isGuest, isOwner, ROLE } from '../lib/roles.ts';
import { checkFullName } from '../lib/validation.ts';
import * as botsStore from '../store/bots.ts';
import type { Q } from '../store/db.ts';
import type { BotServiceRow, RealmRow, UserRow } from '../store/schema.ts';
import * as usersStore from '../store/users.ts';
import { accessCurrentActor, checkRealmPermission, hasRealmPermission } from './permissions.ts';
import { readingIn, withTransaction, type Work } from './transaction.ts';
import { listManagedBots } from './bot-directory.ts';
import { usersWhoCanAccess } from './user-access.ts';
import { doDeactivate } from './user-activation.ts';
import {
  doChangeFullName,
  doChangeRole,
  doCreateUser,
  doRegenerateApiKey,
  emitBotUpdate,
} from './users.ts';

export interface CreateBotParams {
  full_name: string;
  short_name: string;
  bot_type: number;
  payload_url?: string;
  interface_type: number;
  service_name?: string;
  config_data?: Record<string, string>;
  default_sending_stream?: string;
  default_events_register_stream?: string;
  default_all_public_streams: boolean;
}

export interface UpdateBotParams {
  full_name?: string;
  role?: number;
  bot_owner_id?: number;
  service_payload_url?: string;
  service_interface?: number;
  config_data?: Record<string, string>;
  default_sending_stream?: string;
  default_events_register_stream?: string;
  default_all_public_streams?: boolean;
}

/** The bots the actor may manage: their own, or every bot for administrators. */
export async function listBotsFor(
  ctx: AppContext,
  actor: Actor,
): Promise<Record<string, unknown>[]> {
  return listManagedBots(ctx.db, actor.realm.id, actor.user);
}

/** Listing and creating bots is for people who are members or above. */
function checkMemberOrAdmin(actor: Actor): void {
  if (isGuest(actor.user)) throw badRequest('Not allowed for guest users');
  if (actor.user.is_bot) throw badRequest('This endpoint does not accept bot requests.');
}

/** GET /bots. */
export async function getBots(ctx: AppContext, actor: Actor): Promise<Record<string, unknown>[]> {
  checkMemberOrAdmin(actor);
  return listBotsFor(ctx, actor);
}

/** Whoever receives realm_bot events about the bot: its owner and the human administrators. */
async function botManagerIds(db: Q, realmId: number, bot: UserRow): Promise<number[]> {
  const admins = await usersStore.listActiveAdminIds(db, realmId);
  return bot.bot_owner_id ? [...admins, bot.bot_owner_id] : admins;
}

/** A bot of the actor's organization that the actor owns or administers. */
async function accessBotById(db: Q, actor: Actor, botId: number): Promise<UserRow> {
  const bot = await usersStore.getUserById(db, actor.realm.id, botId);
  if (!bot?.is_bot) throw badRequest('No such bot');
  if (bot.bot_owner_id !== actor.user.id && !isAdmin(actor.user)) {
    throw notAllowed('Insufficient permission');
  }
  return bot;
}

/**
 * Default channels by name. Channels are not stored yet, so every name is unknown; the
 * empty string (PATCH) means "no default channel", which every bot already has.
 */
function checkDefaultChannel(name: string | undefined): void {
  if (name !== undefined && name !== '') throw badRequest(`Invalid channel name '${name}'`);
}

async function checkBotCreationPolicy(
  ctx: AppContext,
  actor: Actor,
  botType: number,
): Promise<void> {
  if (
    botType === BOT_TYPE.incomingWebhook &&
    (await hasRealmPermission(ctx.db, actor.user, 'can_create_write_only_bots_group'))
  ) {
    return;
  }
  await checkRealmPermission(ctx, actor, 'can_create_bots_group');
}

async function checkBotNameAvailable(db: Q, realm: RealmRow, fullName: string): Promise<void> {
  if (await botsStore.isActiveFullNameTaken(db, realm.id, fullName)) {
    throw badRequest('Name is already in use!');
  }
}

/** POST /bots: the actor becomes the new bot's owner. */
export async function createBot(
  ctx: AppContext,
  actor: Actor,
  params: CreateBotParams,
): Promise<Record<string, unknown>> {
  checkMemberOrAdmin(actor);
  const realm = actor.realm;
  const botType = checkBotType(params.bot_type);
  await checkBotCreationPolicy(ctx, actor, botType);
  const fullName = checkFullName(params.full_name);
  const email = botEmail(
    params.short_name,
    fakeEmailDomain(ctx.config.externalUrl, realm.string_id),
  );
  const interfaceType = checkInterfaceType(params.interface_type);
  const payloadUrl = params.payload_url ? checkPayloadUrl('payload_url', params.payload_url) : '';
  if (botType === BOT_TYPE.outgoingWebhook && payloadUrl === '') {
    throw missingArgument('payload_url');
  }
  // Incoming-webhook bots name the integration they serve; Parley has none to configure.
  if (botType === BOT_TYPE.incomingWebhook && params.service_name) {
    throw badRequest(`Invalid integration '${params.service_name}'.`);
  }
  const serviceName = params.service_name?.trim() || params.short_name.trim();
  checkDefaultChannel(params.default_sending_stream);
  checkDefaultChannel(params.default_events_register_stream);

  return withTransaction(ctx, realm.id, async (work) => {
    // Checked again inside: a bot's owner is active (one deactivated since would leave an
    // active bot without one), and may still create bots (a guest by now may not).
    const me = await accessCurrentActor(work.db, actor);
    checkMemberOrAdmin(me);
    await checkBotCreationPolicy(readingIn(ctx, work), me, botType);
    if (await usersStore.getUserByEmail(work.db, realm.id, email)) {
      throw badRequest('Username already in use');
    }
    await checkBotNameAvailable(work.db, realm, fullName);
    let bot = await doCreateUser(ctx, work, realm, {
      email,
      fullName,
      role: ROLE.member,
      isBot: true,
      botType,
      botOwnerId: me.user.id,
    });
    if (params.default_all_public_streams) {
      await usersStore.updateUser(work.db, bot.id, { default_all_public_streams: 1 });
      bot = { ...bot, default_all_public_streams: 1 };
    }
    let service: BotServiceRow | undefined;
    if (botType === BOT_TYPE.outgoingWebhook || botType === BOT_TYPE.embedded) {
      service = await botsStore.insertBotService(work.db, {
        bot_id: bot.id,
        base_url: payloadUrl,
        interface: interfaceType,
        token: ctx.random.alphanumeric(BOT_SERVICE_TOKEN_LENGTH),
        service_name: serviceName,
      });
    }
    if (botType === BOT_TYPE.embedded && params.config_data) {
      await botsStore.setBotConfigData(work.db, bot.id, params.config_data);
    }
    const config = await botsStore.listBotConfigData(work.db, [bot.id]);
    work.emitOnCommit(
      { type: 'realm_bot', op: 'add', bot: presentBot(bot, service, config) },
      await botManagerIds(work.db, realm.id, bot),
    );
    return {
      user_id: bot.id,
      api_key: bot.api_key,
      avatar_url: avatarUrl(bot),
      default_sending_stream: null,
      default_events_register_stream: null,
      default_all_public_streams: bot.default_all_public_streams === 1,
    };
  });
}

/**
 * Hand the bot to another person. Managers who are not administrators only held the bot
 * as its owner: the previous owner's clients drop it (realm_bot delete), the new owner's
 * add it in full (realm_bot add); administrators see an owner_id update.
 */
async function doChangeBotOwner(
  work: Work,
  realm: RealmRow,
  bot: UserRow,
  newOwnerId: number,
): Promise<UserRow> {
  const newOwner = await usersStore.getUserById(work.db, realm.id, newOwnerId);
  if (!newOwner) throw badRequest('Failed to change owner, no such user');
  if (!newOwner.is_active) throw badRequest('Failed to change owner, user is deactivated');
  if (newOwner.is_bot) throw badRequest("Failed to change owner, bots can't own other bots");
  if (newOwner.id === bot.bot_owner_id) return bot;

  const previous = bot.bot_owner_id
    ? await usersStore.getUserById(work.db, realm.id, bot.bot_owner_id)
    : undefined;
  await usersStore.updateUser(work.db, bot.id, { bot_owner_id: newOwner.id });
  const changed: UserRow = { ...bot, bot_owner_id: newOwner.id };

  const updateTo = new Set(await botManagerIds(work.db, realm.id, changed));
  if (previous && !isAdmin(previous)) {
    work.emitOnCommit({ type: 'realm_bot', op: 'delete', bot: { user_id: bot.id } }, [previous.id]);
    updateTo.delete(previous.id);
  }
  if (!isAdmin(newOwner)) {
    const service = await botsStore.getBotService(work.db, bot.id);
    const config = await botsStore.listBotConfigData(work.db, [bot.id]);
    work.emitOnCommit({ type: 'realm_bot', op: 'add', bot: presentBot(changed, service, config) }, [
      newOwner.id,
    ]);
    updateTo.delete(newOwner.id);
  }
  work.emitOnCommit(
    { type: 'realm_bot', op: 'update', bot: { user_id: bot.id, owner_id: newOwner.id } },
    updateTo,
  );
  work.emitOnCommit(
    {
      type: 'realm_user',
      op: 'update',
      person: { user_id: bot.id, bot_owner_id: newOwner.id },
    },
    await usersWhoCanAccess(work.db, realm, bot.id),
  );
  return changed;
}

/** The outgoing webhook's URL and interface; only outgoing-webhook bots have them. */
async function doUpdateBotService(
  work: Work,
  realm: RealmRow,
  bot: UserRow,
  service: BotServiceRow | undefined,
  params: Pick<UpdateBotParams, 'service_payload_url' | 'service_interface'>,
): Promise<BotServiceRow | undefined> {
  if (params.service_payload_url === undefined && params.service_interface === undefined) {
    return service;
  }
  if (bot.bot_type !== BOT_TYPE.outgoingWebhook || !service) {
    throw badRequest('Only outgoing webhook bots have a service URL and interface');
  }
  const changed: BotServiceRow = {
    ...service,
    base_url:
      params.service_payload_url === undefined
        ? service.base_url
        : checkPayloadUrl('service_payload_url', params.service_payload_url),
    interface:
      params.service_interface === undefined
        ? service.interface
        : checkInterfaceType(params.service_interface),
  };
  if (changed.base_url === service.base_url && changed.interface === service.interface) {
    return service;
  }
  await botsStore.updateBotService(work.db, bot.id, {
    base_url: changed.base_url,
    interface: changed.interface,
  });
  await emitBotUpdate(work, realm, bot, { services: presentBotServices(bot, changed) });
  return changed;
}

/** PATCH /bots/{id}: the owner or an administrator; role changes need an administrator. */
export async function updateBot(
  ctx: AppContext,
  actor: Actor,
  botId: number,
  params: UpdateBotParams,
): Promise<Record<string, unknown>> {
  return withTransaction(ctx, actor.realm.id, async (work) => {
    // Checked inside: the actor's role, and the bot's owner, as they are now.
    const me = await accessCurrentActor(work.db, actor);
    const realm = me.realm;
    let bot = await accessBotById(work.db, me, botId);

    if (params.full_name !== undefined) {
      const fullName = checkFullName(params.full_name);
      // Clients send the name back unchanged with every edit; that is not a conflict.
      if (fullName !== bot.full_name) {
        await checkBotNameAvailable(work.db, realm, fullName);
        await doChangeFullName(work, realm, bot, fullName);
        bot = { ...bot, full_name: fullName };
      }
    }

    if (params.role !== undefined && params.role !== bot.role) {
      if ((params.role === ROLE.owner || bot.role === ROLE.owner) && !isOwner(me.user)) {
        throw mustBeOwner();
      }
      if (!isAdmin(me.user)) throw mustBeAdmin();
      await doChangeRole(work, realm, bot, params.role);
      bot = { ...bot, role: params.role };
    }

    if (params.bot_owner_id !== undefined) {
      bot = await doChangeBotOwner(work, realm, bot, params.bot_owner_id);
    }

    checkDefaultChannel(params.default_sending_stream);
    checkDefaultChannel(params.default_events_register_stream);

    if (params.default_all_public_streams !== undefined) {
      const value = params.default_all_public_streams ? 1 : 0;
      if (value !== bot.default_all_public_streams) {
        await usersStore.updateUser(work.db, bot.id, { default_all_public_streams: value });
        bot = { ...bot, default_all_public_streams: value };
        await emitBotUpdate(work, realm, bot, {
          default_all_public_streams: params.default_all_public_streams,
        });
      }
    }

    const service = await doUpdateBotService(
      work,
      realm,
      bot,
      await botsStore.getBotService(work.db, bot.id),
      params,
    );

    let config = await botsStore.listBotConfigData(work.db, [bot.id]);
    if (params.config_data !== undefined) {
      if (bot.bot_type !== BOT_TYPE.embedded || !service) {
        throw badRequest('Only embedded bots have configuration data');
      }
      await botsStore.setBotConfigData(work.db, bot.id, params.config_data);
      config = await botsStore.listBotConfigData(work.db, [bot.id]);
      await emitBotUpdate(work, realm, bot, {
        services: presentBotServices(bot, service, config),
      });
    }

    const owner = bot.bot_owner_id
      ? await usersStore.getUserById(work.db, realm.id, bot.bot_owner_id)
      : undefined;
    const outgoing = bot.bot_type === BOT_TYPE.outgoingWebhook && service;
    return {
      full_name: bot.full_name,
      avatar_url: avatarUrl(bot),
      service_interface: outgoing ? service.interface : null,
      service_payload_url: outgoing ? service.base_url : null,
      config_data: bot.bot_type === BOT_TYPE.embedded ? presentBotConfigData(config) : null,
      default_sending_stream: null,
      default_events_register_stream: null,
      default_all_public_streams: bot.default_all_public_streams === 1,
      ...(owner ? { bot_owner: owner.email } : {}),
    };
  });
}

/** DELETE /bots/{id}: deactivates the bot as DELETE /users/{id} does; again is a no-op. */
export async function deactivateBot(ctx: AppContext, actor: Actor, botId: number): Promise<void> {
  // The queue layer drops the bot's queues, in every process, when the event arrives.
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const me = await accessCurrentActor(work.db, actor);
    const bot = await accessBotById(work.db, me, botId);
    await doDeactivate(ctx, work, me.realm, bot);
  });
}

/** POST /bots/{id}/api_key/regenerate: the old key stops working at once. */
export async function regenerateBotApiKey(
  ctx: AppContext,
  actor: Actor,
  botId: number,
): Promise<string> {
  return withTransaction(ctx, actor.realm.id, async (work) => {
    // Checked inside: a key is handed only to whoever manages the bot when it changes.
    const me = await accessCurrentActor(work.db, actor);
    const bot = await accessBotById(work.db, me, botId);
    return doRegenerateApiKey(ctx, work, me.realm, bot);
  });
}

/** GET /bots/{id}/config: the client configuration file, holding the bot's credentials. */
export async function getBotConfigFile(
  ctx: AppContext,
  actor: Actor,
  botId: number,
): Promise<{ filename: string; content: string }> {
  const bot = await accessBotById(ctx.db, actor, botId);
  const service = await botsStore.getBotService(ctx.db, bot.id);
  return {
    filename: 'zuliprc',
    content: presentBotConfigFile(
      bot,
      service,
      realmUrl(ctx.config.externalUrl, actor.realm.string_id),
    ),
  };
}
