// PATCH /streams/{id} and DELETE /streams/{id}: channel administrators change a channel's
// name, description, privacy, policies and permission groups, archive it and unarchive it.
// Every change tells the users who can see the channel; a change of who can see it tells
// those who gain sight of it (stream create) and those who lose it (stream delete).
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import {
  CHANNEL_GROUP_SETTINGS,
  CHANNEL_GROUP_SETTING_NAMES,
  CONTENT_ACCESS_SETTINGS,
  METADATA_GRANTING_SETTINGS,
  checkChannelName,
  normalizeChannelDescription,
  parseMessageRetentionDays,
  readChannelSettings,
  streamPostPolicyFor,
  type ChannelGroupSettingName,
  type ChannelTopicsPolicy,
} from '../lib/channel-settings.ts';
import {
  DEFAULT_EMPTY_TOPIC_DISPLAY_NAME,
  readRealmSettings,
  writeRealmSettings,
} from '../lib/realm-settings.ts';
import type { JsonableError } from '../lib/errors.ts';
import { badRequest, mustBeOwner } from '../lib/errors.ts';
import { isOwner } from '../lib/roles.ts';
import { unixNow } from '../infra/clock.ts';
import * as channelsStore from '../store/channels.ts';
import * as realmsStore from '../store/realms.ts';
import type { Q } from '../store/db.ts';
import type { ChannelRow, RealmRow } from '../store/schema.ts';
import * as groups from '../store/user-groups.ts';
import * as usersStore from '../store/users.ts';
import { accessChannelForAdministration, usersWhoCanSeeChannel } from './channel-access.ts';
import {
  archivedMarker,
  checkChannelNameFree,
  emitChannelDeletion,
  emitSubscriptionAdds,
  renderChannelDescription,
} from './channels.ts';
import { presentChannelRow } from './channel-present.ts';
import {
  addDefaultChannelIn,
  doRemoveChannelFromDefaults,
  removeDefaultChannelIn,
} from './default-channels.ts';
import {
  checkGroupSettingChange,
  presentGroupSetting,
  resolveGroupSetting,
  type GroupSettingChange,
} from './group-settings.ts';
import { checkChannelFolderId } from './channel-folders.ts';
import {
  accessRealmSettings,
  accessCurrentActor,
  checkAdmin,
  hasRealmPermission,
} from './permissions.ts';
import { readTopicsPolicy, webPublicChannelsEnabled } from './subscriptions.ts';
import { withTransaction, type Work } from './transaction.ts';

/** A {new, old} change of one of the channel's group settings. */
export type GroupSettingUpdate = GroupSettingChange;

export interface UpdateChannelParams {
  description?: string;
  new_name?: string;
  is_private?: boolean;
  is_web_public?: boolean;
  history_public_to_subscribers?: boolean;
  is_default_stream?: boolean;
  message_retention_days?: string | number;
  is_archived?: boolean;
  topics_policy?: string;
  /** null moves the channel out of its folder; undefined leaves it. */
  folder_id?: number | null;
  groupSettings: Partial<Record<ChannelGroupSettingName, GroupSettingUpdate>>;
}

const contentAccessRequired = (): JsonableError =>
  badRequest('Channel content access is required.');

async function current(work: Work, realm: RealmRow, id: number): Promise<ChannelRow> {
  return (await channelsStore.getChannel(work.db, realm.id, id))!;
}

/** A stream update event to everyone who can see the channel now. */
async function emitChannelUpdate(
  work: Work,
  realm: RealmRow,
  channel: ChannelRow,
  fields: Record<string, unknown>,
  users?: Iterable<number>,
): Promise<void> {
  work.emitOnCommit(
    {
      type: 'stream',
      op: 'update',
      stream_id: channel.id,
      name: channel.name,
      ...fields,
      ...archivedMarker(channel),
    },
    users ?? (await usersWhoCanSeeChannel(work.db, realm, channel)),
  );
}

/**
 * After a change of who can see the channel: stream create and the subscriber list to those
 * who gained sight of it, stream delete to those who lost it; returns who kept it.
 */
async function announceVisibilityChange(
  work: Work,
  realm: RealmRow,
  channel: ChannelRow,
  before: Set<number>,
): Promise<number[]> {
  const after = await usersWhoCanSeeChannel(work.db, realm, channel);
  const gained = after.filter((id) => !before.has(id));
  const lost = [...before].filter((id) => !after.includes(id));
  if (gained.length > 0) {
    const presented = await presentChannelRow(work.db, realm.id, channel);
    work.emitOnCommit({ type: 'stream', op: 'create', streams: [presented] }, gained);
    // The subscriber list for clients that keep one; the channel's subscriber_count already
    // counts these users, so shaping drops it for queues without include_subscribers.
    work.emitOnCommit(
      {
        type: 'subscription',
        op: 'peer_add',
        stream_ids: [channel.id],
        user_ids: await channelsStore.listSubscriberIds(work.db, channel.id),
        __only_with_subscribers: true,
      },
      gained,
    );
  }
  if (lost.length > 0) emitChannelDeletion(work, [channel], lost);
  return after.filter((id) => before.has(id));
}

/** What a PATCH would leave the channel's privacy as, checked before anything changes. */
interface PrivacyPlan {
  inviteOnly: boolean;
  webPublic: boolean;
  history: boolean;
}

async function checkUpdate(
  db: Q,
  actor: Actor,
  realm: RealmRow,
  channel: ChannelRow,
  content: boolean,
  p: UpdateChannelParams,
): Promise<{
  privacy: PrivacyPlan | null;
  retention: number | null | undefined;
  topics?: ChannelTopicsPolicy;
}> {
  const defaults = await channelsStore.listDefaultChannelIds(db, realm.id);
  const inviteOnly = p.is_private ?? channel.invite_only === 1;
  const webPublic = p.is_web_public ?? channel.is_web_public === 1;
  const isDefault = p.is_default_stream ?? defaults.includes(channel.id);
  // Making a channel private protects its history unless told otherwise.
  const history =
    p.history_public_to_subscribers ??
    (p.is_private !== undefined ? !p.is_private : channel.history_public_to_subscribers === 1);
  if (webPublic && !history) throw badRequest('Invalid parameters');
  if (webPublic && inviteOnly) throw badRequest('Invalid parameters');
  if (!inviteOnly && !history) throw badRequest('Invalid parameters');
  if (inviteOnly && isDefault) throw badRequest('A default channel cannot be private.');
  const realmSettings = await accessRealmSettings(db, realm.id);
  if (!inviteOnly && realmSettings.moderation_request_channel_id === channel.id)
    throw badRequest('Moderation request channel must be private.');
  const can = (setting: Parameters<typeof hasRealmPermission>[2]) =>
    hasRealmPermission(db, actor.user, setting);
  if (p.is_private !== undefined) {
    if (!content) throw contentAccessRequired();
    const setting = p.is_private
      ? 'can_create_private_channel_group'
      : 'can_create_public_channel_group';
    if (!(await can(setting))) throw badRequest('Insufficient permission');
  }
  if (p.is_web_public) {
    if (!webPublicChannelsEnabled(realm)) throw badRequest('Web-public channels are not enabled.');
    if (!(await can('can_create_web_public_channel_group')))
      throw badRequest('Insufficient permission');
  }
  if (p.is_default_stream !== undefined) checkAdmin(actor);
  let retention: number | null | undefined;
  if (p.message_retention_days !== undefined) {
    if (!isOwner(actor.user)) throw mustBeOwner();
    retention = parseMessageRetentionDays(p.message_retention_days);
  }
  if (p.is_archived === false) {
    if (channel.is_archived === 0) throw badRequest('Channel is not currently deactivated');
    const anySubscriber = (await channelsStore.listSubscriptionRowsOfChannel(db, channel.id)).some(
      (s) => s.active === 1,
    );
    if (channel.invite_only === 1 && !anySubscriber)
      throw badRequest('Channel is private and have no subscribers');
  }
  let topics: ChannelTopicsPolicy | undefined;
  if (p.topics_policy !== undefined) {
    topics = readTopicsPolicy(p.topics_policy);
    if (
      topics === 'empty_topic_only' &&
      (await channelsStore.channelHasNamedTopics(db, channel.id))
    ) {
      const name = String(
        realmSettings.empty_topic_display_name ?? DEFAULT_EMPTY_TOPIC_DISPLAY_NAME,
      );
      throw badRequest(
        `To enable this configuration, all messages in this channel must be in the "${name}" topic. Consider renaming or deleting other topics.`,
      );
    }
  }
  if (p.new_name !== undefined) {
    const name = p.new_name.trim();
    if (name === channel.name) throw badRequest('Channel already has that name.');
    // A change of case only is the same name.
    if (name.toLowerCase() !== channel.name_key) {
      checkChannelName(name);
      await checkChannelNameFree(db, realm.id, name);
    }
  }
  await checkChannelFolderId(db, realm, p.folder_id);
  const privacy =
    p.is_private !== undefined ||
    p.is_web_public !== undefined ||
    p.history_public_to_subscribers !== undefined
      ? { inviteOnly, webPublic, history }
      : null;
  return { privacy, retention, topics };
}

/** PATCH /streams/{id}. */
export async function updateChannel(
  ctx: AppContext,
  actor: Actor,
  channelId: number,
  p: UpdateChannelParams,
): Promise<void> {
  await withTransaction(ctx, actor.realm.id, async (work) => {
    // Checked and planned inside: a change of the channel committed since (its privacy, its
    // defaults, its archiving, its name) or of the organization's settings would otherwise
    // be undone or joined into a state no request in turn could make.
    const me = await accessCurrentActor(work.db, actor);
    const realm = me.realm;
    const access = await accessChannelForAdministration(work.db, me, channelId);
    const plan = await checkUpdate(work.db, me, realm, access.channel, access.content, p);
    const id = access.channel.id;
    if (plan.privacy)
      await doChangePrivacy(work, realm, await current(work, realm, id), plan.privacy);
    if (p.is_default_stream !== undefined) {
      const channel = await current(work, realm, id);
      if (p.is_default_stream) await addDefaultChannelIn(work, realm, channel);
      else await removeDefaultChannelIn(work, realm, channel);
    }
    if (plan.retention !== undefined) {
      await channelsStore.updateChannel(work.db, id, { message_retention_days: plan.retention });
      await emitChannelUpdate(work, realm, await current(work, realm, id), {
        property: 'message_retention_days',
        value: plan.retention,
      });
    }
    if (p.is_archived === false)
      await doUnarchiveChannel(work, realm, await current(work, realm, id));
    if (plan.topics !== undefined) {
      const channel = await current(work, realm, id);
      if (channel.topics_policy !== plan.topics) {
        await channelsStore.updateChannel(work.db, id, { topics_policy: plan.topics });
        await emitChannelUpdate(work, realm, channel, {
          property: 'topics_policy',
          value: plan.topics,
        });
      }
    }
    if (p.description !== undefined) {
      const description = normalizeChannelDescription(p.description);
      const rendered = await renderChannelDescription(ctx, work.db, realm, me.user, description);
      await channelsStore.updateChannel(work.db, id, {
        description,
        rendered_description: rendered,
      });
      await emitChannelUpdate(work, realm, await current(work, realm, id), {
        property: 'description',
        value: description,
        rendered_description: rendered,
      });
    }
    if (p.new_name !== undefined) {
      const old = await current(work, realm, id);
      const name = p.new_name.trim();
      await channelsStore.updateChannel(work.db, id, { name, name_key: name.toLowerCase() });
      // The event names the channel by its old name, so clients can find it.
      await emitChannelUpdate(work, realm, old, { property: 'name', value: name });
    }
    if (p.folder_id !== undefined) {
      await channelsStore.updateChannel(work.db, id, { folder_id: p.folder_id });
      await emitChannelUpdate(work, realm, await current(work, realm, id), {
        property: 'folder_id',
        value: p.folder_id,
      });
    }
    for (const name of CHANNEL_GROUP_SETTING_NAMES) {
      const update = p.groupSettings[name];
      if (update)
        await doChangeGroupSetting(ctx, work, me, realm, id, name, update, access.content);
    }
  });
}

async function doChangePrivacy(
  work: Work,
  realm: RealmRow,
  channel: ChannelRow,
  plan: PrivacyPlan,
): Promise<void> {
  const before = new Set(await usersWhoCanSeeChannel(work.db, realm, channel));
  await channelsStore.updateChannel(work.db, channel.id, {
    invite_only: plan.inviteOnly ? 1 : 0,
    is_web_public: plan.webPublic ? 1 : 0,
    history_public_to_subscribers: plan.history ? 1 : 0,
  });
  const changed = await current(work, realm, channel.id);
  const kept = await announceVisibilityChange(work, realm, changed, before);
  await emitChannelUpdate(
    work,
    realm,
    changed,
    {
      property: 'invite_only',
      value: plan.inviteOnly,
      history_public_to_subscribers: plan.history,
      is_web_public: plan.webPublic,
    },
    kept,
  );
}

async function doChangeGroupSetting(
  ctx: AppContext,
  work: Work,
  actor: Actor,
  realm: RealmRow,
  channelId: number,
  name: ChannelGroupSettingName,
  update: GroupSettingUpdate,
  content: boolean,
): Promise<void> {
  const channel = await current(work, realm, channelId);
  const settings = { ...readChannelSettings(channel.settings) };
  const wanted = await checkGroupSettingChange(work.db, realm.id, settings[name], update);
  if (wanted === null) return;
  if (CONTENT_ACCESS_SETTINGS.includes(name) && !content) throw contentAccessRequired();
  const grantsSight = METADATA_GRANTING_SETTINGS.includes(name);
  const before = new Set(await usersWhoCanSeeChannel(work.db, realm, channel));
  const oldGroup = await groups.getGroup(work.db, realm.id, settings[name]);
  settings[name] = await resolveGroupSetting(
    work.db,
    realm.id,
    name,
    wanted,
    CHANNEL_GROUP_SETTINGS[name],
    unixNow(ctx.clock),
    actor.user.id,
  );
  await channelsStore.updateChannel(work.db, channelId, { settings: JSON.stringify(settings) });
  const changed = await current(work, realm, channelId);
  const value = await presentGroupSetting(work.db, realm.id, settings[name]);
  const recipients = grantsSight
    ? await announceVisibilityChange(work, realm, changed, before)
    : await usersWhoCanSeeChannel(work.db, realm, changed);
  await emitChannelUpdate(work, realm, changed, { property: name, value }, recipients);
  if (name === 'can_send_message_group') {
    const newGroup = await groups.getGroup(work.db, realm.id, settings[name]);
    const policy = (g: typeof newGroup) => streamPostPolicyFor(g?.is_system_group ? g.name : null);
    if (policy(oldGroup) !== policy(newGroup)) {
      const everyone = await usersWhoCanSeeChannel(work.db, realm, changed);
      await emitChannelUpdate(
        work,
        realm,
        changed,
        { property: 'stream_post_policy', value: policy(newGroup) },
        everyone,
      );
      // Clients from before stream_post_policy read is_announcement_only.
      await emitChannelUpdate(
        work,
        realm,
        changed,
        { property: 'is_announcement_only', value: policy(newGroup) === 2 },
        everyone,
      );
    }
  }
}

/**
 * Unarchive: clients with archived_channels see the flag flip. Others, for whom archiving
 * was a deletion, see the channel appear, and its subscribers their subscription with it.
 */
async function doUnarchiveChannel(work: Work, realm: RealmRow, channel: ChannelRow): Promise<void> {
  await channelsStore.updateChannel(work.db, channel.id, { is_archived: 0 });
  const changed = await current(work, realm, channel.id);
  const users = await usersWhoCanSeeChannel(work.db, realm, changed);
  await emitChannelUpdate(work, realm, changed, { property: 'is_archived', value: false }, users);
  const presented = await presentChannelRow(work.db, realm.id, changed);
  const marker = { __for_unarchiving: true } as const;
  work.emitOnCommit({ type: 'stream', op: 'create', streams: [presented], ...marker }, users);
  const subscriberIds = await channelsStore.listSubscriberIds(work.db, channel.id);
  const subscribers = await usersStore.listUsersByIds(work.db, realm.id, subscriberIds);
  await emitSubscriptionAdds(
    work,
    subscribers,
    subscribers.map((user) => ({ user, channel: changed })),
    new Map([[channel.id, presented]]),
    new Map([[channel.id, subscriberIds]]),
    marker,
  );
}

/** The realm settings that name a channel, which archiving it resets to none (-1). */
const REALM_CHANNEL_SETTINGS = [
  'moderation_request_channel_id',
  'new_stream_announcements_stream_id',
  'signup_announcements_stream_id',
] as const;

/** DELETE /streams/{id}: archive. Subscriptions stay; the channel takes no new messages. */
export async function archiveChannel(
  ctx: AppContext,
  actor: Actor,
  channelId: number,
): Promise<void> {
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const me = await accessCurrentActor(work.db, actor);
    const realm = me.realm;
    // Read inside: another request may have archived it since (one archive, one event), or
    // renamed it or changed who can see it, which its events must show.
    const { channel } = await accessChannelForAdministration(work.db, me, channelId);
    if (channel.is_archived === 1) throw badRequest('Channel is already deactivated');
    const affected = await usersWhoCanSeeChannel(work.db, realm, channel);
    await channelsStore.updateChannel(work.db, channel.id, { is_archived: 1 });
    const settings = { ...readRealmSettings(realm.settings) };
    const reset: Record<string, number> = {};
    for (const key of REALM_CHANNEL_SETTINGS) {
      if (settings[key] === channel.id) {
        settings[key] = -1;
        reset[key] = -1;
      }
    }
    if (Object.keys(reset).length > 0) {
      await realmsStore.updateRealm(work.db, realm.id, { settings: writeRealmSettings(settings) });
      work.emitOnCommit(
        { type: 'realm', op: 'update_dict', property: 'default', data: reset },
        await usersStore.listActiveUserIds(work.db, realm.id),
      );
    }
    await doRemoveChannelFromDefaults(work, realm, channel);
    await emitChannelUpdate(
      work,
      realm,
      channel,
      { property: 'is_archived', value: true },
      affected,
    );
    emitChannelDeletion(work, [channel], affected, { forArchiving: true });
  });
}
