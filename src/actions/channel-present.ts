// The channel objects clients see: each channel's group settings presented, its derived
// legacy fields filled, in a few queries for any number of channels.
import {
  CHANNEL_GROUP_SETTING_NAMES,
  readChannelSettings,
  streamPostPolicyFor,
} from '../lib/channel-settings.ts';
import { presentChannel, type PresentedGroupSettings } from '../lib/presenters/channels.ts';
import * as channelsStore from '../store/channels.ts';
import type { Q } from '../store/db.ts';
import type { ChannelRow } from '../store/schema.ts';
import * as groups from '../store/user-groups.ts';
import { presentGroupSettings } from './group-settings.ts';

/** Channel objects clients see, in the order given (one query per table, not per channel). */
export async function presentChannelRows(
  db: Q,
  realmId: number,
  channels: ChannelRow[],
  /** The channels' active subscriber counts, when the caller knows them already. */
  knownCounts?: Map<number, number>,
): Promise<Record<string, unknown>[]> {
  if (channels.length === 0) return [];
  const ids = channels.map((c) => c.id);
  const [firstIds, subscriberCounts] = await Promise.all([
    channelsStore.firstMessageIds(db, realmId, ids),
    knownCounts ?? channelsStore.countSubscribersByChannel(db, realmId, ids),
  ]);
  // Every group setting of every channel, presented in a few queries: most channels share
  // the system groups, and a register presents hundreds of channels.
  const settingsOf = channels.map((c) => readChannelSettings(c.settings));
  const presentedGroups = await presentGroupSettings(
    db,
    realmId,
    settingsOf.flatMap((s) => CHANNEL_GROUP_SETTING_NAMES.map((key) => s[key])),
  );
  const sendGroupNames = new Map(
    (await groups.listAllGroups(db, realmId)).map((g) => [g.id, g.is_system_group ? g.name : null]),
  );
  const out: Record<string, unknown>[] = [];
  for (const [i, channel] of channels.entries()) {
    const settings = settingsOf[i];
    const groupSettings = {} as PresentedGroupSettings;
    for (const key of CHANNEL_GROUP_SETTING_NAMES)
      groupSettings[key] = presentedGroups.get(settings[key])!;
    const sendGroupId = settings.can_send_message_group;
    out.push(
      presentChannel(channel, {
        groupSettings,
        streamPostPolicy: streamPostPolicyFor(sendGroupNames.get(sendGroupId) ?? null),
        firstMessageId: firstIds.get(channel.id) ?? null,
        subscriberCount: subscriberCounts.get(channel.id) ?? 0,
      }),
    );
  }
  return out;
}

/** The lengths of subscriber lists, as presentChannelRows takes them. */
export function subscriberCounts(lists: Map<number, number[]>): Map<number, number> {
  return new Map([...lists].map(([id, list]) => [id, list.length]));
}

/** The channel object clients see (group settings presented, derived legacy fields filled). */
export async function presentChannelRow(
  db: Q,
  realmId: number,
  channel: ChannelRow,
): Promise<Record<string, unknown>> {
  return (await presentChannelRows(db, realmId, [channel]))[0];
}
