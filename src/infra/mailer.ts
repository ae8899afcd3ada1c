// Outgoing email behind a small interface. Without PARLEY_SMTP_HOST nothing leaves the
// machine: each message is appended as one JSON line to <dataDir>/mail.log, where an
// administrator can read invitation links. With it, smtpMailer hands messages to that
// server through nodemailer, in the background: the request that caused a message never
// waits for, or fails because of, the mail server; a failed delivery is logged instead.
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import type { SmtpConfig } from '../config.ts';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
  /** At shutdown: let queued messages go out, for a bounded time. */
  close?(): Promise<void>;
}

export function logFileMailer(path: string, now: () => number = Date.now): Mailer {
  return {
    async send(message) {
      await mkdir(dirname(path), { recursive: true });
      const line = JSON.stringify({ date: new Date(now()).toISOString(), ...message });
      await appendFile(path, `${line}\n`, 'utf8');
    },
  };
}

/** Keeps what was sent, for tests. */
export function memoryMailer(): Mailer & { sent: MailMessage[] } {
  const sent: MailMessage[] = [];
  return {
    sent,
    async send(message) {
      sent.push(structuredClone(message));
    },
  };
}

export interface SmtpTimeouts {
  /** To open the TCP (or TLS) connection. */
  connectionMs: number;
  /** From connecting to the server's 220 greeting. */
  greetingMs: number;
  /** Of silence in the middle of a conversation. */
  socketMs: number;
  /** That close() waits for queued messages before abandoning them. */
  closeMs: number;
}

/** A dead or stalled server costs each queued message at most these, never a request. */
const DEFAULT_TIMEOUTS: SmtpTimeouts = {
  connectionMs: 10_000,
  greetingMs: 10_000,
  socketMs: 30_000,
  // Within the 10 s a stop may take (src/cli/signals.ts), after the event queues are saved.
  closeMs: 5_000,
};
/** A server that is down for long must not let the queue grow without bound. */
const MAX_QUEUED = 1000;

export interface SmtpMailer extends Mailer {
  /** Resolves once every message queued so far has been delivered or logged as failed. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Delivers one message at a time over a fresh connection (invitations are rare, and an
 * idle pooled connection would only be dropped by the server). STARTTLS is required, not
 * opportunistic, so a man in the middle cannot strip it and read the password.
 */
export function smtpMailer(
  config: SmtpConfig,
  log: Logger,
  timeouts: Partial<SmtpTimeouts> = {},
): SmtpMailer {
  const limits = { ...DEFAULT_TIMEOUTS, ...timeouts };
  const transport = nodemailer.createTransport({
    host: config.host,
    port: config.port,
    secure: config.security === 'tls',
    requireTLS: config.security === 'starttls',
    ignoreTLS: config.security === 'none',
    auth: config.auth ? { user: config.auth.user, pass: config.auth.password } : undefined,
    connectionTimeout: limits.connectionMs,
    greetingTimeout: limits.greetingMs,
    socketTimeout: limits.socketMs,
    logger: false,
  });
  const from = config.from.name
    ? { name: config.from.name, address: config.from.address }
    : config.from.address;
  let tail: Promise<void> = Promise.resolve();
  let queued = 0;
  let closing = false;
  let dropping = false;
  // Cuts a delivery still in flight when close() stops waiting, so no socket outlives it.
  const abandon = new AbortController();

  // Neither the body (it holds invitation keys) nor the password is logged.
  const fail = (message: MailMessage, reason: Record<string, unknown>): void => {
    log.error({ mail: { to: message.to, ...reason } }, 'could not send email');
  };

  async function deliver(message: MailMessage): Promise<void> {
    if (dropping) return fail(message, { error: 'the server stopped before it was sent' });
    try {
      const info = await transport.sendMail({
        from,
        to: message.to,
        subject: message.subject,
        text: message.text,
        signal: abandon.signal,
      });
      log.debug({ mail: { to: message.to, messageId: info.messageId } }, 'sent email');
    } catch (err) {
      fail(message, describeSmtpError(err));
    }
  }

  return {
    async send(message) {
      if (closing) return fail(message, { error: 'the server is stopping' });
      if (queued >= MAX_QUEUED) {
        return fail(message, { error: `${MAX_QUEUED} messages are already waiting` });
      }
      queued += 1;
      const copy = structuredClone(message);
      tail = tail
        .then(() => deliver(copy))
        .finally(() => {
          queued -= 1;
        });
    },
    idle: () => tail,
    async close() {
      closing = true;
      let timer: NodeJS.Timeout | undefined;
      const expired = new Promise<void>((done) => {
        timer = setTimeout(done, limits.closeMs);
      });
      await Promise.race([tail, expired]);
      clearTimeout(timer);
      dropping = true;
      abandon.abort();
      transport.close();
    },
  };
}

/** What nodemailer says went wrong: its code, the SMTP reply and the command it answered. */
function describeSmtpError(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { error: String(err) };
  const e = err as Error & { code?: unknown; responseCode?: unknown; command?: unknown };
  return {
    error: e.message,
    ...(e.code !== undefined && { code: e.code }),
    ...(e.responseCode !== undefined && { responseCode: e.responseCode }),
    ...(e.command !== undefined && { command: e.command }),
  };
}
