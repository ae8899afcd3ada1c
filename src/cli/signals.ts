// Graceful stop on SIGTERM or SIGINT: stop accepting, finish requests in flight, save the
// event queues, close the database. A second signal, or a stop that overruns its deadline,
// forces the exit.
import type { Logger } from 'pino';

export const STOP_DEADLINE_MS = 10_000;

export interface StopControl {
  stop(): Promise<void>;
  /** Call handler on each stop signal; returns a function that stops listening. */
  onStopSignal(handler: (signal: string) => void): () => void;
  exit(code: number): void;
  log: Logger;
  deadlineMs?: number;
}

/** Resolves once a stop signal has stopped the server cleanly. */
export function untilStopped(control: StopControl): Promise<void> {
  const deadlineMs = control.deadlineMs ?? STOP_DEADLINE_MS;
  return new Promise((resolve, reject) => {
    let stopping = false;
    const off = control.onStopSignal((signal) => {
      if (stopping) {
        control.log.warn({ signal }, 'second stop signal: exiting without finishing');
        control.exit(1);
        return;
      }
      stopping = true;
      control.log.info({ signal }, 'stopping: finishing requests in flight');
      const deadline = setTimeout(() => {
        control.log.error({ deadlineMs }, 'stop did not finish in time: exiting');
        control.exit(1);
      }, deadlineMs);
      control.stop().then(
        () => {
          clearTimeout(deadline);
          off();
          resolve();
        },
        (err: unknown) => {
          clearTimeout(deadline);
          off();
          reject(err);
        },
      );
    });
  });
}
