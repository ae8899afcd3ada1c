// One client's event queue: its events, numbered in order and kept until the client
// acknowledges them, and its parked poll. EventQueues (queues.ts) owns every queue, finds
// them through the indexes below, and answers their polls.
import type { ClientDescriptor } from '../lib/event-client.ts';
import { badRequest } from '../lib/errors.ts';
import { stringJson, type JsonText } from './event-json.ts';
import type { SavedQueue } from './saved-queues.ts';
import type { ParleyEvent } from './types.ts';

/** An event as a reply carries it: the event, shared by many queues, and this queue's id. */
export interface NumberedEvent {
  readonly id: number;
  readonly event: ParleyEvent;
}

export interface QueuedEvent extends NumberedEvent {
  /** The notice's commit sequence, kept only until the queue learns its snapshot's. */
  seq?: number;
}

export interface EventsReply {
  /** Written out with the id among the event's fields (events/event-json.ts). */
  events: readonly NumberedEvent[];
  /** Present on replies to a parked poll and on the first reply of a queue GET /events created. */
  queue_id?: string;
  /** queue_id as JSON, when its queue keeps it (Queue.idJson). */
  queueIdJson?: JsonText;
}

/** Where a parked poll's outcome goes: the reply it gets, or the error that ends it. */
export interface PollSink {
  answer(reply: EventsReply): void;
  fail(err: Error): void;
}

/**
 * A poll waiting for an event, a heartbeat or a newer poll. Its answer goes to its sink: no
 * promise and no closures per parked poll, since thousands of them live for up to a minute
 * and every object they hold is copied by each young-generation collection until promoted.
 */
export class ParkedPoll {
  constructor(
    private readonly queues: { cancel(parked: ParkedPoll): void },
    readonly queueId: string,
    readonly sink: PollSink,
    /** The heartbeat wheel's slot this poll is answered at if nothing else comes. */
    readonly heartbeatTick: number,
  ) {}

  /** Answer now with no events, if still parked (its client went away). */
  cancel(): void {
    this.queues.cancel(this);
  }
}

/**
 * The list of every queue without events, never changed: append replaces it. Its elements are
 * of the kind a list of events has (a literal `[]` is one of small integers, another hidden
 * class): when a fan-out first reached queues that had never held an event, the delivery code
 * optimized for the other kind was thrown away mid-delivery (docs/performance.md, item 4,
 * session 51).
 */
const NO_EVENTS: QueuedEvent[] = [null as unknown as QueuedEvent];
NO_EVENTS.pop();

export class Queue {
  events: QueuedEvent[] = NO_EVENTS;
  nextId = 0;
  prunedId = -1;
  waiter: ParkedPoll | null = null;
  /** Where in the heartbeat period this queue's heartbeats fall (ms, set when added). */
  heartbeatPhase = 0;
  private idJsonText: JsonText | null = null;

  constructor(
    readonly id: string,
    readonly userId: number,
    readonly realmId: number,
    readonly client: ClientDescriptor,
    public lastTouchMs: number,
    /** Notices of the realm up to this sequence are in the client's snapshot: undefined while
     *  register is still reading it, null for a queue without a snapshot. */
    public snapshotSeq: number | null | undefined,
    /** Its user may read public channels they are not in (not a guest), as last told. */
    public readsPublicChannels: boolean,
  ) {}

  /** A queue a stopping process saved (saved-queues.ts), with its client interned. */
  static restored(s: SavedQueue<QueuedEvent>, client: ClientDescriptor, nowMs: number): Queue {
    const q = new Queue(
      s.id,
      s.user_id,
      s.realm_id,
      client,
      nowMs,
      s.snapshot_seq,
      // Saved before the field existed: as such queues were then.
      s.reads_public_channels ?? true,
    );
    if (s.events.length > 0) q.events = s.events;
    q.nextId = s.next_id;
    q.prunedId = s.pruned_id;
    return q;
  }

  /**
   * The queue as a stopping process saves it; null while its register is still reading the
   * snapshot, since such a queue was never handed to a client.
   */
  saved(): SavedQueue<QueuedEvent> | null {
    const snapshotSeq = this.snapshotSeq;
    if (snapshotSeq === undefined) return null;
    return {
      id: this.id,
      user_id: this.userId,
      realm_id: this.realmId,
      client: this.client,
      events: this.events,
      next_id: this.nextId,
      pruned_id: this.prunedId,
      snapshot_seq: snapshotSeq,
      reads_public_channels: this.readsPublicChannels,
    };
  }

  /**
   * The id as JSON, which every answer to a parked poll names: made at the first and kept, as
   * writing it took about 1,000 instructions an answer (docs/performance.md, session 57).
   * Queues that never answer a parked poll keep nothing.
   */
  get idJson(): JsonText {
    return (this.idJsonText ??= stringJson(this.id));
  }

  /** Append an event with the queue's next id; seq is kept until the snapshot's is known. */
  append(event: ParleyEvent, seq: number | undefined): void {
    const queued: QueuedEvent =
      seq === undefined ? { id: this.nextId++, event } : { id: this.nextId++, event, seq };
    // An empty queue's first event gets an array of one: a push would grow it to room for 17,
    // kept until the client acknowledges, so 10,000 queues offered one message kept 1.2 MB
    // more for the young-generation collections to copy (docs/performance-history.md, item 4).
    if (this.events.length === 0) this.events = [queued];
    else this.events.push(queued);
  }

  /** last_event_id acknowledges every event up to it; they are pruned for good. */
  acknowledge(lastEventId: number): void {
    if (lastEventId < this.prunedId) {
      throw badRequest(`An event newer than ${lastEventId} has already been pruned!`);
    }
    let n = 0;
    while (n < this.events.length && this.events[n].id <= lastEventId) n++;
    if (n > 0) {
      this.prunedId = this.events[n - 1].id;
      // Most polls acknowledge everything: no splice (about 300 instructions a poll, figure i)
      // and no array kept with room for events gone.
      if (n === this.events.length) this.events = NO_EVENTS;
      else this.events.splice(0, n);
    }
    if (lastEventId !== this.prunedId) {
      throw badRequest(`Event ${lastEventId} was not in this queue`);
    }
  }

  /** The client's snapshot reflects the realm's notices up to seq: drop those queued. */
  keepAfter(seq: number): void {
    const kept = this.events
      .filter((e) => e.seq === undefined || e.seq > seq)
      .map((e) => ({ id: e.id, event: e.event }));
    this.events = kept.length === 0 ? NO_EVENTS : kept;
  }
}

export function indexAdd(index: Map<number, Set<Queue>>, key: number, q: Queue): void {
  const set = index.get(key);
  if (set) set.add(q);
  else index.set(key, new Set([q]));
}

export function indexDelete(index: Map<number, Set<Queue>>, key: number, q: Queue): void {
  const set = index.get(key);
  if (!set?.delete(q)) return;
  if (set.size === 0) index.delete(key);
}
