// One notice on its way to its recipients' queues (EventQueues.deliver, queues.ts): how far
// it got, the event each recipient's part makes, and the last shaping, which the next queue
// of a fan-out mostly takes as it is. Also what a notice asks of the queues themselves.
import type { ClientDescriptor } from '../lib/event-client.ts';
import type { Queue } from './queue.ts';
import { shapeForClient } from './shaping.ts';
import type { Notice, ParleyEvent } from './types.ts';

/** Who listens realm-wide to a notice of a public channel, and who of them is done. */
export interface WideListeners {
  listeners: Queue[];
  /** The notice's recipients, reached already; empty when nobody listens realm-wide. */
  recipients: ReadonlySet<number>;
  next: number;
}

/**
 * Every field is set in the constructor: a field added later changes the object's hidden
 * class, and a fan-out that resumed in a later chunk met the new one in code optimized for
 * the old (docs/performance.md, item 4, session 51).
 */
export class Delivery {
  started = false;
  /** The first recipient not reached. */
  next = 0;
  /** The realm-wide listeners once the recipients are done. */
  wide: WideListeners | null = null;
  /** The event with each per-user part merged in: recipients given one part share one. */
  private merged: Map<object, ParleyEvent> | null = null;
  /**
   * What shapeForClient made last, and for what: event, client form and delivery context.
   * The queues of a fan-out come one after another with the same merged event and, clients
   * being interned, mostly the same client: they take the list made for the one before
   * instead of shaping the message again, about 900 instructions a queue
   * (docs/performance.md, session 56). Shaped events are never changed once queued, so
   * queues may share them.
   */
  private lastEvent: ParleyEvent | null = null;
  private lastClient: ClientDescriptor | null = null;
  private lastRecipient = false;
  private lastTopicName = '';
  private lastShaped: ParleyEvent[] = [];

  constructor(readonly notice: Notice) {}

  /**
   * The notice's event with one recipient's part merged in. Actions give recipients with
   * the same part one object (a message's flags), so a send to 10,000 makes a handful of
   * events, each shaped and written once per client form (shaping.ts, event-json.ts).
   */
  eventFor(userId: number): ParleyEvent {
    const extra = this.notice.perUser?.[userId];
    if (!extra) return this.notice.event;
    this.merged ??= new Map();
    let event = this.merged.get(extra);
    if (!event) this.merged.set(extra, (event = { ...this.notice.event, ...extra } as ParleyEvent));
    return event;
  }

  /** The events q receives for event: the last queue's, when it was shaped the same way. */
  shapeFor(
    event: ParleyEvent,
    q: Queue,
    recipient: boolean,
    emptyTopicName: string,
  ): ParleyEvent[] {
    if (
      this.lastEvent === event &&
      this.lastClient === q.client &&
      this.lastRecipient === recipient &&
      this.lastTopicName === emptyTopicName
    ) {
      return this.lastShaped;
    }
    const events = shapeForClient(event, q.client, { emptyTopicName, recipient, queueId: q.id });
    // The sender's part names the queue that sent: only that queue echoes its local id.
    if ((event as { __local_echo?: unknown }).__local_echo === undefined) {
      this.lastEvent = event;
      this.lastClient = q.client;
      this.lastRecipient = recipient;
      this.lastTopicName = emptyTopicName;
      this.lastShaped = events;
    }
    return events;
  }
}

/** The recipients to skip of a delivery nobody listens to realm-wide. */
const NO_RECIPIENTS: ReadonlySet<number> = new Set();

/**
 * The queues listening realm-wide to a notice of a public channel, listed once its recipients
 * are reached. The recipients' set only when someone listens realm-wide: a thousand
 * recipients made a set of a thousand for every message to a public channel
 * (docs/performance.md, session 53).
 */
export function wideListeners(
  listening: ReadonlySet<Queue> | undefined,
  recipients: readonly number[],
): WideListeners {
  const listeners = [...(listening ?? [])];
  return {
    listeners,
    recipients: listeners.length === 0 ? NO_RECIPIENTS : new Set(recipients),
    next: 0,
  };
}

/** The person of a realm_user update with a user id: what queues act on themselves. */
function updatedPerson(
  event: ParleyEvent,
): { user_id: number; role?: unknown; is_active?: unknown } | null {
  if (event.type !== 'realm_user' || event.op !== 'update') return null;
  const person = (event as { person?: { user_id?: unknown } }).person;
  return typeof person?.user_id === 'number'
    ? (person as { user_id: number; role?: unknown; is_active?: unknown })
    : null;
}

/** The user and new role of a role change. */
export function changedRole(event: ParleyEvent): { userId: number; role: unknown } | null {
  const person = updatedPerson(event);
  return person?.role === undefined ? null : { userId: person.user_id, role: person.role };
}

export function deactivatedUserId(event: ParleyEvent): number | null {
  const person = updatedPerson(event);
  return person?.is_active === false ? person.user_id : null;
}
