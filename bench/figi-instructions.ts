// Figure i, run only when named (PARLEY_BENCH_ONLY=i): the work of figures 1 and 4 counted
// in instructions instead of seconds. Each server runs under `valgrind --tool=callgrind` with
// counting off; counting is switched on around each measured batch (callgrind_control) and
// the batch's total read from its dump. An instruction count is the same from run to run but
// for the collector and the compiler, whatever else the machine is doing, so a change of 1-3 %
// that the ratios' spread hides shows here (docs/performance.md, Method). It counts the
// server's threads in user space, not the kernel's work (each answer's write) nor waiting.
// Report only: no target.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { authOf, progress, seedOnly, type BenchOptions, type FigureResult } from './lib/common.ts';
import { createQueues, pollPath, settle, type Poller } from './lib/fanout.ts';
import { closeAll, HttpConn, openMany, type Resp } from './lib/poller.ts';
import { RESULTS_DIR, startFloor, startParley, type Server } from './lib/servers.ts';
import { median, round } from './lib/stats.ts';
import { sendBody } from './fig2-send.ts';

/** Requests before figure 1's counting starts: every path compiled by then. */
const REQUEST_WARMUP = 30_000;
const REQUEST_BATCH = 5_000;
const REQUEST_CONNECTIONS = 10;
const FANOUT_K = 1000;
/** Unmeasured fan-out rounds first: the send's code runs once a round and tiers up slowly. */
const FANOUT_WARMUP = 10;

/** A server under callgrind: count around fn, and return the batch's instructions. */
class Counted {
  private dumps = 0;

  constructor(
    readonly server: Server,
    readonly outFile: string,
  ) {}

  async count(fn: () => Promise<void>): Promise<number> {
    this.control('-i', 'on');
    try {
      await fn();
    } finally {
      this.control('-i', 'off');
    }
    this.control('-d');
    const dump = readFileSync(`${this.outFile}.${++this.dumps}`, 'utf8');
    const totals = /^totals: (\d+)$/m.exec(dump);
    if (!totals) throw new Error(`figi: no totals in ${this.outFile}.${this.dumps}`);
    return Number(totals[1]);
  }

  private control(...args: string[]): void {
    execFileSync('callgrind_control', [...args, String(this.server.pid)], { stdio: 'ignore' });
  }
}

function callgrind(outFile: string): string[] {
  return [
    'valgrind',
    '--tool=callgrind',
    '--instr-atstart=no',
    // V8 writes and rewrites code in the heap.
    '--smc-check=all-non-file',
    `--callgrind-out-file=${outFile}`,
  ];
}

function hasCallgrind(): boolean {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
    execFileSync('sh', ['-c', 'command -v callgrind_control'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** count GET /users/me on conns, spread evenly over them. */
async function requests(conns: HttpConn[], auth: string, count: number): Promise<void> {
  let left = count;
  await Promise.all(
    conns.map(async (c) => {
      while (left > 0) {
        left--;
        const r = await c.request('GET', '/api/v1/users/me', auth);
        if (r.status !== 200) throw new Error(`figi: GET /users/me answered ${r.status}`);
      }
    }),
  );
}

async function requestCounts(
  counted: Counted,
  auth: string,
  rounds: number,
  warmup: number,
): Promise<number[]> {
  const conns = await openMany(counted.server.port, REQUEST_CONNECTIONS);
  try {
    await requests(conns, auth, warmup);
    const perRequest: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const total = await counted.count(() => requests(conns, auth, REQUEST_BATCH));
      perRequest.push(total / REQUEST_BATCH);
    }
    return perRequest;
  } finally {
    closeAll(conns);
  }
}

/**
 * Rounds of one send to FANOUT_K parked polls. A measured round counts from the send until
 * the server is idle after the last answer: the send, the answers and node:http's finishing
 * of them, on both sides. After those rounds as many more count the receivers' polls
 * instead, from the first until the server is idle with every one parked: for Parley the
 * next poll of a queue after a fan-out, which acknowledges its event (figure 5's re-poll).
 * They come after, not before each counted send: a count and its dump just before the send
 * made the send's rounds 10-20 % dearer (session 53).
 */
async function fanoutCounts(
  counted: Counted,
  pollers: Poller[],
  trigger: { auth: string; body: (n: number) => string },
  parley: boolean,
  rounds: number,
  warmup: number,
): Promise<{ perRound: number[]; perPoll: number[]; sample: string }> {
  const server = counted.server;
  const conns = await openMany(server.port, pollers.length);
  const sender = await HttpConn.open(server.port);
  const perRound: number[] = [];
  const perPoll: number[] = [];
  let sample = '';
  try {
    for (let r = 0; r < warmup + 2 * rounds; r++) {
      let polls: Array<Promise<Resp>> = [];
      const park = async () => {
        polls = pollers.map((p, i) => conns[i].request('GET', pollPath(p), p.auth));
        await settle(server, 120_000);
      };
      const countsPolls = r >= warmup + rounds;
      if (countsPolls) perPoll.push((await counted.count(park)) / pollers.length);
      else await park();
      const round = async () => {
        const sent = sender.request('POST', '/api/v1/messages', trigger.auth, trigger.body(r));
        const answers = await Promise.all(polls);
        if ((await sent).status !== 200) throw new Error('figi: the send failed');
        sample = answers[0].body.toString();
        for (const [i, a] of answers.entries()) {
          if (a.status !== 200) throw new Error(`figi: a poll answered ${a.status}`);
          if (!parley) continue;
          const events = (
            JSON.parse(a.body.toString()) as { events: Array<{ id: number; type: string }> }
          ).events;
          if (events.length !== 1) {
            const got = events.map((e) => `${e.type} ${e.id}`).join(', ');
            throw new Error(`figi: a poll of round ${r} had other events: ${got}`);
          }
          pollers[i].lastEventId = events[0].id;
        }
        await settle(server, 120_000);
      };
      if (r < warmup || countsPolls) await round();
      else perRound.push(await counted.count(round));
    }
    return { perRound, perPoll, sample };
  } finally {
    closeAll(conns);
    sender.close();
  }
}

export async function figureInstructions(opts: BenchOptions): Promise<FigureResult[]> {
  const title = (what: string) => `${what}, instructions under callgrind, Parley vs floor`;
  if (!hasCallgrind()) {
    return ['1i', '4i', '5i'].map((figure) => ({
      figure,
      title: title(
        figure === '1i'
          ? 'GET /users/me'
          : figure === '4i'
            ? `fan-out round, K=${FANOUT_K}`
            : `poll after a fan-out, K=${FANOUT_K}`,
      ),
      metric: 'instruction ratio',
      value: NaN,
      target: 'report',
      pass: null,
      notes: ['valgrind (callgrind) is not installed: not measured'],
    }));
  }
  const rounds = opts.quick ? 2 : opts.rounds;
  // Kept with the results, for callgrind_annotate.
  const dir = join(RESULTS_DIR, `callgrind-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  mkdirSync(dir, { recursive: true });
  const out = (name: string) => join(dir, `${name}.callgrind`);
  const start = async (name: string, parley: boolean, dataDir = '') => {
    // --perf-basic-prof: node writes where each compiled function lies, which
    // bench/callgrind-names.ts reads to name callgrind's bare addresses.
    const how = { wrap: callgrind(out(name)), nodeArgs: ['--perf-basic-prof'] };
    // No heartbeats: under valgrind a round can outlast the heartbeat period on a slow
    // machine, and a heartbeat queued beside a round's message (session 58) broke the round;
    // the floor has none either.
    const server = parley
      ? await startParley(name, dataDir, { PARLEY_HEARTBEAT_SECONDS: '3600' }, how)
      : await startFloor(name, {}, how);
    return new Counted(server, out(name));
  };
  /** Stop a counted server and keep its address map beside its dumps. */
  const stop = async (counted: Counted) => {
    await counted.server.stop();
    const map = `/tmp/perf-${counted.server.pid}.map`;
    if (!existsSync(map)) return;
    copyFileSync(map, `${counted.outFile}.map`);
    rmSync(map, { force: true });
  };

  // Figure 1's request.
  const fixture = await seedOnly('figi-request', { users: 2, channels: [] });
  const auth = authOf(fixture.seeded.users[0]);
  const warmup = opts.quick ? 5_000 : REQUEST_WARMUP;
  progress('figi: GET /users/me under callgrind, Parley');
  const parleyReq = await start('figi-parley-request', true, fixture.dataDir);
  let body: string;
  let parleyPerRequest: number[];
  try {
    body = await (
      await fetch(`${parleyReq.server.base}/api/v1/users/me`, { headers: { authorization: auth } })
    ).text();
    parleyPerRequest = await requestCounts(parleyReq, auth, rounds, warmup);
  } finally {
    await stop(parleyReq);
  }
  progress('figi: GET /users/me under callgrind, floor');
  const floorReq = await start('figi-floor-request', false);
  let floorPerRequest: number[];
  try {
    floorReq.server.send({ op: 'set', key: 'me', body, auth });
    floorPerRequest = await requestCounts(floorReq, auth, rounds, warmup);
  } finally {
    await stop(floorReq);
  }

  // Figure 4's K = 1,000 round.
  const fan = await seedOnly('figi-fanout', {
    users: FANOUT_K + 1,
    channels: [{ name: 'fanout', subscribers: 'all', history: 1 }],
  });
  const [owner, ...receivers] = fan.seeded.users;
  const trigger = { auth: authOf(owner), body: sendBody(fan.seeded.channels[0].id) };
  const fanWarmup = opts.quick ? 3 : FANOUT_WARMUP;
  progress(`figi: fan-out to ${FANOUT_K} under callgrind, Parley`);
  const parleyFan = await start('figi-parley-fanout', true, fan.dataDir);
  let parleyPerRound: number[];
  let parleyPerPoll: number[];
  let sample: string;
  try {
    const pollers = await createQueues(parleyFan.server, receivers, 8);
    ({
      perRound: parleyPerRound,
      perPoll: parleyPerPoll,
      sample,
    } = await fanoutCounts(parleyFan, pollers, trigger, true, rounds, fanWarmup));
  } finally {
    await stop(parleyFan);
  }
  progress(`figi: fan-out to ${FANOUT_K} under callgrind, floor`);
  const floorFan = await start('figi-floor-fanout', false);
  let floorPerRound: number[];
  let floorPerPoll: number[];
  try {
    floorFan.server.send({ op: 'set', key: 'event', body: sample });
    const floorPollers = receivers.map((u) => ({
      user: u,
      auth: authOf(u),
      queueId: '1',
      lastEventId: -1,
    }));
    ({ perRound: floorPerRound, perPoll: floorPerPoll } = await fanoutCounts(
      floorFan,
      floorPollers,
      trigger,
      false,
      rounds,
      fanWarmup,
    ));
  } finally {
    await stop(floorFan);
  }

  const list = (xs: number[], scale: number) => xs.map((x) => round(x / scale, 0)).join('/');
  const ratioRow = (figure: string, what: string, p: number[], f: number[], notes: string[]) => {
    const ratios = p.map((x, i) => x / f[i]);
    return {
      figure,
      title: title(what),
      metric: 'instruction ratio (lower is better)',
      value: round(median(p) / median(f), 3),
      min: round(Math.min(...ratios), 3),
      max: round(Math.max(...ratios), 3),
      target: 'report',
      pass: null,
      pairs: p.length,
      discarded: 0,
      notes,
      detail: { parley: p, floor: f },
    };
  };
  return [
    ratioRow('1i', 'GET /users/me', parleyPerRequest, floorPerRequest, [
      `instructions a request, floor ${list(floorPerRequest, 1)}, Parley ${list(parleyPerRequest, 1)} (${rounds} batches of ${REQUEST_BATCH} after ${warmup})`,
    ]),
    ratioRow(`4i`, `fan-out round, K=${FANOUT_K}`, parleyPerRound, floorPerRound, [
      `thousand instructions a round, floor ${list(floorPerRound, 1000)}, Parley ${list(parleyPerRound, 1000)} (${rounds} rounds after ${fanWarmup}; the send, the answers and their finishing)`,
      `callgrind dumps: ${dir}`,
    ]),
    ratioRow('5i', `poll after a fan-out, K=${FANOUT_K}`, parleyPerPoll, floorPerPoll, [
      `instructions a poll, floor ${list(floorPerPoll, 1)}, Parley ${list(parleyPerPoll, 1)} (${FANOUT_K} polls, until idle, in ${rounds} rounds after the counted sends; Parley's acknowledge the round before's event)`,
    ]),
  ];
}
