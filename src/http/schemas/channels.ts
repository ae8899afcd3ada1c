// Parameter schemas of the channel and subscription routes.
import { Type, type TSchema } from 'typebox';
import {
  CHANNEL_GROUP_SETTING_NAMES,
  MAX_CHANNEL_DESCRIPTION_LENGTH,
  type ChannelGroupSettingName,
} from '../../lib/channel-settings.ts';
import { GroupSettingUpdate, GroupSettingValue } from './common.ts';

const MAX_ID = 2147483647;

export const StreamIdPath = Type.Object({
  stream_id: Type.Integer({ minimum: 0, maximum: MAX_ID }),
});

export const GroupIdPath = Type.Object({
  group_id: Type.Integer({ minimum: 0, maximum: MAX_ID }),
});

/** User ids (preferred) or API emails. */
export const Principals = Type.Union([
  Type.Array(Type.String({ maxLength: 254 }), { maxItems: 10000 }),
  Type.Array(Type.Integer(), { maxItems: 10000 }),
]);

/** A number of days, "unlimited" or "realm_default". */
export const MessageRetentionDays = Type.Union([Type.Integer(), Type.String({ maxLength: 40 })]);

// Names are bounded loosely here: the channel-name check words its own errors.
export const ChannelNames = Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 1000 });

/** The channel group settings a create or update request may carry, one parameter each. */
export function groupSettingParams(update: boolean): Record<ChannelGroupSettingName, TSchema> {
  return Object.fromEntries(
    CHANNEL_GROUP_SETTING_NAMES.map((name) => [
      name,
      Type.Optional(update ? GroupSettingUpdate : GroupSettingValue),
    ]),
  ) as unknown as Record<ChannelGroupSettingName, TSchema>;
}

/** The group settings present in parsed parameters. */
export function pickGroupSettings<T>(
  params: Record<string, unknown>,
): Partial<Record<ChannelGroupSettingName, T>> {
  const out: Partial<Record<ChannelGroupSettingName, T>> = {};
  for (const name of CHANNEL_GROUP_SETTING_NAMES) {
    if (params[name] !== undefined) out[name] = params[name] as T;
  }
  return out;
}

export const SubscriptionRequests = Type.Array(
  Type.Object(
    {
      name: Type.String({ maxLength: 1000 }),
      description: Type.Optional(Type.String({ maxLength: MAX_CHANNEL_DESCRIPTION_LENGTH })),
      color: Type.Optional(Type.String({ maxLength: 100 })),
    },
    { additionalProperties: false },
  ),
  { maxItems: 1000 },
);

/** A property value: a boolean, or a color. */
export const PropertyValue = Type.Union([Type.Boolean(), Type.String({ maxLength: 100 })]);
