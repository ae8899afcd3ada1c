// Children the bench starts: Parley servers, floor servers and one-shot scripts. Every one
// is registered so that a failure or Ctrl-C stops them all; servers run pinned to the
// server core with the probe preloaded.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import type { ProbeStats } from './probe.ts';
import { localPorts } from './poller.ts';
import { pinServer, serverPinPrefix, startPrefix } from './proc.ts';
import { tracing } from './tracing.ts';

export const ROOT = resolve(import.meta.dirname, '..', '..');
export const WORK_DIR = join(ROOT, 'bench', '.work');
export const RESULTS_DIR = join(ROOT, 'bench', 'results');
const PROBE = join(ROOT, 'bench', 'lib', 'probe.ts');
const PRELOAD = join(ROOT, 'scripts', 'preload-deps.mjs');

const children = new Set<ChildProcess>();

/** Kill whatever is still running (errors, Ctrl-C). */
export function killAll(): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  children.clear();
}

/** A port for a server to listen on, below the pool of the bench's own connections. */
export async function freePort(): Promise<number> {
  for (let tries = 0; ; tries++) {
    const port = await new Promise<number>((res, rej) => {
      const s = createServer();
      s.once('error', rej);
      s.listen(0, '127.0.0.1', () => {
        const port = (s.address() as { port: number }).port;
        s.close(() => res(port));
      });
    });
    if (!localPorts || port < localPorts.low || tries >= 100) return port;
  }
}

/** A fresh directory under bench/.work, removed by removeWorkDir. */
export function freshDir(name: string): string {
  const dir = join(WORK_DIR, `${name}-${process.pid}-${Date.now().toString(36)}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

export function removeWorkDir(): void {
  rmSync(WORK_DIR, { recursive: true, force: true });
}

export interface Server {
  name: string;
  pid: number;
  port: number;
  base: string;
  /**
   * Ask the probe: 'stats' reads; 'loop-start' starts sampling the event-loop delay afresh,
   * 'loop-end' reads and stops it; 'gc' collects first.
   */
  probe(op: 'stats' | 'loop-start' | 'loop-end' | 'gc'): Promise<ProbeStats>;
  /** A message for the server itself (the floor takes its canned bodies this way). */
  send(msg: Record<string, unknown>): void;
  stderr(): string;
  stop(): Promise<void>;
}

function wrapServer(name: string, child: ChildProcess, port: number): Server {
  let err = '';
  child.stderr?.on('data', (d: Buffer) => {
    if (err.length < 20_000) err += d.toString();
  });
  if (tracing()) {
    // What node's tracing options print, with the probe's window marks between.
    mkdirSync(RESULTS_DIR, { recursive: true });
    child.stdout?.pipe(createWriteStream(join(RESULTS_DIR, `trace-${name}-${child.pid}.out`)));
  } else {
    child.stdout?.resume();
  }
  let nextId = 0;
  const pending = new Map<number, (s: ProbeStats) => void>();
  child.on('message', (m: { id: number; stats: ProbeStats }) => {
    pending.get(m.id)?.(m.stats);
    pending.delete(m.id);
  });
  return {
    name,
    pid: child.pid!,
    port,
    base: `http://127.0.0.1:${port}`,
    probe(op) {
      const id = ++nextId;
      return new Promise((res, rej) => {
        const t = setTimeout(() => rej(new Error(`${name}: probe ${op} timed out`)), 30_000);
        pending.set(id, (s) => {
          clearTimeout(t);
          res(s);
        });
        child.send({ op, id });
      });
    },
    send: (msg) => child.send(msg),
    stderr: () => err,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((res) => child.once('exit', () => res()));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(t);
      children.delete(child);
    },
  };
}

function spawnNode(
  args: string[],
  env: Record<string, string>,
  withIpc: boolean,
  pin: string[],
): ChildProcess {
  // Raise the open-file limit to the hard limit where allowed, then pin and run node.
  const cmd = [...pin, process.execPath, ...args]
    .map((a) => `'${a.replace(/'/g, `'\\''`)}'`)
    .join(' ');
  const child = spawn('sh', ['-c', `ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec ${cmd}`], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: withIpc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}

/**
 * Wait until the server answers, then pin it to the server core. It starts on both cores:
 * a start is mostly loading modules, with tsx's loader hooks on a thread of their own, and
 * pinned from the first instruction Parley took 4.6-5.4 s to answer on a slow machine, 3.4-3.9 s
 * on both cores (docs/performance.md, Method).
 */
async function waitReady(
  server: Server,
  path: string,
  child: ChildProcess,
  limitMs: number,
): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`${server.name} exited at start:\n${server.stderr().slice(-3000)}`);
    }
    try {
      const res = await fetch(server.base + path);
      await res.arrayBuffer();
      if (res.status < 500) {
        pinServer(server.pid);
        return;
      }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(
    `${server.name} did not start in ${limitMs / 1000} s:\n${server.stderr().slice(-3000)}`,
  );
}

/** More of node's options for one side, from an environment variable: words split by spaces. */
const nodeArgsFrom = (name: string): string[] =>
  process.env[name]?.split(' ').filter(Boolean) ?? [];

const profileArgs = (): string[] =>
  process.env.PARLEY_BENCH_PROFILE === '1'
    ? ['--cpu-prof', `--cpu-prof-dir=${join(RESULTS_DIR, 'profiles')}`]
    : [];

/**
 * How a server is started besides node's own arguments: `wrap` goes between the pinning and
 * node (valgrind, for figure i), and such a server gets longer to start.
 */
export interface StartOptions {
  wrap?: string[];
  /** More of node's own options. */
  nodeArgs?: string[];
}

/** How long a server may take to answer its first request; a wrapped one much longer. */
const startLimitMs = (start: StartOptions): number => (start.wrap ? 600_000 : 90_000);

/** `node --import tsx src/cli.ts serve` on a data directory the caller seeded. */
export async function startParley(
  name: string,
  dataDir: string,
  env: Record<string, string> = {},
  start: StartOptions = {},
): Promise<Server> {
  const port = await freePort();
  const child = spawnNode(
    [
      '--expose-gc',
      ...profileArgs(),
      ...(start.nodeArgs ?? []),
      // Parley's alone: V8's tracing, say (`--trace-opt --trace-deopt`), in trace-*.out.
      ...nodeArgsFrom('PARLEY_BENCH_NODE_ARGS'),
      '--import',
      PRELOAD,
      '--import',
      'tsx',
      '--import',
      PROBE,
      join(ROOT, 'src', 'cli.ts'),
      'serve',
    ],
    {
      PARLEY_DATA_DIR: dataDir,
      PARLEY_PORT: String(port),
      PARLEY_HOST: '127.0.0.1',
      PARLEY_RATE_LIMIT: 'off',
      PARLEY_LOG_LEVEL: 'warn',
      ...env,
    },
    true,
    [...startPrefix(), ...(start.wrap ?? [])],
  );
  const server = wrapServer(name, child, port);
  await waitReady(server, '/api/v1/server_settings', child, startLimitMs(start));
  return server;
}

/** The bare node:http floor (floor-server.ts) with the given canned bodies. */
export async function startFloor(
  name: string,
  env: Record<string, string>,
  start: StartOptions = {},
): Promise<Server> {
  const port = await freePort();
  const child = spawnNode(
    [
      '--expose-gc',
      ...(start.nodeArgs ?? []),
      // The floor's alone, as PARLEY_BENCH_NODE_ARGS is Parley's.
      ...nodeArgsFrom('PARLEY_BENCH_FLOOR_NODE_ARGS'),
      '--import',
      'tsx',
      join(ROOT, 'bench', 'lib', 'floor-server.ts'),
    ],
    { BENCH_FLOOR_PORT: String(port), ...env },
    true,
    [...startPrefix(), ...(start.wrap ?? [])],
  );
  const server = wrapServer(name, child, port);
  await waitReady(server, '/ready', child, startLimitMs(start));
  return server;
}

/** Run a node script (tsx) to completion, pinned to the server core; returns its stdout. */
export async function runScript(
  script: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<string> {
  const child = spawnNode(
    ['--import', 'tsx', join(ROOT, script), ...args],
    env,
    false,
    serverPinPrefix(),
  );
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => {
    if (err.length < 20_000) err += d.toString();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((res) => child.once('exit', (c) => res(c)));
  clearTimeout(timer);
  if (code !== 0) throw new Error(`${script} failed (${code}):\n${err.slice(-3000)}`);
  return out;
}
