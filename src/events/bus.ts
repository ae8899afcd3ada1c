// The bus carries committed notices to every process that holds event queues.
// Local: the one process delivers directly. Redis: every process publishes to a channel
// and delivers what it receives to the queues it holds.
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Notice } from './types.ts';

export type NoticeHandler = (notices: Notice[]) => void;

export interface EventBus {
  publish(notices: Notice[]): Promise<void>;
  subscribe(handler: NoticeHandler): void;
  /**
   * Called each time the bus delivers again after a break: what was published meanwhile
   * never arrives.
   */
  onResumed(handler: () => void): void;
  close(): Promise<void>;
}

export class LocalBus implements EventBus {
  private handlers: NoticeHandler[] = [];

  async publish(notices: Notice[]): Promise<void> {
    for (const h of this.handlers) h(notices);
  }

  subscribe(handler: NoticeHandler): void {
    this.handlers.push(handler);
  }

  /** A process's own bus never breaks. */
  onResumed(): void {}

  async close(): Promise<void> {
    this.handlers = [];
  }
}

export class RedisBus implements EventBus {
  private readonly pub: Redis;
  private readonly sub: Redis;
  private handlers: NoticeHandler[] = [];
  private resumedHandlers: Array<() => void> = [];
  private ready: Promise<void>;
  /** The subscriber lost its connection and has not subscribed again yet. */
  private broken = false;
  private closing = false;

  constructor(
    url: string,
    private readonly channel = 'parley:events',
    private readonly log?: Logger,
  ) {
    const opts = { lazyConnect: true, maxRetriesPerRequest: 3 };
    // Named so that CLIENT LIST tells which connections are Parley's, and of which channel.
    this.pub = new Redis(url, { ...opts, connectionName: `parley-pub:${channel}` });
    // Subscribed again by hand after a reconnect, to know when messages flow again.
    this.sub = new Redis(url, {
      ...opts,
      connectionName: `parley-sub:${channel}`,
      autoResubscribe: false,
    });
    this.sub.on('message', (_channel: string, payload: string) => {
      let notices: Notice[];
      try {
        notices = JSON.parse(payload) as Notice[];
      } catch {
        return;
      }
      for (const h of this.handlers) h(notices);
    });
    // Without listeners ioredis prints every failed reconnect to stderr; publish's caller
    // logs its own failures.
    this.pub.on('error', () => {});
    this.sub.on('error', (err: Error) => this.noteBroken(err));
    this.sub.on('close', () => this.noteBroken(null));
    this.ready = Promise.all([this.pub.connect(), this.sub.connect()]).then(() =>
      this.sub.subscribe(this.channel).then(() => {
        this.sub.on('ready', () => this.resubscribe());
      }),
    );
  }

  /** Resolves once both connections are up and subscribed; rejects if Redis is unreachable. */
  whenReady(): Promise<void> {
    return this.ready;
  }

  async publish(notices: Notice[]): Promise<void> {
    await this.ready;
    await this.pub.publish(this.channel, JSON.stringify(notices));
  }

  subscribe(handler: NoticeHandler): void {
    this.handlers.push(handler);
  }

  onResumed(handler: () => void): void {
    this.resumedHandlers.push(handler);
  }

  async close(): Promise<void> {
    this.closing = true;
    this.handlers = [];
    this.resumedHandlers = [];
    this.pub.disconnect();
    this.sub.disconnect();
  }

  private noteBroken(err: Error | null): void {
    if (this.broken || this.closing) return;
    this.broken = true;
    this.log?.warn(err ? { err } : {}, 'event bus: lost the Redis connection; reconnecting');
  }

  /** A failed subscribe leaves the connection to break again, and the next ready retries. */
  private resubscribe(): void {
    this.sub.subscribe(this.channel).then(
      () => {
        this.broken = false;
        this.log?.info('event bus: subscribed again after a break');
        for (const h of this.resumedHandlers) h();
      },
      () => {},
    );
  }
}
