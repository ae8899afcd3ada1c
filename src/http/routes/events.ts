// Event queues: POST /register, GET /events (long-poll), DELETE /events.
import { Type } from 'typebox';
import {
  deleteQueue,
  getEvents,
  ParkedPoll,
  registerQueue,
  type EventsReply,
  type GetEventsParams,
  type PollSink,
} from '../../actions/events.ts';
import {
  eventsJson,
  sharedEventBeforeId,
  stringJson,
  type JsonText,
} from '../../events/event-json.ts';
import { CLIENT_CAPABILITIES } from '../../lib/event-client.ts';
import type { ServerResponse } from 'node:http';
import type { AppContext } from '../../context.ts';
import type { Actor } from '../../lib/actor.ts';
import {
  defineRoute,
  JSON_TYPE,
  SUCCESS_OPEN,
  successTextAround,
  type RawReply,
} from '../route.ts';

/** An answer already written as JSON, envelope included. */
const jsonReply = (body: string): RawReply => ({ raw: true, contentType: JSON_TYPE, body });

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

const EVENTS_KEY = '"events":';
const QUEUE_ID_KEY = ',"queue_id":';

/**
 * A poll's answer as JSON text, with its size in bytes: the events from their kept JSON
 * (events/event-json.ts), in the envelope of every answer. A fan-out writes thousands of
 * these, one string each.
 */
export function pollAnswerJson(reply: EventsReply, ignored: readonly string[]): JsonText {
  if (reply.events.length === 1 && reply.queue_id !== undefined && ignored.length === 0) {
    const one = oneEventAnswerJson(
      reply.events[0],
      reply.queueIdJson ?? stringJson(reply.queue_id),
    );
    if (one !== undefined) return one;
  }
  const events = eventsJson(reply.events);
  let fields = `${EVENTS_KEY}${events.text}`;
  let bytes = EVENTS_KEY.length + events.bytes;
  if (reply.queue_id !== undefined) {
    const queueId = reply.queueIdJson ?? stringJson(reply.queue_id);
    fields += `${QUEUE_ID_KEY}${queueId.text}`;
    bytes += QUEUE_ID_KEY.length + queueId.bytes;
  }
  const text = successTextAround(fields, ignored);
  // The envelope is ASCII, unless it names parameters the client made up.
  bytes = ignored.length === 0 ? bytes + text.length - fields.length : Buffer.byteLength(text);
  return { text, bytes };
}

/** Every answer of one shared event up to the event's id, kept with the event. */
const oneEventAnswerHeads = new WeakMap<object, JsonText>();
const ONE_EVENT_OPEN = `${SUCCESS_OPEN},${EVENTS_KEY}[`;

/**
 * The answer of a parked poll woken by one shared event, the answer of each receiver of a
 * fan-out: the envelope and the event up to its id are written once for all of them, and each
 * answer adds its id and queue id to that text. Built as pollAnswerJson builds every answer, it
 * took about 14 string additions an answer (docs/performance.md, session 57). Undefined for an
 * event eventsJson writes each time (not shared, or with an id field of its own).
 */
function oneEventAnswerJson(
  { id, event }: EventsReply['events'][number],
  queue: JsonText,
): JsonText | undefined {
  let head = oneEventAnswerHeads.get(event);
  if (head === undefined) {
    const beforeId = sharedEventBeforeId(event);
    if (beforeId === undefined) return undefined;
    head = {
      text: `${ONE_EVENT_OPEN}${beforeId.text}`,
      bytes: ONE_EVENT_OPEN.length + beforeId.bytes,
    };
    oneEventAnswerHeads.set(event, head);
  }
  // The id and the punctuation are ASCII: a byte a character.
  const tail = `${id}}]${QUEUE_ID_KEY}${queue.text}}`;
  return {
    text: `${head.text}${tail}`,
    bytes: head.bytes + tail.length - queue.text.length + queue.bytes,
  };
}

/**
 * One GET /events request's answer. start() gives the poll's fields at once when it has
 * them; otherwise the poll parks with this object as its queue's sink, which writes the
 * answer later through send or refuse. A client that disconnects meanwhile cancels its
 * parked poll, so its queue's waiter is freed. Used by the route below and by
 * http/direct-listener.ts, which answers most polls without Fastify.
 */
export abstract class PollAnswer implements PollSink {
  private parked: ParkedPoll | null = null;

  constructor(
    protected readonly res: ServerResponse,
    /** The request's unknown parameters, named in its answer. */
    private readonly ignored: readonly string[],
  ) {}

  /** The poll's answer now, or undefined when it parked: send or refuse follows. */
  start(ctx: AppContext, actor: Actor, params: GetEventsParams): JsonText | void {
    const started = getEvents(ctx, actor, params, this);
    if (!(started instanceof ParkedPoll)) return pollAnswerJson(started, this.ignored);
    this.parked = started;
    // Read the request to its end now, while the poll waits: node:http would do it when the
    // answer is written (an unread request is dumped on finish), inside a fan-out's answers
    // (docs/performance.md, item 4, session 51).
    this.res.req.resume();
    // Left in place once the poll is answered, when it does nothing: taking it off cost more
    // than the call it saves (2.5 % of a fan-out's answering; docs/performance-history.md, item 4).
    this.res.on('close', () => {
      if (!this.res.writableEnded) this.parked?.cancel();
    });
  }

  answer(reply: EventsReply): void {
    this.parked = null;
    this.send(pollAnswerJson(reply, this.ignored));
  }

  fail(err: Error): void {
    this.parked = null;
    this.refuse(err);
  }

  protected abstract send(answer: JsonText): void;
  protected abstract refuse(err: Error): void;
}

/** A poll answered through Fastify: the handler's promise settles with the answer. */
class PromisedPoll extends PollAnswer {
  constructor(
    res: ServerResponse,
    ignored: readonly string[],
    private readonly resolve: (answer: RawReply) => void,
    private readonly reject: (err: Error) => void,
  ) {
    super(res, ignored);
  }

  protected send(answer: JsonText): void {
    this.resolve(jsonReply(answer.text));
  }

  protected refuse(err: Error): void {
    this.reject(err);
  }
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
    params: GetEventsParamsSchema,
    handler: ({ ctx, actor, params, res, ignored }) =>
      new Promise((resolve, reject) => {
        const now = new PromisedPoll(res, ignored, resolve, reject).start(ctx, actor, params);
        if (now) resolve(jsonReply(now.text));
      }),
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
