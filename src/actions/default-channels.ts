// Default channels (new users join them) and default channel groups (offered at sign-up).
// Administrators manage both; every change sends the whole new list to all users.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import {
  checkDefaultChannelGroupName,
  MAX_DEFAULT_CHANNEL_GROUP_DESCRIPTION_LENGTH,
} from '../lib/channel-settings.ts';
import { badRequest } from '../lib/errors.ts';
import { presentDefaultChannelGroup } from '../lib/presenters/channels.ts';
import * as channelsStore from '../store/channels.ts';
import type { Q } from '../store/db.ts';
import type { ChannelRow, RealmRow } from '../store/schema.ts';
import * as usersStore from '../store/users.ts';
import { accessChannelById, accessChannelByName, invalidChannelName } from './channel-access.ts';
import { accessCurrentAdmin, checkAdmin } from './permissions.ts';
import { readingIn, withTransaction, type Work } from './transaction.ts';

/** realm_default_streams: the default channels' ids. */
export async function listDefaultChannels(db: Q, realm: RealmRow): Promise<number[]> {
  return channelsStore.listDefaultChannelIds(db, realm.id);
}

/** realm_default_stream_groups: the groups by name, each with its channels by name. */
export async function listDefaultChannelGroups(
  db: Q,
  realm: RealmRow,
): Promise<Record<string, unknown>[]> {
  return (await channelsStore.listDefaultChannelGroups(db, realm.id)).map(
    presentDefaultChannelGroup,
  );
}

export async function emitDefaultChannels(work: Work, realm: RealmRow): Promise<void> {
  work.emitOnCommit(
    { type: 'default_streams', default_streams: await listDefaultChannels(work.db, realm) },
    await usersStore.listActiveUserIds(work.db, realm.id),
  );
}

export async function emitDefaultChannelGroups(work: Work, realm: RealmRow): Promise<void> {
  work.emitOnCommit(
    {
      type: 'default_stream_groups',
      default_stream_groups: await listDefaultChannelGroups(work.db, realm),
    },
    await usersStore.listActiveUserIds(work.db, realm.id),
  );
}

/** POST /default_streams. */
export async function addDefaultChannel(
  ctx: AppContext,
  actor: Actor,
  channelId: number,
): Promise<void> {
  checkAdmin(actor);
  await withTransaction(ctx, actor.realm.id, async (work) => {
    // Read inside: the channel may have been archived or made private since, and the actor
    // may no longer be an administrator.
    const me = await accessCurrentAdmin(work.db, actor);
    const { channel } = await accessChannelById(readingIn(ctx, work), me, channelId, {
      content: true,
    });
    if (channel.invite_only) throw badRequest('Private channels cannot be made default.');
    await addDefaultChannelIn(work, me.realm, channel);
  });
}

/** Make a channel default inside the caller's transaction (nothing happens if it is). */
export async function addDefaultChannelIn(
  work: Work,
  realm: RealmRow,
  channel: ChannelRow,
): Promise<void> {
  const current = await channelsStore.listDefaultChannelIds(work.db, realm.id);
  if (current.includes(channel.id)) return;
  await channelsStore.addDefaultChannel(work.db, realm.id, channel.id);
  await emitDefaultChannels(work, realm);
}

/** Stop a channel being default inside the caller's transaction; clients always hear of it. */
export async function removeDefaultChannelIn(
  work: Work,
  realm: RealmRow,
  channel: ChannelRow,
): Promise<void> {
  await channelsStore.removeDefaultChannel(work.db, realm.id, channel.id);
  await emitDefaultChannels(work, realm);
}

/** DELETE /default_streams. */
export async function removeDefaultChannel(
  ctx: AppContext,
  actor: Actor,
  channelId: number,
): Promise<void> {
  checkAdmin(actor);
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const me = await accessCurrentAdmin(work.db, actor);
    const { channel } = await accessChannelById(readingIn(ctx, work), me, channelId);
    await removeDefaultChannelIn(work, me.realm, channel);
  });
}

/**
 * Channels by name for default groups, read inside the change: unknown, unreadable and
 * archived ones are "invalid" (archiving takes a channel out of every group, and one
 * archived since the request came must not be put back).
 */
async function accessChannelsByName(
  ctx: AppContext,
  work: Work,
  actor: Actor,
  names: string[],
): Promise<ChannelRow[]> {
  const out: ChannelRow[] = [];
  for (const name of names) {
    const { channel } = await accessChannelByName(readingIn(ctx, work), actor, name, {
      content: true,
      notFound: invalidChannelName,
    });
    if (!out.some((c) => c.id === channel.id)) out.push(channel);
  }
  return out;
}

function checkGroupDescription(description: string): string {
  if ([...description].length > MAX_DEFAULT_CHANNEL_GROUP_DESCRIPTION_LENGTH) {
    throw badRequest(
      `Default channel group description too long (limit: ${MAX_DEFAULT_CHANNEL_GROUP_DESCRIPTION_LENGTH} characters)`,
    );
  }
  return description;
}

async function checkNotDefault(
  db: Q,
  realm: RealmRow,
  channels: ChannelRow[],
  groupName: string,
): Promise<void> {
  const defaults = await channelsStore.listDefaultChannelIds(db, realm.id);
  const clash = channels.find((c) => defaults.includes(c.id));
  if (clash)
    throw badRequest(`'${clash.name}' is a default channel and cannot be added to '${groupName}'`);
}

/** POST /default_stream_groups/create. */
export async function createDefaultChannelGroup(
  ctx: AppContext,
  actor: Actor,
  params: { group_name: string; description: string; stream_names: string[] },
): Promise<void> {
  checkAdmin(actor);
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const me = await accessCurrentAdmin(work.db, actor);
    const realm = me.realm;
    const channels = await accessChannelsByName(ctx, work, me, params.stream_names);
    await checkNotDefault(work.db, realm, channels, params.group_name);
    const name = checkDefaultChannelGroupName(params.group_name);
    const description = checkGroupDescription(params.description);
    if (await channelsStore.defaultChannelGroupNameTaken(work.db, realm.id, name))
      throw badRequest(`Default channel group '${name}' already exists`);
    const id = await channelsStore.insertDefaultChannelGroup(work.db, {
      realm_id: realm.id,
      name,
      description,
    });
    await channelsStore.addChannelsToDefaultGroup(
      work.db,
      id,
      channels.map((c) => c.id),
    );
    await emitDefaultChannelGroups(work, realm);
  });
}

async function accessGroup(
  db: Q,
  realm: RealmRow,
  groupId: number,
): Promise<channelsStore.DefaultChannelGroup> {
  const group = await channelsStore.getDefaultChannelGroup(db, realm.id, groupId);
  if (!group) throw badRequest(`Default channel group with id '${groupId}' does not exist.`);
  return group;
}

/** PATCH /default_stream_groups/{id}: a new name, a new description, or both. */
export async function updateDefaultChannelGroup(
  ctx: AppContext,
  actor: Actor,
  groupId: number,
  params: { new_group_name?: string; new_description?: string },
): Promise<void> {
  checkAdmin(actor);
  // An empty value counts as absent, as the reference server has it.
  if (!params.new_group_name && !params.new_description)
    throw badRequest('You must pass "new_description" or "new_group_name".');
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const { realm } = await accessCurrentAdmin(work.db, actor);
    const group = await accessGroup(work.db, realm, groupId);
    if (params.new_group_name !== undefined) {
      const name = params.new_group_name;
      if (group.name === name)
        throw badRequest(`This default channel group is already named '${name}'`);
      checkDefaultChannelGroupName(name);
      if (await channelsStore.defaultChannelGroupNameTaken(work.db, realm.id, name))
        throw badRequest(`Default channel group '${name}' already exists`);
      await channelsStore.updateDefaultChannelGroup(work.db, group.id, { name });
      await emitDefaultChannelGroups(work, realm);
    }
    if (params.new_description !== undefined) {
      const description = checkGroupDescription(params.new_description);
      await channelsStore.updateDefaultChannelGroup(work.db, group.id, { description });
      await emitDefaultChannelGroups(work, realm);
    }
  });
}

/** PATCH /default_stream_groups/{id}/streams: add or remove channels. */
export async function updateDefaultChannelGroupChannels(
  ctx: AppContext,
  actor: Actor,
  groupId: number,
  params: { op: string; stream_names: string[] },
): Promise<void> {
  checkAdmin(actor);
  await withTransaction(ctx, actor.realm.id, async (work) => {
    // Read inside: the group may have been changed or deleted since, a channel archived.
    const me = await accessCurrentAdmin(work.db, actor);
    const realm = me.realm;
    const group = await accessGroup(work.db, realm, groupId);
    const channels = await accessChannelsByName(ctx, work, me, params.stream_names);
    if (params.op !== 'add' && params.op !== 'remove')
      throw badRequest('Invalid value for "op". Specify one of "add" or "remove".');
    if (params.op === 'add') {
      await checkNotDefault(work.db, realm, channels, group.name);
      const present = channels.find((c) => group.channelIds.includes(c.id));
      if (present) {
        throw badRequest(
          `Channel '${present.name}' is already present in default channel group '${group.name}'`,
        );
      }
      await channelsStore.addChannelsToDefaultGroup(
        work.db,
        group.id,
        channels.map((c) => c.id),
      );
    } else {
      const absent = channels.find((c) => !group.channelIds.includes(c.id));
      if (absent) {
        throw badRequest(
          `Channel '${absent.name}' is not present in default channel group '${group.name}'`,
        );
      }
      await channelsStore.removeChannelsFromDefaultGroup(
        work.db,
        group.id,
        channels.map((c) => c.id),
      );
    }
    await emitDefaultChannelGroups(work, realm);
  });
}

/** DELETE /default_stream_groups/{id}. */
export async function removeDefaultChannelGroup(
  ctx: AppContext,
  actor: Actor,
  groupId: number,
): Promise<void> {
  checkAdmin(actor);
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const { realm } = await accessCurrentAdmin(work.db, actor);
    const group = await accessGroup(work.db, realm, groupId);
    await channelsStore.deleteDefaultChannelGroup(work.db, group.id);
    await emitDefaultChannelGroups(work, realm);
  });
}

/**
 * An archived channel leaves the default channels and every default group, with the
 * events that tell clients (inside the caller's transaction).
 */
export async function doRemoveChannelFromDefaults(
  work: Work,
  realm: RealmRow,
  channel: ChannelRow,
): Promise<void> {
  if ((await channelsStore.listDefaultChannelIds(work.db, realm.id)).includes(channel.id)) {
    await channelsStore.removeDefaultChannel(work.db, realm.id, channel.id);
    await emitDefaultChannels(work, realm);
  }
  for (const groupId of await channelsStore.listDefaultGroupIdsWithChannel(work.db, channel.id)) {
    await channelsStore.removeChannelsFromDefaultGroup(work.db, groupId, [channel.id]);
    await emitDefaultChannelGroups(work, realm);
  }
}
