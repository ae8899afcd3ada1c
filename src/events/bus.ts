// The bus carries committed notices to every process that holds event queues.
// Local: the one process delivers directly. Redis: every process publishes to a channel
// and delivers what it receives to the queues it holds.
import { Redis } from 'ioredis';
import type { Notice } from './types.ts';

export type NoticeHandler = (notices: Notice[]) => void;

export interface EventBus {
  publish(notices: Notice[]): Promise<void>;
  subscribe(handler: NoticeHandler): void;
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

  async close(): Promise<void> {
    this.handlers = [];
  }
}

export class RedisBus implements EventBus {
  private readonly pub: Redis;
  private readonly sub: Redis;
  private handlers: NoticeHandler[] = [];
  private ready: Promise<void>;

  constructor(
    url: string,
    private readonly channel = 'parley:events',
  ) {
    const opts = { lazyConnect: true, maxRetriesPerRequest: 3 };
    this.pub = new Redis(url, opts);
    this.sub = new Redis(url, opts);
    this.sub.on('message', (_channel: string, payload: string) => {
      let notices: Notice[];
      try {
        notices = JSON.parse(payload) as Notice[];
      } catch {
        return;
      }
      for (const h of this.handlers) h(notices);
    });
    this.ready = Promise.all([this.pub.connect(), this.sub.connect()]).then(() =>
      this.sub.subscribe(this.channel).then(() => undefined),
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

  async close(): Promise<void> {
    this.handlers = [];
    this.pub.disconnect();
    this.sub.disconnect();
  }
}
