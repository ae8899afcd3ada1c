// Keep-alive without a timer on any connection. A connection is closed once nothing has
// crossed it for the idle time, unless a whole request on it awaits its answer, as a parked
// long-poll does for up to the heartbeat interval without a byte either way.
//
// node:http's own keep-alive arms a timer object per answer (a fan-out to 10,000 parked
// polls made 10,000, copied by every scavenge until each client polled again;
// docs/performance-history.md, session 31), and a socket timeout (`server.setTimeout`),
// which replaced it in session 31, moves the socket's entry in the timer list on every read
// and every write. Here one sweep looks at every connection's byte counts a few times per
// idle time instead: a connection costs nothing while it talks, and closes between one and
// 1.25 idle times after its last byte (docs/performance.md, "What we changed", session 52).
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Sweeps per idle time: how far past it a quiet connection may stay open, in quarters. */
const SWEEPS_PER_IDLE = 4;
/** Connections a sweep looks at per macrotask. */
const SWEEP_CHUNK = 1000;

/** What a sweep last saw of one connection. */
class Traffic {
  constructor(
    /**
     * The connection, held weakly: its handle keeps it alive while open. A `close` listener
     * to forget it was a third on every socket, and growing that list of listeners from two
     * took 144 bytes a connection (docs/performance.md, figure 6, session 54).
     */
    readonly socket: WeakRef<Socket>,
    /** Bytes read and written, as the sweep last counted them. */
    public bytes: number,
    /** When that count last changed (performance.now, ms). */
    public sinceMs: number,
  ) {}
}

/**
 * node:http's link from a socket to the answer it is writing; internal, so
 * test/http/keep-alive.test.ts and test/http/idle-connections.test.ts hold waiting requests.
 */
type ServedSocket = Socket & { _httpMessage?: ServerResponse<IncomingMessage> | null };

export interface IdleSweep {
  /** Connections watched: every open one, and closed ones until a sweep passes them. */
  readonly watched: number;
}

/**
 * Close the server's connections once quiet for idleMs, with node:http's own keep-alive timer
 * turned off. The sweep stops when the server closes.
 */
export function closeIdleConnections(
  server: Server,
  idleMs: number,
  /** Connections a sweep looks at per macrotask; tests lower it. */
  chunk = SWEEP_CHUNK,
): IdleSweep {
  server.keepAliveTimeout = 0;
  const watched: Traffic[] = [];
  server.on('connection', (socket: Socket) => {
    watched.push(new Traffic(new WeakRef(socket), 0, performance.now()));
  });
  // A pass looks at `chunk` connections a macrotask: a look is 0.3-1 µs, and 19,000
  // connections at once held the loop for up to 20 ms. -1: no pass under way.
  let next = -1;
  const sweep = (): void => {
    if (next < 0) return;
    const now = performance.now();
    for (let n = 0; n < chunk; n++) {
      if (next >= watched.length) {
        next = -1;
        return;
      }
      const seen = watched[next];
      const socket = seen.socket.deref();
      if (socket === undefined || socket.destroyed) {
        // The last one takes its place, and is looked at next: it was not yet in this pass.
        const last = watched.pop() as Traffic;
        if (last !== seen) watched[next] = last;
        continue;
      }
      next++;
      const bytes = socket.bytesRead + socket.bytesWritten;
      if (bytes !== seen.bytes) {
        seen.bytes = bytes;
        seen.sinceMs = now;
      } else if (now - seen.sinceMs >= idleMs && !awaitsAnswer(socket as ServedSocket)) {
        socket.destroy();
      }
    }
    setImmediate(sweep);
  };
  const timer = setInterval(
    () => {
      if (next >= 0) return;
      next = 0;
      sweep();
    },
    Math.max(1, Math.floor(idleMs / SWEEPS_PER_IDLE)),
  ).unref();
  server.on('close', () => clearInterval(timer));
  return {
    get watched() {
      return watched.length;
    },
  };
}

/** A whole request on the socket is waiting for its answer (a parked poll, a slow handler). */
function awaitsAnswer(socket: ServedSocket): boolean {
  return socket._httpMessage?.req.complete === true;
}
