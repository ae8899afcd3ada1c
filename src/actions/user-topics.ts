// Personal topic preferences: a visibility policy per channel topic (muted, unmuted,
// followed), matched regardless of case. Setting one needs read access to the channel;
// clearing one only that the channel exists, so a user who lost access can still clean up.
//
// Every change sends user_topic, and the legacy muted_topics (the whole muted list) that
// the queue layer drops for clients which asked for user_topic. A request that changes
// nothing sends nothing.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { badRequest, type JsonableError } from '../lib/errors.ts';
import { presentMutedTopics, presentUserTopic } from '../lib/presenters/user-topics.ts';
import { unixNow } from '../infra/clock.ts';
import * as channelsStore from '../store/channels.ts';
import type { Q } from '../store/db.ts';
import type { ChannelRow } from '../store/schema.ts';
import * as userTopicsStore from '../store/user-topics.ts';
import { getChannelAccess, invalidChannelId, invalidChannelName } from './channel-access.ts';
import { topicNamedIn } from './message-present.ts';
import { accessCurrentActor } from './permissions.ts';
import { withTransaction, type Work } from './transaction.ts';

export const VISIBILITY_POLICY = { inherit: 0, muted: 1, unmuted: 2, followed: 3 } as const;

export interface SetTopicVisibilityParams {
  streamId: number;
  topic: string;
  visibilityPolicy: number;
}

/** The legacy mute endpoint: a channel by id or by name (exactly one), add or remove. */
export interface MuteTopicParams {
  streamId?: number;
  stream?: string;
  topic: string;
  op: 'add' | 'remove';
}

/** A channel of the actor's realm; with needsAccess, one whose messages they may read. */
async function findChannel(
  db: Q,
  actor: Actor,
  ref: { id?: number; name?: string },
  needsAccess: boolean,
  notFound: () => JsonableError,
): Promise<ChannelRow> {
  const channel =
    ref.id !== undefined
      ? await channelsStore.getChannel(db, actor.realm.id, ref.id)
      : await channelsStore.getChannelByName(db, actor.realm.id, ref.name ?? '');
  if (!channel) throw notFound();
  if (!needsAccess) return channel;
  const access = await getChannelAccess(db, actor.user, channel);
  if (!access.content || channel.is_archived === 1) throw notFound();
  return channel;
}

export async function setTopicVisibility(
  ctx: AppContext,
  actor: Actor,
  params: SetTopicVisibilityParams,
): Promise<void> {
  await withTransaction(ctx, actor.realm.id, async (work) => {
    // Access to the channel is decided by the actor's role as it is now, and the empty
    // topic's display name by the organization's settings as they are now.
    const me = await accessCurrentActor(work.db, actor);
    const topic = topicNamedIn(me.realm, params.topic);
    const channel = await findChannel(
      work.db,
      me,
      { id: params.streamId },
      params.visibilityPolicy !== VISIBILITY_POLICY.inherit,
      invalidChannelId,
    );
    await doSetTopicVisibility(ctx, work, me, channel, topic, params.visibilityPolicy);
  });
}

export async function muteTopic(
  ctx: AppContext,
  actor: Actor,
  params: MuteTopicParams,
): Promise<void> {
  if (params.streamId === undefined && params.stream === undefined) {
    throw badRequest("Missing 'stream_id' argument");
  }
  if (params.streamId !== undefined && params.stream !== undefined) {
    throw badRequest('Unsupported parameter combination: stream_id, stream', {
      parameters: 'stream_id, stream',
    });
  }
  const ref = { id: params.streamId, name: params.stream };
  const adding = params.op === 'add';
  const notFound = !adding
    ? () => badRequest('Topic is not muted')
    : ref.id !== undefined
      ? invalidChannelId
      : () => invalidChannelName(ref.name!);
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const me = await accessCurrentActor(work.db, actor);
    const topic = topicNamedIn(me.realm, params.topic);
    const channel = await findChannel(work.db, me, ref, adding, notFound);
    const policy = adding ? VISIBILITY_POLICY.muted : VISIBILITY_POLICY.inherit;
    await doSetTopicVisibility(ctx, work, me, channel, topic, policy);
  });
}

/** Store the policy (0 removes it) and tell the user's clients, if anything changed. */
export async function doSetTopicVisibility(
  ctx: AppContext,
  work: Work,
  actor: Actor,
  channel: ChannelRow,
  topic: string,
  policy: number,
): Promise<void> {
  const db = work.db;
  const userId = actor.user.id;
  const key = topic.toLowerCase();
  const now = unixNow(ctx.clock);
  const row = await userTopicsStore.getUserTopic(db, userId, channel.id, key);
  if (policy === VISIBILITY_POLICY.inherit) {
    if (!row) return;
    await userTopicsStore.deleteUserTopic(db, userId, channel.id, key);
  } else {
    if (row?.visibility_policy === policy) return;
    // The name takes the latest spelling, as the event carries it.
    await userTopicsStore.upsertUserTopic(db, {
      user_id: userId,
      channel_id: channel.id,
      topic_name: topic,
      topic_key: key,
      visibility_policy: policy,
      last_updated: now,
    });
  }
  const muted = presentMutedTopics(await userTopicsStore.listMutedTopics(db, userId));
  work.emitOnCommit({ type: 'muted_topics', muted_topics: muted }, [userId]);
  // The canonical form keeps the empty topic; shaping renames it for older clients.
  const entry = { channel_id: channel.id, topic_name: topic, last_updated: now };
  work.emitOnCommit(
    { type: 'user_topic', ...presentUserTopic({ ...entry, visibility_policy: policy }, null) },
    [userId],
  );
}
