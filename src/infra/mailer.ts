// Outgoing email behind a small interface. By default nothing leaves the machine: each
// message is appended as one JSON line to <dataDir>/mail.log, where an administrator can
// read invitation links. (SMTP delivery is not available yet.)
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
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
