// CPU accounting from /proc: per-process CPU time, and the machine's busy, steal and
// foreign time, so a run that shared the cores with someone else is counted and discarded
// instead of trusted. Linux only; elsewhere every figure reads as zero and nothing is
// flagged (the report says so).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** Clock ticks per second of /proc/<pid>/stat and /proc/stat (USER_HZ, 100 on Linux). */
const HZ = 100;

export const hasProc = existsSync('/proc/stat');

/** User + system CPU seconds a process has used so far (children not included). */
export function processCpuSeconds(pid: number): number {
  const fields = statFields(pid);
  return fields ? (Number(fields[11]) + Number(fields[12])) / HZ : 0;
}

/** Of those, the system (kernel) CPU seconds. */
function processKernelSeconds(pid: number): number {
  const fields = statFields(pid);
  return fields ? Number(fields[12]) / HZ : 0;
}

/**
 * Times the process's main thread has gone to sleep and been woken (its voluntary context
 * switches): for a Node server, mostly a turn of the event loop that found nothing to do and
 * waited. On a nested virtual machine each costs the process 90-220 µs of CPU, which a server
 * waking for timers of its own pays where the floor does not (docs/performance.md, session 60).
 */
function mainThreadWakeups(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8');
    return Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** The fields of /proc/<pid>/stat after the command name, or null if it is gone. */
function statFields(pid: string | number): string[] | null {
  try {
    const raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return raw.slice(raw.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/**
 * CPU seconds of every PostgreSQL process on the machine: the live ones, plus what the
 * postmaster has collected from children that exited (cutime + cstime), so that a backend
 * ending inside a window still counts. PostgreSQL is part of what the PostgreSQL rows
 * measure, not foreign load.
 */
export function postgresCpuSeconds(): number {
  if (!hasProc) return 0;
  let total = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || !isPostgres(Number(pid))) continue;
    const f = statFields(pid);
    if (!f) continue;
    total += (Number(f[11]) + Number(f[12])) / HZ;
    // A parent that is gone is not the postmaster, which outlives its children.
    if (!isPostgres(Number(f[1]))) total += (Number(f[13]) + Number(f[14])) / HZ;
  }
  return total;
}

/** Whether pid is a PostgreSQL process (its command name); false once it is gone. */
export function isPostgres(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres';
  } catch {
    return false;
  }
}

/** A source of CPU that a figure's measurement includes besides the watched processes. */
interface OurSource {
  cpuSeconds: () => number;
  /** Whether a process is this source's (for the precise count of foreign load). */
  owns: (pid: number) => boolean;
}

/** Processes outside the bench's own that a figure's measurement includes (PostgreSQL). */
const alsoOurs = new Map<string, OurSource>();

/**
 * Count this CPU source as ours in every window until the returned function is called. owns
 * names its processes, which the precise count of foreign load leaves out.
 */
export function countAsOurs(
  name: string,
  cpuSeconds: () => number,
  owns: (pid: number) => boolean,
): () => void {
  alsoOurs.set(name, { cpuSeconds, owns });
  return () => alsoOurs.delete(name);
}

const hasSchedstat = existsSync(`/proc/${process.pid}/task/${process.pid}/schedstat`);

/** Where foreign load is read from, for the report's header. */
export const foreignLoadSource = hasSchedstat ? 'schedstat' : '10 ms ticks';

/**
 * Nanoseconds each process on the machine has run so far, its threads summed, from the
 * scheduler's own account (/proc/<pid>/task/<tid>/schedstat), or null where the kernel
 * does not keep it. /proc/stat counts in 10 ms ticks: in a K = 1,000 fan-out round of
 * 30-60 ms one tick more or less read as 17-33 % of a core of foreign load, and most such
 * rounds were discarded as disturbed on an idle machine (docs/performance.md, session 27).
 */
function processRuntimes(): Map<number, number> | null {
  if (!hasSchedstat) return null;
  const out = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue; // gone meanwhile
    }
    let ns = 0;
    for (const tid of tids) ns += schedstatOf(pid, tid)?.run ?? 0;
    out.set(pid, ns);
  }
  return out;
}

/** A thread's run and run-queue wait so far (ns), or null once it has ended. */
function schedstatOf(pid: number, tid: string): { run: number; wait: number } | null {
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'latin1')
      .split(' ')
      .map(Number);
    return { run, wait };
  } catch {
    return null;
  }
}

/** Whether pid is this bench process or one it started, however deep. */
function isOfBench(pid: number): boolean {
  for (let p = pid, depth = 0; p > 1 && depth < 8; depth++) {
    if (p === process.pid) return true;
    const f = statFields(p);
    if (!f) return false;
    p = Number(f[1]);
  }
  return false;
}

/**
 * Seconds run between two readings by the processes that are not ours. A process that
 * started inside the window counts all its time; one that ended inside it is not seen.
 */
function foreignRuntime(
  before: Map<number, number>,
  after: Map<number, number>,
  watched: Set<number>,
): number {
  let ns = 0;
  for (const [pid, now] of after) {
    const ran = now - (before.get(pid) ?? 0);
    // A thread that ended takes its time with it: the process can read less than before.
    if (ran <= 0 || watched.has(pid) || isOfBench(pid)) continue;
    if ([...alsoOurs.values()].some((s) => s.owns(pid))) continue;
    ns += ran;
  }
  return ns / 1e9;
}

/** Milliseconds a process's main thread ran and waited for a core, and its other threads ran. */
export interface ThreadTimes {
  mainRun: number;
  mainWait: number;
  othersRun: number;
}

/**
 * The scheduler's account of a process's threads (/proc/<pid>/task/<tid>/schedstat: run and
 * run-queue wait in ns), or null where the kernel keeps none. On a pinned server the main
 * thread waits when another thread of the same process has its one core: V8's compiler and
 * collector threads, which foreign load does not count (docs/performance.md, item 4).
 */
export function threadTimes(pid: number): ThreadTimes | null {
  if (!hasSchedstat) return null;
  const out: ThreadTimes = { mainRun: 0, mainWait: 0, othersRun: 0 };
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return null;
  }
  for (const tid of tids) {
    const stat = schedstatOf(pid, tid);
    if (!stat) continue;
    if (Number(tid) === pid) {
      out.mainRun = stat.run / 1e6;
      out.mainWait = stat.wait / 1e6;
    } else {
      out.othersRun += stat.run / 1e6;
    }
  }
  return out;
}

/** What each thread time grew by between two readings (null if either is missing). */
export function threadTimesSince(before: ThreadTimes | null, pid: number): ThreadTimes | null {
  const after = threadTimes(pid);
  if (!before || !after) return null;
  return {
    mainRun: after.mainRun - before.mainRun,
    mainWait: after.mainWait - before.mainWait,
    // A thread that ended takes its time with it.
    othersRun: Math.max(0, after.othersRun - before.othersRun),
  };
}

/**
 * How many polls one server can hold parked here: wanted, or fewer where the open-file limit
 * is lower, since the bench holds a socket per poll too and both processes need the files.
 */
export function heldPollsWithin(wanted: number): { n: number; limit: number } {
  let limit = 1024;
  try {
    limit = Number(execFileSync('sh', ['-c', 'ulimit -n']).toString().trim()) || limit;
  } catch {
    // No shell to ask: assume the common default.
  }
  return { n: Math.min(wanted, limit - 500), limit };
}

/** Resident set size in bytes (VmRSS). */
export function processRssBytes(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

interface MachineTimes {
  busy: number;
  steal: number;
  total: number;
}

function machineTimes(): MachineTimes {
  if (!hasProc) return { busy: 0, steal: 0, total: 0 };
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const busy = user + nice + system + irq + softirq;
  return { busy: busy / HZ, steal: steal / HZ, total: (busy + idle + iowait + steal) / HZ };
}

export interface CpuWindow {
  /** Wall seconds of the window. */
  wall: number;
  /** CPU seconds of each watched process. */
  cpu: Record<string, number>;
  /** The kernel's part of each watched process's cpu (not of `extra` or the samplers'). */
  kernel: Record<string, number>;
  /** Each watched process's main-thread wakeups (mainThreadWakeups) over the window. */
  wakeups: Record<string, number>;
  /** Busy CPU seconds of the machine that none of the watched processes used. */
  foreign: number;
  steal: number;
  /** foreign as a fraction of one core over the window. */
  foreignShare: number;
  stealShare: number;
  disturbed: boolean;
}

/** Foreign load above this share of one core (or any steal above 5 %) disturbs a run. */
export const FOREIGN_LIMIT = 0.15;
const STEAL_LIMIT = 0.05;

/**
 * Start watching: returns a function that closes the window. The watched processes are
 * ours (server, floor, the bench itself as load generator), and so is every process the
 * bench started; whatever else kept a core busy meanwhile is foreign load. `cpu` is each
 * watched process's CPU in ticks; foreign load is counted from the scheduler's nanoseconds
 * where the kernel keeps them, and from /proc/stat's ticks elsewhere.
 */
export function watchCpu(
  pids: Record<string, number>,
): (extra?: Record<string, number>) => CpuWindow {
  const watched = new Set(Object.values(pids));
  // Each reading of every process takes a few milliseconds: the span between their starts
  // is the window they measure.
  const r0At = performance.now();
  const r0 = processRuntimes();
  const t0 = performance.now();
  const m0 = machineTimes();
  const c0 = Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, processCpuSeconds(p)]));
  const k0 = Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, processKernelSeconds(p)]));
  const w0 = Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, mainThreadWakeups(p)]));
  const samplers = [...alsoOurs];
  const s0 = samplers.map(([, source]) => source.cpuSeconds());
  // extra: CPU seconds of our processes that ended inside the window (one-shot scripts).
  return (extra = {}) => {
    const wall = (performance.now() - t0) / 1000;
    const m1 = machineTimes();
    const cpu: Record<string, number> = {};
    const kernel = Object.fromEntries(
      Object.entries(pids).map(([k, p]) => [k, processKernelSeconds(p) - k0[k]]),
    );
    const wakeups = Object.fromEntries(
      Object.entries(pids).map(([k, p]) => [k, mainThreadWakeups(p) - w0[k]]),
    );
    let ours = 0;
    for (const [k, v] of Object.entries(extra)) {
      cpu[k] = v;
      ours += v;
    }
    for (const [k, p] of Object.entries(pids)) {
      cpu[k] = processCpuSeconds(p) - c0[k];
      ours += cpu[k];
    }
    samplers.forEach(([k, source], i) => {
      cpu[k] = source.cpuSeconds() - s0[i];
      ours += cpu[k];
    });
    const span = (performance.now() - r0At) / 1000;
    const r1 = r0 && processRuntimes();
    // Tick granularity makes tiny negatives possible.
    const foreign =
      r0 && r1 ? foreignRuntime(r0, r1, watched) : Math.max(0, m1.busy - m0.busy - ours);
    const steal = m1.steal - m0.steal;
    const foreignShare = r0 && r1 ? foreign / span : wall > 0 ? foreign / wall : 0;
    const stealShare = wall > 0 ? steal / wall : 0;
    return {
      wall,
      cpu,
      kernel,
      wakeups,
      foreign,
      steal,
      foreignShare,
      stealShare,
      disturbed: hasProc && (foreignShare > FOREIGN_LIMIT || stealShare > STEAL_LIMIT),
    };
  };
}

/** Whether taskset can pin processes here (two cores or more, and the tool installed). */
export const canPin: boolean = (() => {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return availableParallelism() >= 2;
  } catch {
    return false;
  }
})();

export const SERVER_CORE = 0;
export const LOAD_CORE = 1;

/** Pin every thread of a process to one core (threads it makes later follow). */
function pinProcess(pid: number, core: number): void {
  if (!canPin) return;
  execFileSync('taskset', ['-apc', String(core), String(pid)], { stdio: 'ignore' });
}

/** Pin this process (the load generator) to its core. */
export function pinSelf(): void {
  pinProcess(process.pid, LOAD_CORE);
}

/** The command prefix that pins a child to the server core. */
export function serverPinPrefix(): string[] {
  return canPin ? ['taskset', '-c', String(SERVER_CORE)] : [];
}

/**
 * The command prefix that lets a child start on every core (it would inherit the load core
 * from the bench); pinServer moves it to the server core once it is ready.
 */
export function startPrefix(): string[] {
  return canPin ? ['taskset', '-c', `${SERVER_CORE},${LOAD_CORE}`] : [];
}

/** Pin a started server to the server core. */
export function pinServer(pid: number): void {
  pinProcess(pid, SERVER_CORE);
}
