// Figure 8, register cost: POST /register (every event type, the whole initial state) for a
// member of an organization of 1,000 users and 200 channels with 20 subscriptions each, at a
// fixed offered rate of one request at a time; and the response size with and without gzip.
import { gzipSync } from 'node:zlib';
import {
  authOf,
  progress,
  seedAndStart,
  type BenchOptions,
  type FigureResult,
} from './lib/common.ts';
import { HttpConn } from './lib/poller.ts';
import { processCpuSeconds, watchCpu } from './lib/proc.ts';
import { passUnlessDisturbed, percentile, round, sleep } from './lib/stats.ts';

const USERS = 1000;
const CHANNELS = 200;
const PER_USER = 20;

export async function figure8(opts: BenchOptions): Promise<FigureResult[]> {
  // User u is in channels u, u+10, ..., u+190 (mod 200): 20 each, 100 subscribers a channel.
  const channels = Array.from({ length: CHANNELS }, (_, c) => ({
    name: `channel-${c}`,
    subscribers: Array.from({ length: USERS }, (_, u) => u).filter(
      (u) => (((c - u) % 10) + 10) % 10 === 0,
    ),
  }));
  const parley = await seedAndStart('fig8', { users: USERS, channels });
  try {
    const member = parley.seeded.users[1];
    const auth = authOf(member);
    const count = opts.quick ? 10 : 30;
    const intervalMs = 250;
    // Does the server compress when asked?
    const asked = await fetch(`${parley.server.base}/api/v1/register`, {
      method: 'POST',
      headers: { authorization: auth, 'accept-encoding': 'gzip' },
    });
    const encoding = asked.headers.get('content-encoding');
    const raw = Buffer.from(await asked.arrayBuffer());
    const body = encoding ? null : raw;
    const subs = body
      ? (JSON.parse(body.toString()) as { subscriptions?: unknown[] }).subscriptions?.length
      : undefined;
    progress(`fig8: ${count} registers at ${1000 / intervalMs}/s`);
    const conn = await HttpConn.open(parley.server.port);
    const latencies: number[] = [];
    const cpu: number[] = [];
    const queues: string[] = [];
    const close = watchCpu({ server: parley.server.pid, bench: process.pid });
    const start = performance.now();
    let late = 0;
    for (let i = 0; i < count; i++) {
      const scheduled = start + i * intervalMs;
      const wait = scheduled - performance.now();
      if (wait > 0) await sleep(wait);
      else late++;
      const c0 = processCpuSeconds(parley.server.pid);
      const t = performance.now();
      const r = await conn.request('POST', '/api/v1/register', auth, '');
      latencies.push(r.at - t);
      cpu.push(processCpuSeconds(parley.server.pid) - c0);
      if (r.status !== 200) throw new Error(`register failed: ${r.status}`);
      queues.push((JSON.parse(r.body.toString()) as { queue_id: string }).queue_id);
    }
    const window = close();
    for (const q of queues) {
      await conn.request('DELETE', `/api/v1/events?queue_id=${encodeURIComponent(q)}`, auth);
    }
    conn.close();
    const size = body ? body.length : NaN;
    const gz = body ? gzipSync(body).length : raw.length;
    const p50 = percentile(latencies, 50);
    const disturbed = window.disturbed ? 1 : 0;
    return [
      {
        figure: '8a',
        title: `POST /register, ${USERS} users, ${CHANNELS} channels, ${PER_USER} subs each`,
        metric: 'latency p50 ms',
        value: round(p50, 1),
        min: round(Math.min(...latencies), 1),
        max: round(Math.max(...latencies), 1),
        target: '<= 30',
        pass: passUnlessDisturbed(disturbed, p50 <= 30),
        pairs: 1 - disturbed,
        discarded: disturbed,
        notes: [
          `${count} requests, one at a time, offered every ${intervalMs} ms (${late} started late); p99 ${round(percentile(latencies, 99), 1)} ms; server CPU p50 ${round(percentile(cpu, 50) * 1000, 0)} ms (10 ms ticks); foreign ${round(window.foreignShare * 100, 0)}%`,
        ],
      },
      {
        figure: '8b',
        title: 'register response size',
        metric: 'KB plain / gzip',
        value: round(size / 1024, 1),
        target: 'report',
        pass: null,
        notes: [
          encoding
            ? `server answers Accept-Encoding: gzip with ${encoding}: ${round(raw.length / 1024, 1)} KB on the wire`
            : `server does not compress (no Content-Encoding for Accept-Encoding: gzip); gzip by the bench (node:zlib, level 6): ${round(gz / 1024, 1)} KB`,
          `${subs ?? '?'} subscriptions in the snapshot`,
        ],
        detail: { bytes: size, gzipBytes: gz, serverEncoding: encoding },
      },
    ];
  } finally {
    await parley.server.stop();
  }
}
