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
  try {
    const raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may contain spaces; fields count from after its closing bracket.
    const fields = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / HZ;
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
    if (!/^\d+$/.test(pid)) continue;
    let comm: string;
    try {
      comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    } catch {
      continue;
    }
    if (comm !== 'postgres') continue;
    const f = statFields(pid);
    if (!f) continue;
    total += (Number(f[11]) + Number(f[12])) / HZ;
    let parent = '';
    try {
      parent = readFileSync(`/proc/${f[1]}/comm`, 'utf8').trim();
    } catch {
      // The parent is gone: not the postmaster, which outlives its children.
    }
    if (parent !== 'postgres') total += (Number(f[13]) + Number(f[14])) / HZ;
  }
  return total;
}

/** Processes outside the bench's own that a figure's measurement includes (PostgreSQL). */
const alsoOurs = new Map<string, () => number>();

/** Count this CPU source as ours in every window until the returned function is called. */
export function countAsOurs(name: string, cpuSeconds: () => number): () => void {
  alsoOurs.set(name, cpuSeconds);
  return () => alsoOurs.delete(name);
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
 * ours (server, floor, the bench itself as load generator); whatever else kept a core busy
 * meanwhile is foreign load.
 */
export function watchCpu(
  pids: Record<string, number>,
): (extra?: Record<string, number>) => CpuWindow {
  const t0 = performance.now();
  const m0 = machineTimes();
  const c0 = Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, processCpuSeconds(p)]));
  const samplers = [...alsoOurs];
  const s0 = samplers.map(([, read]) => read());
  // extra: CPU seconds of our processes that ended inside the window (one-shot scripts).
  return (extra = {}) => {
    const wall = (performance.now() - t0) / 1000;
    const m1 = machineTimes();
    const cpu: Record<string, number> = {};
    let ours = 0;
    for (const [k, v] of Object.entries(extra)) {
      cpu[k] = v;
      ours += v;
    }
    for (const [k, p] of Object.entries(pids)) {
      cpu[k] = processCpuSeconds(p) - c0[k];
      ours += cpu[k];
    }
    samplers.forEach(([k, read], i) => {
      cpu[k] = read() - s0[i];
      ours += cpu[k];
    });
    // Tick granularity makes tiny negatives possible.
    const foreign = Math.max(0, m1.busy - m0.busy - ours);
    const steal = m1.steal - m0.steal;
    const foreignShare = wall > 0 ? foreign / wall : 0;
    const stealShare = wall > 0 ? steal / wall : 0;
    return {
      wall,
      cpu,
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

/** Pin this process (the load generator) to its core. */
export function pinSelf(): void {
  if (!canPin) return;
  execFileSync('taskset', ['-apc', String(LOAD_CORE), String(process.pid)], { stdio: 'ignore' });
}

/** The command prefix that pins a child to the server core. */
export function serverPinPrefix(): string[] {
  return canPin ? ['taskset', '-c', String(SERVER_CORE)] : [];
}
