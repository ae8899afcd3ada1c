// Figure 2, send throughput: POST /messages to a channel of 10 subscribers against
// F = 1/(1/R_http + 1/R_sqlite), the raw node:http rate for the same request combined with
// the raw better-sqlite3 rate for the same rows. Afterwards the rows must match the sends.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { keepForLife } from '../src/store/sqlite-lifetime.ts';
import {
  authOf,
  describeWindow,
  load,
  messageContent,
  seedAndStart,
  type BenchOptions,
  type FigureResult,
  type Parley,
} from './lib/common.ts';
import { watchCpu } from './lib/proc.ts';
import { runScript, startFloor, type Server } from './lib/servers.ts';
import { round, pairedValue, type Pair } from './lib/stats.ts';

/** The form body of the n-th send (distinct content, ~200 bytes). */
export function sendBody(channelId: number): (n: number) => string {
  const run = Date.now().toString(36);
  return (n) =>
    `type=stream&to=${channelId}&topic=bench&content=${encodeURIComponent(messageContent(n))}+${run}`;
}

export function sendLoad(server: Server, parley: Parley, connections: number, duration: number) {
  return load(server, {
    path: '/api/v1/messages',
    method: 'POST',
    headers: {
      authorization: authOf(parley.seeded.users[0]),
      'content-type': 'application/x-www-form-urlencoded',
    },
    bodyFor: sendBody(parley.seeded.channels[0].id),
    connections,
    duration,
  });
}

/** Raw SQLite transactions per second on a copy of the server's database. */
export async function sqliteFloor(parley: Parley, synchronous: string, seconds: number) {
  const close = watchCpu({ bench: process.pid });
  const out = await runScript(
    'bench/lib/sqlite-floor.ts',
    [
      join(parley.dataDir, 'parley.sqlite3'),
      join(parley.dataDir, `floor-copy-${Date.now()}.sqlite3`),
      String(parley.seeded.channels[0].id),
      String(parley.seeded.users[0].id),
      synchronous,
      String(seconds),
    ],
    {},
    60_000,
  );
  const r = JSON.parse(out) as { tx: number; seconds: number; cpuSeconds: number };
  const window = close({ floor: r.cpuSeconds });
  return { rate: r.tx / r.seconds, window };
}

/** Messages and per-user rows the bench sent to its channel. */
export function countRows(parley: Parley): { messages: number; userMessages: number } {
  const db = keepForLife(new Database(join(parley.dataDir, 'parley.sqlite3'), { readonly: true }));
  try {
    const channelId = parley.seeded.channels[0].id;
    // One read transaction: the server may still be committing sends that were in flight,
    // and two separate reads would count a different set of messages each.
    const read = db.transaction(() => {
      const messages = keepForLife(
        db.prepare("SELECT count(*) AS n FROM messages WHERE channel_id = ? AND topic = 'bench'"),
      ).get(channelId) as { n: number };
      const userMessages = keepForLife(
        db.prepare(
          "SELECT count(*) AS n FROM user_messages um JOIN messages m ON m.id = um.message_id WHERE m.channel_id = ? AND m.topic = 'bench'",
        ),
      ).get(channelId) as { n: number };
      return { messages, userMessages };
    });
    const { messages, userMessages } = read();
    return { messages: messages.n, userMessages: userMessages.n };
  } finally {
    db.close();
  }
}

export async function figure2(opts: BenchOptions): Promise<FigureResult> {
  const parley = await seedAndStart('fig2', {
    users: 10,
    channels: [{ name: 'bench', subscribers: 'all' }],
  });
  const floor = await startFloor('fig2-floor', {});
  const notes: string[] = [];
  try {
    const auth = authOf(parley.seeded.users[0]);
    floor.send({ op: 'set', auth });
    const duration = opts.quick ? 2 : 3;
    let sent = 0;
    let parleyRuns = 0;
    const runParley = async (d: number) => {
      const r = await sendLoad(parley.server, parley, 10, d);
      sent += r.result['2xx'];
      parleyRuns++;
      return r;
    };
    const runHttp = (d: number) =>
      load(floor, {
        path: '/api/v1/messages',
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
        bodyFor: sendBody(parley.seeded.channels[0].id),
        connections: 10,
        duration: d,
      });
    await runHttp(1);
    await runParley(1);
    const pairs: Pair[] = [];
    const runs: Record<string, unknown>[] = [];
    for (let i = 0; i < opts.rounds; i++) {
      const h = await runHttp(duration);
      const s = await sqliteFloor(parley, 'NORMAL', duration);
      const q0 = (await parley.server.probe('stats')).sqliteStatements;
      const p = await runParley(duration);
      const q1 = (await parley.server.probe('stats')).sqliteStatements;
      const f = 1 / (1 / h.rate + 1 / s.rate);
      const disturbed = h.window.disturbed || s.window.disturbed || p.window.disturbed;
      pairs.push({ ratio: p.rate / f, disturbed });
      runs.push({
        httpRate: round(h.rate, 0),
        sqliteRate: round(s.rate, 0),
        floorF: round(f, 0),
        parleyRate: round(p.rate, 0),
        parleyCpuPerSendUs: round((p.window.cpu.server / p.result['2xx']) * 1e6, 0),
        sqlPerSend: round((q1 - q0) / Math.max(1, p.result.requests.total), 1),
        parleyErrors: p.result.errors + p.result.non2xx,
        http: describeWindow(h.window),
        sqlite: describeWindow(s.window),
        parley: describeWindow(p.window),
      });
    }
    const rows = countRows(parley);
    // A run ends with up to one request per connection in flight, which the server may
    // still commit after autocannon stopped counting.
    const rowsOk =
      rows.messages >= sent &&
      rows.messages <= sent + 10 * parleyRuns &&
      rows.userMessages === rows.messages * 10;
    notes.push(
      `rows: ${rows.messages} messages / ${rows.userMessages} per-user rows for ${sent} answered sends + <= ${10 * parleyRuns} in flight at run ends (${rowsOk ? 'match' : 'MISMATCH'})`,
    );
    return {
      figure: '2',
      title: 'POST /messages, 10 subscribers, vs F',
      metric: 'throughput ratio',
      target: '>= 0.60',
      ...pairedValue(pairs, (m) => m >= 0.6 && rowsOk),
      notes,
      detail: { runs, rows, sent },
    };
  } finally {
    await floor.stop();
    await parley.server.stop();
  }
}
