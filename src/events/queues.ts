// Per-client event queues, held in memory by the process that registered them (queue
// ids name it: "<nodeId>:<random>"). Notices arrive from the bus after commit; each is
// offered to the queues of its recipients (an index by user keeps that O(recipients)),
// shaped for each client (delivery.ts), and appended with the queue's next event id. A queue
// holds at most one parked GET /events; parked polls are answered in slices
// (answer-slices.ts) and notices offered in chunks, so that one event for thousands of
// clients never stalls the process.
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Clock } from '../infra/clock.ts';
import type { Random } from '../infra/random.ts';
import { JsonableError } from '../lib/errors.ts';
import { ROLE } from '../lib/roles.ts';
import type { Q } from '../store/db.ts';
import { eventSeqsOf } from '../store/realms.ts';
import {
  emptyTopicDisplayName,
  isRealmWideListener,
  type ClientDescriptor,
} from '../lib/event-client.ts';
import { AnswerSlices } from './answer-slices.ts';
import { changedRole, deactivatedUserId, Delivery, wideListeners } from './delivery.ts';
import { markShared } from './event-json.ts';
import { evenPhases, HeartbeatWheel } from './heartbeats.ts';
import {
  indexAdd,
  indexDelete,
  ParkedPoll,
  Queue,
  type EventsReply,
  type PollSink,
  type QueuedEvent,
} from './queue.ts';
import {
  readSavedQueues,
  restartEvent,
  writeSavedQueues,
  type SavedQueue,
} from './saved-queues.ts';
import { RealmSequences } from './realm-sequences.ts';
import { acceptsType } from './shaping.ts';
import type { Notice, ParleyEvent } from './types.ts';

export type { EventsReply, NumberedEvent, PollSink } from './queue.ts';
export { ParkedPoll } from './queue.ts';

export type QueueConfig = Pick<
  Config,
  | 'heartbeatMinMs'
  | 'heartbeatJitterMs'
  | 'queueIdleTimeoutSecs'
  | 'queueGcIntervalMs'
  | 'eventGapWaitMs'
  | 'eventSeqCheckMs'
  | 'maxEventsPerQueue'
  | 'nodeId'
>;

export interface QueueEnv {
  config: QueueConfig;
  clock: Clock;
  random: Random;
  log: Logger;
  /** The database, to check at restore that no change was committed while queues were saved. */
  db?: Q;
  /** Each new queue's heartbeat phase in the period (ms); evenPhases unless a test sets it. */
  heartbeatPhase?: (periodMs: number) => number;
  /** A monotonic clock (ms) timing each macrotask of answers; performance.now unless set. */
  sliceClock?: () => number;
}

/**
 * Queues offered events per macrotask when one notice goes to thousands of them: 1-2 ms of
 * work, and a fan-out to a thousand is offered at once, so it can be answered whole.
 */
const DELIVERY_CHUNK = 2_000;

export function badEventQueueId(queueId: string): JsonableError {
  return new JsonableError(`Bad event queue ID: ${queueId}`, 'BAD_EVENT_QUEUE_ID', 400, {
    queue_id: queueId,
  });
}

export class EventQueues {
  private readonly queues = new Map<string, Queue>();
  private readonly byUser = new Map<number, Set<Queue>>();
  private readonly realmWide = new Map<number, Set<Queue>>();
  /** Identical client descriptors are shared, so an idle queue stays small. */
  private readonly clients = new Map<string, ClientDescriptor>();
  /** Each realm's empty-topic display name, with the sequence it is current at. */
  private readonly topicNames = new Map<number, { name: string; seq: number }>();
  /** Parked polls with events, answered in bounded macrotasks. */
  private readonly ready: AnswerSlices<Queue>;
  /** Notices not yet offered to every queue, oldest first; order is kept across chunks. */
  private readonly deliveries: Delivery[] = [];
  private deliveryScheduled = false;
  /** Parked polls by the wheel slot of their heartbeat; one timer serves them all. */
  private readonly heartbeats: HeartbeatWheel<Queue>;
  private readonly nextPhase: (periodMs: number) => number;
  /** Which of each realm's commit sequence numbers came: a lost notice drops queues. */
  private readonly sequences: RealmSequences;
  private gcTimer: NodeJS.Timeout | null = null;
  /** Compares the database's commit sequences with the notices seen (expectCommitted). */
  private seqTimer: NodeJS.Timeout | null = null;
  private seqCheck: Promise<void> | null = null;
  private closing = false;

  constructor(private readonly env: QueueEnv) {
    this.nextPhase = env.heartbeatPhase ?? evenPhases(env.random.int(1_000_000) / 1_000_000);
    this.ready = new AnswerSlices(
      (q) => {
        // A poll parked after the events were taken by an earlier one waits for new events.
        if (q.events.length === 0) return false;
        this.answer(q);
        return true;
      },
      () => this.deliveries.length > 0,
      // node:perf_hooks' own: the global is an accessor, read at every answer of a fan-out.
      env.sliceClock ?? (() => performance.now()),
    );
    this.sequences = new RealmSequences(env.config.eventGapWaitMs, (realmId, lastMissing) =>
      this.dropMissing(realmId, lastMissing),
    );
    this.heartbeats = new HeartbeatWheel(
      env.config,
      () => this.now(),
      (due) => {
        // Each is parked at the slot's tick; answer() then removes it from a fired slot harmlessly.
        for (const q of due) if (q.waiter) this.push(q, HEARTBEAT);
      },
      (q) => q.waiter?.heartbeatTick,
    );
  }

  get size(): number {
    return this.queues.size;
  }

  /** Create a queue; with awaitSnapshot, it keeps notices aside until setSnapshot. */
  create(
    owner: { userId: number; realmId: number; readsPublicChannels: boolean },
    client: ClientDescriptor,
    opts: { awaitSnapshot: boolean; emptyTopicDisplayName: unknown },
  ): string {
    const id = `${this.env.config.nodeId}:${this.env.random.id(12)}`;
    // Only a fallback: any value known at a commit sequence wins over it.
    this.noteTopicName(owner.realmId, -1, opts.emptyTopicDisplayName);
    this.add(
      new Queue(
        id,
        owner.userId,
        owner.realmId,
        this.intern(client),
        this.now(),
        opts.awaitSnapshot ? undefined : null,
        owner.readsPublicChannels,
      ),
    );
    return id;
  }

  /**
   * The client's snapshot reflects every notice of the realm up to seq: drop those already
   * queued and any that arrive later. 'gone' when the queue is gone meanwhile; 'missed' when
   * the queue could lack a notice after seq (RealmSequences.missed), and still waits for a
   * newer snapshot.
   */
  setSnapshot(
    queueId: string,
    seq: number,
    realm: { emptyTopicDisplayName: unknown },
  ): 'set' | 'gone' | 'missed' {
    const q = this.queues.get(queueId);
    if (!q) return 'gone';
    if (this.sequences.missed(q.realmId, seq)) return 'missed';
    q.snapshotSeq = seq;
    this.sequences.start(q.realmId, seq);
    q.keepAfter(seq);
    this.noteTopicName(q.realmId, seq, realm.emptyTopicDisplayName);
    return 'set';
  }

  /**
   * Notices may have been lost in a way no later notice would show (every eventSeqCheckMs,
   * and after the bus was disconnected): every change the database holds now must reach this
   * process within the wait, or the queues it would miss are dropped. One read at a time; one
   * already running leaves the rest to the next. Shutdown waits for it.
   */
  checkCommitted(): void {
    if (this.seqCheck || this.queues.size === 0 || this.closing) return;
    this.seqCheck = this.expectCommitted()
      .catch((err: unknown) => {
        if (!this.closing) this.env.log.warn({ err }, 'could not read the commit sequences');
      })
      .finally(() => (this.seqCheck = null));
  }

  private async expectCommitted(): Promise<void> {
    const db = this.env.db;
    if (!db) return;
    const held = new Set<number>();
    for (const q of this.queues.values()) held.add(q.realmId);
    if (held.size === 0) return;
    const committed = await eventSeqsOf(db, [...held]);
    if (this.closing) return;
    for (const [realmId, seq] of committed) this.sequences.expect(realmId, seq);
  }

  /** These notices were committed but their publication failed: they may never come. */
  expectNotices(notices: readonly Notice[]): void {
    for (const n of notices) {
      if (n.realmId !== undefined && n.seq !== undefined) this.sequences.expect(n.realmId, n.seq);
    }
  }

  /**
   * GET /events: acknowledge, then answer now, or park the poll and answer it later through
   * sink. Throws for unknown or foreign queues.
   */
  poll(
    queueId: string,
    userId: number,
    opts: { lastEventId?: number; dontBlock: boolean; newQueue?: boolean },
    sink: PollSink,
  ): EventsReply | ParkedPoll {
    const q = this.own(queueId, userId);
    if (opts.lastEventId !== undefined) q.acknowledge(opts.lastEventId);
    // One parked request per queue: the earlier one returns what is queued.
    if (q.waiter) this.answer(q);
    if (q.events.length > 0 || opts.dontBlock || this.closing) {
      q.lastTouchMs = this.now();
      return this.reply(q, opts.newQueue === true);
    }
    // A parked poll keeps its queue from expiring, and every way out of parking (answer,
    // cancel) touches the queue: reading the clock here too was a call into V8's runtime
    // in every poll (docs/performance.md, figure 5, session 55).
    return this.park(q, sink);
  }

  /** A parked poll's client went away: answer it with no events, if it is still parked. */
  cancel(parked: ParkedPoll): void {
    const q = this.queues.get(parked.queueId);
    if (!q || q.waiter !== parked) return;
    this.unpark(q, parked);
    q.lastTouchMs = this.now();
    parked.sink.answer({ events: [] });
  }

  /** DELETE /events. */
  delete(queueId: string, userId: number): void {
    this.remove(this.own(queueId, userId), 'deleted');
  }

  /** Drop a queue whose registration failed. */
  discard(queueId: string): void {
    const q = this.queues.get(queueId);
    if (q) this.remove(q, 'deleted');
  }

  /**
   * Offer notices to their recipients' queues, in order. A notice for up to DELIVERY_CHUNK
   * queues is delivered before this returns; a larger one (or any arriving behind it) continues in
   * later macrotasks, DELIVERY_CHUNK queues at a time, so one fan-out never stalls the
   * process. Register consistency holds across chunks: a queue's snapshot sequence filters
   * notices whenever they reach it.
   */
  deliver(notices: Notice[]): void {
    for (const notice of notices) {
      this.deliveries.push(new Delivery(notice));
    }
    if (!this.deliveryScheduled) this.deliverSome(DELIVERY_CHUNK);
  }

  private deliverSome(budget: number): void {
    while (this.deliveries.length > 0 && budget > 0) {
      const d = this.deliveries[0];
      budget = this.deliverPart(d, budget);
      if (budget < 0) break;
      this.deliveries.shift();
    }
    if (this.deliveries.length > 0 && !this.deliveryScheduled) {
      this.deliveryScheduled = true;
      setImmediate(() => {
        this.deliveryScheduled = false;
        this.deliverSome(DELIVERY_CHUNK);
      });
    }
  }

  /** Returns the budget left, or -1 when the notice still has queues to reach. */
  private deliverPart(d: Delivery, budget: number): number {
    const { notice } = d;
    if (!d.started) this.observe(notice);
    d.started = true;
    const users = notice.users;
    while (d.next < users.length) {
      if (budget <= 0) return -1;
      const userId = users[d.next++];
      const queues = this.byUser.get(userId);
      if (!queues) continue;
      for (const q of queues) this.offer(q, d, userId, true);
      budget -= queues.size;
    }
    const realmWide = notice.realmWide;
    if (realmWide?.publicChannel) {
      const wide = (d.wide ??= wideListeners(this.realmWide.get(realmWide.realmId), users));
      while (wide.next < wide.listeners.length) {
        if (budget <= 0) return -1;
        const q = wide.listeners[wide.next++];
        // A queue gone since the listeners were listed gets nothing.
        if (this.queues.get(q.id) !== q || wide.recipients.has(q.userId)) continue;
        this.offer(q, d, q.userId, false);
        budget--;
      }
    }
    // A deactivated user's queues go, in every process, once they hold the news.
    const gone = deactivatedUserId(notice.event);
    if (gone !== null) this.dropUserQueues(gone);
    // A user made a guest hears no more of public channels they are not in, nor do their
    // narrowed queues; made a member again, they do.
    const changed = changedRole(notice.event);
    if (changed) {
      for (const q of this.byUser.get(changed.userId) ?? []) {
        this.setReadsPublicChannels(q, changed.role !== ROLE.guest);
      }
    }
    return Math.max(budget, 0);
  }

  /**
   * Register read its snapshot with the user a guest: the queue, made with the role
   * authentication read, hears of no public channel they are not in. Only ever narrows, so
   * that a role change it heard of after that snapshot keeps its say.
   */
  limitToOwnChannels(queueId: string): void {
    const q = this.queues.get(queueId);
    if (q) this.setReadsPublicChannels(q, false);
  }

  private setReadsPublicChannels(q: Queue, reads: boolean): void {
    q.readsPublicChannels = reads;
    if (reads && isRealmWideListener(q.client)) indexAdd(this.realmWide, q.realmId, q);
    else indexDelete(this.realmWide, q.realmId, q);
  }

  /** Drop every queue of a user (deactivation, revoked credentials). */
  dropUserQueues(userId: number): void {
    for (const q of [...(this.byUser.get(userId) ?? [])]) this.remove(q, 'dropped');
  }

  /**
   * Answer parked polls and stop timers (graceful shutdown). Queues and their events stay
   * for saveTo; later polls are answered at once instead of parking.
   */
  async shutdown(): Promise<void> {
    this.closing = true;
    this.deliverSome(Infinity);
    if (this.gcTimer) clearInterval(this.gcTimer);
    this.gcTimer = null;
    if (this.seqTimer) clearInterval(this.seqTimer);
    this.seqTimer = null;
    // Its read must end before the store closes.
    await this.seqCheck;
    for (const q of this.queues.values()) this.answer(q);
    this.heartbeats.stop();
    this.sequences.stop();
  }

  /** Write every queue with its pending events to a file (SIGTERM). */
  async saveTo(file: string): Promise<void> {
    // What the bus brought is part of the queues (and of the sequence they have seen).
    this.deliverSome(Infinity);
    const queues: Array<SavedQueue<QueuedEvent>> = [];
    for (const q of this.queues.values()) {
      const s = q.saved();
      if (s) queues.push(s);
    }
    const topicNames = [...this.topicNames].map(([realmId, t]) => ({ realm_id: realmId, ...t }));
    // Up to the first number still missing: the next process drops the queues that miss it.
    const seen = this.sequences.seen().map(([realmId, seq]) => ({ realm_id: realmId, seq }));
    await writeSavedQueues(file, { queues, topic_names: topicNames, seen_seq: seen });
  }

  /**
   * Load queues saved by saveTo, then push a restart event to each. Returns how many.
   * A realm with changes committed after its last notice this process saw (while it was
   * stopped, or by a command-line action) has its queues dropped: they would miss those
   * events, and a client whose queue is gone registers again.
   */
  async restoreFrom(file: string): Promise<number> {
    const saved = await readSavedQueues<QueuedEvent>(file);
    for (const t of saved.topic_names ?? []) this.noteTopicName(t.realm_id, t.seq, t.name);
    const savedSeen = new Map((saved.seen_seq ?? []).map((t) => [t.realm_id, t.seq]));
    const realmIds = [...new Set(saved.queues.map((s) => s.realm_id))];
    // Without a database (unit tests) what the saving process saw counts as current.
    const committed = this.env.db ? await eventSeqsOf(this.env.db, realmIds) : savedSeen;
    const current = new Set<number>();
    for (const realmId of realmIds) {
      // What the saving process had seen, not what this one has seen since it started.
      const seen = savedSeen.get(realmId);
      // A realm without a row has committed no evented change yet.
      const now = committed.get(realmId) ?? 0;
      if (seen !== undefined && now === seen) {
        current.add(realmId);
        this.sequences.start(realmId, seen);
      } else {
        this.env.log.warn({ realmId, seen, now }, 'event queues not restored: they missed changes');
      }
    }
    const restart = restartEvent();
    const now = this.now();
    let restored = 0;
    for (const s of saved.queues) {
      if (!current.has(s.realm_id)) continue;
      restored++;
      const q = Queue.restored(s, this.intern(s.client), now);
      this.add(q);
      if (acceptsType('restart', q.client)) this.push(q, restart);
    }
    return restored;
  }

  /** A queue's state, for tests and diagnostics. */
  inspect(
    queueId: string,
  ): { userId: number; pending: number[]; parked: boolean; prunedId: number } | undefined {
    const q = this.queues.get(queueId);
    if (!q) return undefined;
    return {
      userId: q.userId,
      pending: q.events.map((e) => e.id),
      parked: q.waiter !== null,
      prunedId: q.prunedId,
    };
  }

  private now(): number {
    return this.env.clock.nowMs();
  }

  private intern(client: ClientDescriptor): ClientDescriptor {
    const key = JSON.stringify(client);
    const known = this.clients.get(key);
    if (known) return known;
    this.clients.set(key, client);
    return client;
  }

  private add(q: Queue): void {
    q.heartbeatPhase = this.nextPhase(this.heartbeats.periodMs);
    this.queues.set(q.id, q);
    indexAdd(this.byUser, q.userId, q);
    if (q.readsPublicChannels && isRealmWideListener(q.client)) {
      indexAdd(this.realmWide, q.realmId, q);
    }
    if (!this.gcTimer && !this.closing) {
      this.gcTimer = setInterval(() => this.sweep(), this.env.config.queueGcIntervalMs);
      this.gcTimer.unref();
    }
    if (!this.seqTimer && !this.closing && this.env.db) {
      this.seqTimer = setInterval(() => this.checkCommitted(), this.env.config.eventSeqCheckMs);
      this.seqTimer.unref();
    }
  }

  /**
   * Notices of realmId up to lastMissing never came: the queues whose snapshot is older missed
   * changes, and their clients must register again (a parked poll is told at once).
   */
  private dropMissing(realmId: number, lastMissing: number): void {
    const behind = [...this.queues.values()].filter(
      (q) =>
        q.realmId === realmId && q.snapshotSeq !== undefined && (q.snapshotSeq ?? -1) < lastMissing,
    );
    if (behind.length === 0) return;
    this.env.log.warn(
      { realmId, lastMissing, queues: behind.length },
      'event queues dropped: a committed change of their organization never reached this process',
    );
    for (const q of behind) this.remove(q, 'missed');
  }

  private remove(
    q: Queue,
    reason: 'deleted' | 'dropped' | 'expired' | 'overflow' | 'missed',
  ): void {
    if (this.queues.get(q.id) !== q) return;
    this.queues.delete(q.id);
    indexDelete(this.byUser, q.userId, q);
    indexDelete(this.realmWide, q.realmId, q);
    this.ready.delete(q);
    const waiter = q.waiter;
    if (waiter && (reason === 'overflow' || reason === 'missed')) {
      this.unpark(q, waiter);
      waiter.sink.fail(badEventQueueId(q.id));
    } else {
      this.answer(q);
    }
    if (reason === 'overflow' || reason === 'expired') {
      this.env.log.info({ queueId: q.id, userId: q.userId, reason }, 'event queue dropped');
    }
  }

  private own(queueId: string, userId: number): Queue {
    const q = this.queues.get(queueId);
    if (!q || q.userId !== userId) throw badEventQueueId(queueId);
    return q;
  }

  /** Per-realm state shaping needs, kept current from the notices themselves. */
  private observe(notice: Notice): void {
    if (notice.realmId !== undefined && notice.seq !== undefined) {
      this.sequences.note(notice.realmId, notice.seq);
    }
    const e = notice.event as { type: string; op?: string; property?: unknown; value?: unknown };
    if (
      e.type === 'realm' &&
      e.op === 'update' &&
      e.property === 'empty_topic_display_name' &&
      notice.realmId !== undefined
    ) {
      this.noteTopicName(notice.realmId, notice.seq ?? Number.MAX_SAFE_INTEGER, e.value);
    }
  }

  private noteTopicName(realmId: number, seq: number, setting: unknown): void {
    const current = this.topicNames.get(realmId);
    if (current && current.seq >= seq) return;
    this.topicNames.set(realmId, { name: emptyTopicDisplayName(setting), seq });
  }

  private offer(q: Queue, d: Delivery, userId: number, recipient: boolean): void {
    const notice = d.notice;
    const sameRealm = notice.seq !== undefined && notice.realmId === q.realmId;
    if (sameRealm && typeof q.snapshotSeq === 'number' && notice.seq! <= q.snapshotSeq) return;
    const seq = sameRealm && q.snapshotSeq === undefined ? notice.seq : undefined;
    const emptyTopicName = this.topicNames.get(q.realmId)?.name ?? emptyTopicDisplayName('');
    for (const e of d.shapeFor(d.eventFor(userId), q, recipient, emptyTopicName)) {
      if (!this.push(q, e, seq)) return;
    }
  }

  /** Append an event; a queue over its cap is dropped, so its client registers again. */
  private push(q: Queue, event: ParleyEvent, seq?: number): boolean {
    if (q.events.length >= this.env.config.maxEventsPerQueue) {
      this.remove(q, 'overflow');
      return false;
    }
    q.append(event, seq);
    if (q.waiter) this.ready.add(q);
    return true;
  }

  private park(q: Queue, sink: PollSink): ParkedPoll {
    const parked = new ParkedPoll(this, q.id, sink, this.heartbeats.add(q, q.heartbeatPhase));
    q.waiter = parked;
    return parked;
  }

  private unpark(q: Queue, waiter: ParkedPoll): void {
    this.heartbeats.remove(waiter.heartbeatTick);
    q.waiter = null;
  }

  /**
   * Answer the queue's parked poll with its events. The queue may stay among the ready ones
   * (answered by a newer poll or a removal): their flush skips a queue without events, and
   * leaving it there keeps the flush from shrinking the set one poll at a time.
   */
  private answer(q: Queue): void {
    const waiter = q.waiter;
    if (!waiter) return;
    this.unpark(q, waiter);
    q.lastTouchMs = this.now();
    const reply = this.reply(q, true);
    // The id's JSON, which the queue keeps for its parked polls' answers.
    reply.queueIdJson = q.idJson;
    waiter.sink.answer(reply);
  }

  private reply(q: Queue, withQueueId: boolean): EventsReply {
    // A copy of the list only: the queue prunes its own as the client acknowledges.
    const events = q.events.slice();
    return withQueueId ? { events, queue_id: q.id } : { events };
  }

  /** Expire queues idle for their timeout; a parked poll keeps its queue alive. */
  private sweep(): void {
    const now = this.now();
    for (const q of [...this.queues.values()]) {
      if (!q.waiter && now - q.lastTouchMs >= q.client.idleTimeoutSecs * 1000) {
        this.remove(q, 'expired');
      }
    }
  }
}

/** Every heartbeat is this one event, written once (events/event-json.ts). */
const HEARTBEAT: ParleyEvent = Object.freeze({ type: 'heartbeat' }) as ParleyEvent;
markShared(HEARTBEAT);
