// Figure 5, delivery CPU: server CPU per delivered event with K=1,000 parked polls that poll
// again as soon as they are answered (so the next poll and the queue bookkeeping count),
// against the bare floor doing the same. Parley's figure includes the send itself,
// amortised over its K deliveries.
import { authOf, progress, type BenchOptions, type FigureResult } from './lib/common.ts';
import { pollPath, settle, type Poller } from './lib/fanout.ts';
import { closeAll, HttpConn, openMany, type Resp } from './lib/poller.ts';
import { processCpuSeconds, watchCpu, type CpuWindow } from './lib/proc.ts';
import { startFloor, type Server } from './lib/servers.ts';
import { round, pairedValue, type Pair } from './lib/stats.ts';
import { sendBody } from './fig2-send.ts';
import { fanoutFixture } from './fig4-fanout.ts';

const K = 1000;

interface CpuRun {
  cpuPerEventUs: number;
  delivered: number;
  bad: number;
  window: CpuWindow;
  /** One of Parley's answers, for the floor to answer with. */
  sample?: string;
}

async function deliveryRun(
  server: Server,
  pollers: Poller[],
  trigger: { auth: string; body: (n: number) => string },
  sends: number,
  parley: boolean,
): Promise<CpuRun> {
  const conns = await openMany(server.port, K);
  const sender = await HttpConn.open(server.port);
  let delivered = 0;
  let bad = 0;
  let sample: string | undefined;
  const poll = (i: number) => conns[i].request('GET', pollPath(pollers[i]), pollers[i].auth);
  try {
    let current: Array<Promise<Resp>> = conns.map((_, i) => poll(i));
    await settle(server);
    const close = watchCpu({ server: server.pid, bench: process.pid });
    const cpu0 = processCpuSeconds(server.pid);
    for (let m = 0; m < sends; m++) {
      const next: Array<Promise<Resp>> = new Array(K);
      const sent = sender.request('POST', '/api/v1/messages', trigger.auth, trigger.body(m));
      await Promise.race([
        Promise.all(
          current.map((p, i) =>
            p.then(
              (r) => {
                if (r.status !== 200) bad++;
                else if (parley) {
                  const text = r.body.toString();
                  sample ??= text;
                  const events = (JSON.parse(text) as { events: Array<{ id: number }> }).events;
                  if (events.length === 0) bad++;
                  else pollers[i].lastEventId = events[events.length - 1].id;
                  delivered += events.length;
                } else delivered++;
                next[i] = poll(i);
              },
              () => {
                bad++;
              },
            ),
          ),
        ),
        new Promise((r) => setTimeout(r, 30_000)),
      ]);
      if ((await sent).status !== 200) bad++;
      current = next.map((p) => p ?? Promise.reject(new Error('dropped')));
      await settle(server);
    }
    const cpu = processCpuSeconds(server.pid) - cpu0;
    const window = close();
    // Unanswered polls are dropped with the connections.
    current.forEach((p) => p.catch(() => undefined));
    return {
      cpuPerEventUs: (cpu / Math.max(1, delivered)) * 1e6,
      delivered,
      bad,
      window,
      sample,
    };
  } finally {
    closeAll(conns);
    sender.close();
  }
}

export async function figure5(opts: BenchOptions): Promise<FigureResult> {
  const { parley, pollers } = await fanoutFixture([K]);
  const floor = await startFloor('fig5-floor', {});
  try {
    const trigger = {
      auth: authOf(parley.seeded.users[0]),
      body: sendBody(parley.seeded.channels[0].id),
    };
    const sends = opts.quick ? 5 : 10;
    // The floor of item 4 answers with one of Parley's answers, as figure 4's does: a floor
    // for delivering an event writes the event's bytes, not an empty list.
    const warm = await deliveryRun(parley.server, pollers, trigger, 2, true);
    if (!warm.sample) throw new Error('fig5: Parley answered no event to give the floor');
    floor.send({ op: 'set', key: 'event', body: warm.sample });
    await deliveryRun(floor, pollers, trigger, 2, false);
    progress(`fig5: ${opts.rounds} rounds of ${sends} sends to K=${K}`);
    const pairs: Pair[] = [];
    const runs: Record<string, unknown>[] = [];
    for (let i = 0; i < opts.rounds; i++) {
      const f = await deliveryRun(floor, pollers, trigger, sends, false);
      const p = await deliveryRun(parley.server, pollers, trigger, sends, true);
      pairs.push({
        ratio: p.cpuPerEventUs / f.cpuPerEventUs,
        disturbed: f.window.disturbed || p.window.disturbed,
      });
      runs.push({
        floorUs: round(f.cpuPerEventUs, 1),
        parleyUs: round(p.cpuPerEventUs, 1),
        delivered: [f.delivered, p.delivered],
        bad: f.bad + p.bad,
        foreign: [round(f.window.foreignShare, 2), round(p.window.foreignShare, 2)],
      });
    }
    const bad = runs.reduce((n, r) => n + (r.bad as number), 0);
    return {
      figure: '5',
      title: `server CPU per delivered event, K=${K}`,
      metric: 'CPU ratio (lower is better)',
      target: '<= 1.5',
      ...pairedValue(pairs, (m) => m <= 1.5 && bad === 0),
      notes: [
        `µs per event floor ${runs.map((r) => r.floorUs).join('/')}, Parley ${runs.map((r) => r.parleyUs).join('/')}; bad responses ${bad}`,
        'CPU from /proc/<pid>/stat (10 ms ticks) over the sends, responses and re-polls',
        `the floor answers with one of Parley's answers (${Buffer.byteLength(warm.sample)} bytes)`,
      ],
      detail: { runs },
    };
  } finally {
    await floor.stop();
    await parley.server.stop();
  }
}
