// Event queues: POST /register, GET /events (long-poll), DELETE /events.
import { Type } from 'typebox';
import {
  deleteQueue,
  getEvents,
  registerQueue,
  type EventsReply,
  type GetEventsParams,
} from '../../actions/events.ts';
import { eventsJson } from '../../events/event-json.ts';
import { CLIENT_CAPABILITIES } from '../../lib/event-client.ts';
import type { ServerResponse } from 'node:http';
import type { AppContext } from '../../context.ts';
import type { Actor } from '../../lib/actor.ts';
import { defineRoute } from '../route.ts';

const EventTypeList = Type.Union([
  Type.Array(Type.String({ maxLength: 100 }), { maxItems: 1000 }),
  Type.Null(),
]);

const capabilityFlags = Object.fromEntries(
  CLIENT_CAPABILITIES.filter((c) => c !== 'notification_settings_null').map((c) => [
    c,
    Type.Optional(Type.Boolean()),
  ]),
);

/** The parameters describing a queue's client, shared by POST /register and GET /events. */
const QueueParams = {
  apply_markdown: Type.Optional(Type.Boolean({ default: false })),
  client_gravatar: Type.Optional(Type.Boolean({ default: true })),
  slim_presence: Type.Optional(Type.Boolean({ default: false })),
  all_public_streams: Type.Optional(Type.Boolean()),
  event_types: Type.Optional(EventTypeList),
  narrow: Type.Optional(
    Type.Array(Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 2 }), {
      maxItems: 100,
      default: [],
    }),
  ),
  // The reference server made notification_settings_null required whenever the object is sent.
  client_capabilities: Type.Optional(
    Type.Object(
      { notification_settings_null: Type.Boolean(), ...capabilityFlags },
      { additionalProperties: Type.Unknown() },
    ),
  ),
  idle_queue_timeout: Type.Optional(
    Type.Union([Type.Integer({ minimum: 0 }), Type.Literal('mobile')]),
  ),
  queue_lifespan_secs: Type.Optional(Type.Integer({ minimum: 0 })),
  fetch_event_types: Type.Optional(EventTypeList),
  include_subscribers: Type.Optional(
    Type.Union([Type.Boolean(), Type.Literal('partial')], { default: false }),
  ),
  presence_history_limit_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 36500 })),
};

function presentPoll(answer: EventsReply): Record<string, unknown> {
  return { ...answer, events: eventsJson(answer.events) };
}

/**
 * GET /events: the poll's answer, at once when it has one, else a promise of it for when
 * its queue answers; a client that disconnects meanwhile frees its queue's waiter. Also
 * called by http/poll-listener.ts, which answers most polls without Fastify and keeps no
 * async frame alive while a poll is parked.
 */
export function answerPoll(
  ctx: AppContext,
  actor: Actor,
  params: GetEventsParams,
  res: ServerResponse,
): Record<string, unknown> | Promise<Record<string, unknown>> {
  const start = getEvents(ctx, actor, params);
  if ('reply' in start) return presentPoll(start.reply);
  const onClose = () => {
    if (!res.writableEnded) start.cancel();
  };
  res.on('close', onClose);
  return start.parked.then(
    (answer) => {
      res.off('close', onClose);
      return presentPoll(answer);
    },
    (err: unknown) => {
      res.off('close', onClose);
      throw err;
    },
  );
}

export const GetEventsParamsSchema = Type.Object({
  queue_id: Type.Optional(Type.String({ maxLength: 100 })),
  last_event_id: Type.Optional(Type.Integer()),
  dont_block: Type.Optional(Type.Boolean({ default: false })),
  ...QueueParams,
});

export const eventsRoutes = [
  defineRoute({
    method: 'POST',
    url: '/register',
    summary: 'Register an event queue and fetch the initial state',
    tags: ['real_time_events'],
    auth: 'user',
    params: Type.Object(QueueParams),
    handler: async ({ ctx, actor, params }) => registerQueue(ctx, actor, params),
  }),
  defineRoute({
    method: 'GET',
    url: '/events',
    summary: 'Get events from an event queue (long-poll)',
    tags: ['real_time_events'],
    auth: 'user',
    writeDirect: true,
    params: GetEventsParamsSchema,
    handler: async ({ ctx, actor, params, reply }) => answerPoll(ctx, actor, params, reply.raw),
  }),
  defineRoute({
    method: 'DELETE',
    url: '/events',
    summary: 'Delete an event queue',
    tags: ['real_time_events'],
    auth: 'user',
    params: Type.Object({ queue_id: Type.String({ maxLength: 100 }) }),
    handler: async ({ ctx, actor, params }) => {
      deleteQueue(ctx, actor, params.queue_id);
      return {};
    },
  }),
];
