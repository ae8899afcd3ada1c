// The fixed-rate probe of figure 4, run by fanout.ts's startLatencyProbe as a process of its
// own (it inherits the bench's pinning to the load core): GET a light endpoint at a fixed
// rate on a few connections; latency counts from the scheduled send time, so a stalled
// server cannot hide behind a late request. The parent sends {op: 'stop'} and gets
// {result}; the probe stops by itself after 600 s.
import { closeAll, HttpConn } from './poller.ts';
import { percentile, sleep } from './stats.ts';

export interface ProbeResult {
  sent: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
}

async function runProbe(port: number, perSecond: number, path: string): Promise<void> {
  // From ports the kernel picks: the pool's (poller.ts, LocalPorts) are the parent's, which
  // may hold the first thousands of them on connections to this very server, and this
  // process would start from the same first port.
  const conns = await Promise.all(Array.from({ length: 8 }, () => HttpConn.open(port)));
  const free = [...conns];
  const latencies: number[] = [];
  let errors = 0;
  let sent = 0;
  const inflight = new Set<Promise<void>>();
  let stopped = false;
  process.on('message', (m: { op?: string }) => {
    if (m?.op === 'stop') stopped = true;
  });
  process.send!({ ready: true });
  const start = performance.now();
  const maxRequests = perSecond * 600;
  while (!stopped && sent < maxRequests) {
    const scheduled = start + (sent * 1000) / perSecond;
    const wait = scheduled - performance.now();
    if (wait > 0) await sleep(wait);
    if (stopped) break;
    sent++;
    const c = free.pop();
    if (!c) {
      // Every connection still waiting: the server is stalled; count it as an error.
      errors++;
      continue;
    }
    const p = c.request('GET', path, '').then(
      (r) => {
        if (r.status !== 200) errors++;
        latencies.push(r.at - scheduled);
        free.push(c);
      },
      () => {
        errors++;
      },
    );
    inflight.add(p);
    void p.finally(() => inflight.delete(p));
  }
  await Promise.race([Promise.all(inflight), sleep(5_000)]);
  closeAll(conns);
  const result: ProbeResult = {
    sent,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: Math.max(0, ...latencies),
    errors,
  };
  process.send!({ result }, () => process.exit(0));
}

if (process.send && process.env.BENCH_PROBE_PORT) {
  // A bench that died must not leave its probe behind.
  process.on('disconnect', () => process.exit(0));
  await runProbe(
    Number(process.env.BENCH_PROBE_PORT),
    Number(process.env.BENCH_PROBE_RATE ?? 100),
    process.env.BENCH_PROBE_PATH ?? '/api/v1/server_settings',
  );
}
