// Event queues: POST /register (a queue plus a consistent snapshot), GET /events and
// DELETE /events.
//
// Register consistency: the queue is created first, so it receives every notice committed
// from then on. The snapshot is then read in one read transaction together with the
// realm's commit sequence S; the queue drops the realm's notices with seq <= S (already
// reflected in the snapshot), including those that arrived meanwhile or arrive late.
// Notices without a sequence (heartbeat, restart, typing) are never dropped.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { badRequest } from '../lib/errors.ts';
import { checkEventNarrow, readCapabilities, type ClientDescriptor } from '../lib/event-client.ts';
import { versionFields } from '../lib/presenters/server.ts';
import { readRealmSettings } from '../lib/realm-settings.ts';
import { isGuest } from '../lib/roles.ts';
import {
  MAX_QUEUE_IDLE_TIMEOUT_SECS,
  MOBILE_QUEUE_IDLE_TIMEOUT_SECS,
  serverRegisterConstants,
} from '../lib/server-limits.ts';
import { buildSnapshot } from '../events/initial-state.ts';
import {
  badEventQueueId,
  type EventsReply,
  type ParkedPoll,
  type PollSink,
} from '../events/queues.ts';
import { SERVER_GENERATION } from '../version.ts';
import type { Db } from '../store/db.ts';
import { accessCurrentActor } from './permissions.ts';
import { withReadSnapshot } from './transaction.ts';

export { ParkedPoll } from '../events/queues.ts';
export type { EventsReply, PollSink } from '../events/queues.ts';

/** The parameters that describe a queue's client (POST /register and GET /events alike). */
export interface QueueParams {
  apply_markdown?: boolean;
  client_gravatar?: boolean;
  slim_presence?: boolean;
  all_public_streams?: boolean;
  event_types?: string[] | null;
  narrow?: string[][];
  client_capabilities?: Record<string, unknown>;
  idle_queue_timeout?: number | 'mobile';
  queue_lifespan_secs?: number;
  include_subscribers?: boolean | 'partial';
}

export interface RegisterParams extends QueueParams {
  fetch_event_types?: string[] | null;
  presence_history_limit_days?: number;
}

export interface GetEventsParams extends RegisterParams {
  queue_id?: string;
  last_event_id?: number;
  dont_block?: boolean;
}

/** Points where a test may run an action inside register, to force an interleaving. */
export type RegisterHookPoint = 'queue-created' | 'snapshot-read';
type RegisterHook = (point: RegisterHookPoint, queueId: string) => Promise<void>;
let registerHook: RegisterHook | null = null;
export function setRegisterHook(hook: RegisterHook | null): void {
  registerHook = hook;
}

/** The idle lifetime: the server default, or longer (up to 7 days) when the client asks. */
function idleTimeoutFor(ctx: AppContext, params: QueueParams): number {
  const asked =
    params.idle_queue_timeout === 'mobile'
      ? MOBILE_QUEUE_IDLE_TIMEOUT_SECS
      : (params.idle_queue_timeout ?? params.queue_lifespan_secs ?? 0);
  const fallback = ctx.config.queueIdleTimeoutSecs;
  return asked > 0 ? Math.max(fallback, Math.min(asked, MAX_QUEUE_IDLE_TIMEOUT_SECS)) : fallback;
}

export function checkClientDescriptor(
  ctx: AppContext,
  actor: Actor,
  params: QueueParams,
): ClientDescriptor {
  const allPublicStreams = params.all_public_streams ?? false;
  // Guests cannot read public channels they are not in.
  if (allPublicStreams && isGuest(actor.user))
    throw badRequest('User not authorized for this query');
  return {
    eventTypes: params.event_types ?? null,
    narrow: checkEventNarrow(params.narrow ?? []),
    allPublicStreams,
    applyMarkdown: params.apply_markdown ?? false,
    clientGravatar: params.client_gravatar ?? true,
    slimPresence: params.slim_presence ?? false,
    includeSubscribers: params.include_subscribers ?? false,
    capabilities: readCapabilities(params.client_capabilities),
    idleTimeoutSecs: idleTimeoutFor(ctx, params),
  };
}

/** Whose queue it is; a guest's hears of no public channel they are not in. */
function queueOwner(actor: Actor) {
  return {
    userId: actor.user.id,
    realmId: actor.realm.id,
    readsPublicChannels: !isGuest(actor.user),
  };
}

/** Reading a snapshot is tried again at most this often when a notice it needs was lost. */
const SNAPSHOT_READS = 3;

/**
 * Read the snapshot for a new queue and tell the queue which commit it reflects. A notice
 * lost while it was read (events/realm-sequences.ts) leaves the queue behind such a snapshot,
 * so it is read again: the lost change is committed, so the next read reflects it.
 */
async function readSnapshotInto<T extends { emptyTopicDisplayName: unknown }>(
  ctx: AppContext,
  queueId: string,
  actor: Actor,
  read: (db: Db) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const { seq, value } = await withReadSnapshot(ctx, actor.realm.id, read);
    await registerHook?.('snapshot-read', queueId);
    const fit = ctx.queues.setSnapshot(queueId, seq, value);
    if (fit === 'set') return value;
    // Gone meanwhile: overflowed, or its user was deactivated.
    if (fit === 'gone' || attempt === SNAPSHOT_READS) throw badEventQueueId(queueId);
  }
}

/** POST /register. */
export async function registerQueue(
  ctx: AppContext,
  actor: Actor,
  params: RegisterParams,
): Promise<Record<string, unknown>> {
  const client = checkClientDescriptor(ctx, actor, params);
  const queueId = ctx.queues.create(queueOwner(actor), client, {
    awaitSnapshot: true,
    emptyTopicDisplayName: readRealmSettings(actor.realm.settings).empty_topic_display_name,
  });
  try {
    await registerHook?.('queue-created', queueId);
    const value = await readSnapshotInto(ctx, queueId, actor, async (db) => {
      // The user and realm as of the snapshot, not as authentication read them.
      const current = await accessCurrentActor(db, actor);
      if (isGuest(current.user)) ctx.queues.limitToOwnChannels(queueId);
      const keys = await buildSnapshot(
        { ...ctx, db },
        {
          actor: current,
          client,
          fetch: params.fetch_event_types ?? params.event_types ?? null,
          includeSubscribers: params.include_subscribers ?? false,
          presenceHistoryLimitDays: params.presence_history_limit_days ?? null,
        },
      );
      return {
        keys,
        emptyTopicDisplayName: readRealmSettings(current.realm.settings).empty_topic_display_name,
      };
    });
    const asked =
      params.idle_queue_timeout !== undefined || params.queue_lifespan_secs !== undefined;
    return {
      queue_id: queueId,
      last_event_id: -1,
      ...versionFields(),
      ...serverRegisterConstants(SERVER_GENERATION),
      ...value.keys,
      ...(asked ? { idle_queue_timeout_secs: client.idleTimeoutSecs } : {}),
    };
  } catch (err) {
    ctx.queues.discard(queueId);
    throw err;
  }
}

/**
 * GET /events: poll a queue, or without queue_id register one from the same parameters
 * as POST /register (without a snapshot) and poll it. A poll that parks is answered through
 * sink.
 */
export function getEvents(
  ctx: AppContext,
  actor: Actor,
  params: GetEventsParams,
  sink: PollSink,
): EventsReply | ParkedPoll {
  const dontBlock = params.dont_block ?? false;
  if (params.queue_id === undefined) {
    const client = checkClientDescriptor(ctx, actor, params);
    const queueId = ctx.queues.create(queueOwner(actor), client, {
      awaitSnapshot: false,
      emptyTopicDisplayName: readRealmSettings(actor.realm.settings).empty_topic_display_name,
    });
    return ctx.queues.poll(queueId, actor.user.id, { dontBlock, newQueue: true }, sink);
  }
  return ctx.queues.poll(
    params.queue_id,
    actor.user.id,
    { lastEventId: params.last_event_id, dontBlock },
    sink,
  );
}

/** DELETE /events. */
export function deleteQueue(ctx: AppContext, actor: Actor, queueId: string): void {
  ctx.queues.delete(queueId, actor.user.id);
}
