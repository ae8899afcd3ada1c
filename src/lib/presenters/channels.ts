// Channel and subscription objects as clients see them.
import type { ChannelRow, SubscriptionRow } from '../../store/schema.ts';
import { CHANNEL_GROUP_SETTING_NAMES, type ChannelGroupSettingName } from '../channel-settings.ts';

export type PresentedGroupSettings = Record<ChannelGroupSettingName, unknown>;

export interface ChannelExtras {
  groupSettings: PresentedGroupSettings;
  streamPostPolicy: number;
  firstMessageId: number | null;
  subscriberCount: number;
}

export function presentChannel(c: ChannelRow, x: ChannelExtras): Record<string, unknown> {
  const out: Record<string, unknown> = {
    stream_id: c.id,
    name: c.name,
    description: c.description,
    rendered_description: c.rendered_description,
    date_created: c.date_created,
    creator_id: c.creator_id,
    invite_only: c.invite_only === 1,
    is_archived: c.is_archived === 1,
    is_web_public: c.is_web_public === 1,
    stream_post_policy: x.streamPostPolicy,
    is_announcement_only: x.streamPostPolicy === 2,
    message_retention_days: c.message_retention_days,
    history_public_to_subscribers: c.history_public_to_subscribers === 1,
    first_message_id: x.firstMessageId,
    is_recently_active: true,
    topics_policy: c.topics_policy,
    folder_id: c.folder_id,
    stream_weekly_traffic: null,
    subscriber_count: x.subscriberCount,
  };
  for (const name of CHANNEL_GROUP_SETTING_NAMES) out[name] = x.groupSettings[name];
  return out;
}

/** The user's defaults that null per-subscription notification settings inherit. */
export interface NotificationDefaults {
  desktop_notifications: boolean;
  audible_notifications: boolean;
  push_notifications: boolean;
  email_notifications: boolean;
  wildcard_mentions_notify: boolean;
}

export const SUBSCRIPTION_NOTIFICATION_SETTINGS = [
  'desktop_notifications',
  'audible_notifications',
  'push_notifications',
  'email_notifications',
  'wildcard_mentions_notify',
] as const;

export interface SubscriptionOptions {
  /** Client capability notification_settings_null: send null for "inherit" instead of the default. */
  notificationSettingsNull: boolean;
  defaults: NotificationDefaults;
  subscribers?: number[];
  partialSubscribers?: number[];
}

export function presentSubscription(
  channel: Record<string, unknown>,
  sub: SubscriptionRow,
  opts: SubscriptionOptions,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...channel };
  for (const name of SUBSCRIPTION_NOTIFICATION_SETTINGS) {
    const v = sub[name];
    out[name] = v === null ? (opts.notificationSettingsNull ? null : opts.defaults[name]) : v === 1;
  }
  Object.assign(out, {
    color: sub.color,
    pin_to_top: sub.pin_to_top === 1,
    is_muted: sub.is_muted === 1,
    in_home_view: sub.is_muted !== 1,
  });
  if (opts.subscribers) out.subscribers = opts.subscribers;
  if (opts.partialSubscribers) out.partial_subscribers = opts.partialSubscribers;
  return out;
}

/** The palette new subscriptions take their colors from, in order. */
export const SUBSCRIPTION_COLORS = [
  '#76ce90',
  '#fae589',
  '#a6c7e5',
  '#e79ab5',
  '#bfd56f',
  '#f4ae55',
  '#b0a5fd',
  '#addfe5',
  '#f5ce6e',
  '#c2726a',
  '#94c849',
  '#bd86e5',
  '#ee7e4a',
  '#a6dcbf',
  '#95a5fd',
  '#53a063',
  '#9987e1',
  '#e4523d',
  '#c2c2c2',
  '#4f8de4',
  '#c6a8ad',
  '#e7cc4d',
  '#c8bebf',
  '#a47462',
];

/** The first palette color the user does not use yet (cycling when all are used). */
export function pickSubscriptionColor(used: Iterable<string>): string {
  const taken = new Set(used);
  return (
    SUBSCRIPTION_COLORS.find((c) => !taken.has(c)) ??
    SUBSCRIPTION_COLORS[taken.size % SUBSCRIPTION_COLORS.length]
  );
}

/** A default channel group (its channel ids in the order of the channels' names). */
export function presentDefaultChannelGroup(g: {
  id: number;
  name: string;
  description: string;
  channelIds: number[];
}): Record<string, unknown> {
  return { name: g.name, description: g.description, id: g.id, streams: g.channelIds };
}
