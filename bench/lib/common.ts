// What every figure shares: the run options, the result row, seeding a data directory and
// starting Parley on it, and authenticated API calls for setup.
import autocannon, { type Options, type Result } from 'autocannon';
import type { Seeded, SeedSpec, SeedUser } from './seed.ts';
import { freshDir, startParley, type Server } from './servers.ts';
import { watchCpu, type CpuWindow } from './proc.ts';
import { basicAuth } from './poller.ts';

export interface BenchOptions {
  quick: boolean;
  /** Alternating floor/Parley rounds per figure. */
  rounds: number;
}

export interface FigureResult {
  figure: string;
  title: string;
  metric: string;
  /** The median ratio, or the absolute value for figures without a floor. */
  value: number;
  min?: number;
  max?: number;
  target: string;
  pass: boolean | null;
  /** Undisturbed pairs (or runs) used, and the disturbed ones left out. */
  pairs?: number;
  discarded?: number;
  notes: string[];
  detail?: Record<string, unknown>;
}

export interface Parley {
  server: Server;
  seeded: Seeded;
  dataDir: string;
}

const t0 = Date.now();

/** A progress line on stderr, with the seconds since the bench started. */
export function progress(text: string): void {
  process.stderr.write(`  [${((Date.now() - t0) / 1000).toFixed(0)}s] ${text}\n`);
}

/** Seed a fresh data directory, then start Parley on it. */
export async function seedAndStart(
  name: string,
  spec: SeedSpec,
  env: Record<string, string> = {},
): Promise<Parley> {
  const { seeded, dataDir } = await seedOnly(name, spec, env);
  progress(`${name}: starting Parley`);
  const server = await startParley(name, dataDir, env);
  return { server, seeded, dataDir };
}

/** Seed a fresh data directory for Parley servers the figure starts itself. */
export async function seedOnly(
  name: string,
  spec: SeedSpec,
  env: Record<string, string> = {},
): Promise<Omit<Parley, 'server'>> {
  const dataDir = freshDir(name);
  progress(`${name}: seeding ${spec.users} users, ${spec.channels.length} channels`);
  // Loaded when first needed, so that a figure without Parley does not load the server.
  const { seed } = await import('./seed.ts');
  const seeded = await seed(spec, {
    PARLEY_DATA_DIR: dataDir,
    PARLEY_LOG_LEVEL: 'warn',
    PARLEY_RATE_LIMIT: 'off',
    ...env,
  });
  return { seeded, dataDir };
}

export const authOf = (u: SeedUser): string => basicAuth(u.email, u.apiKey);

/** A setup call through the API; throws on an error answer. */
export async function api(
  server: Server,
  user: SeedUser,
  method: string,
  path: string,
  params: Record<string, unknown> = {},
): Promise<{ status: number; text: string; json: Record<string, unknown> }> {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    form.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  }
  const get = method === 'GET' || method === 'DELETE';
  const url = `${server.base}/api/v1${path}${get && form.size ? `?${form}` : ''}`;
  const res = await fetch(url, {
    method,
    headers: {
      authorization: authOf(user),
      ...(get ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
    },
    body: get ? undefined : form.toString(),
  });
  const text = await res.text();
  const json = JSON.parse(text) as Record<string, unknown>;
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return { status: res.status, text, json };
}

/** ~200 bytes of message content, made distinct per request by its number. */
export const messageContent = (n: number): string =>
  `Benchmark message ${n}: the quick brown fox jumps over the lazy dog while the team ` +
  'reviews the release notes, checks the dashboards and agrees on the rollout plan for today.';

export interface LoadRun {
  result: Result;
  window: CpuWindow;
  /** Completed 2xx requests per second. */
  rate: number;
}

/** One autocannon run against a server, with the CPU window around it. */
export async function load(
  server: Server,
  opts: Omit<Options, 'url'> & { path: string; bodyFor?: (n: number) => string },
) {
  const { path, bodyFor, ...rest } = opts;
  // Distinct bodies through setupRequest: autocannon 8.0.0's idReplacement declares a
  // Content-Length for 33-character ids but inserts 24-character ones, so every request
  // hangs.
  let n = 0;
  const requests = bodyFor
    ? [{ setupRequest: (req: Record<string, unknown>) => ({ ...req, body: bodyFor(n++) }) }]
    : undefined;
  const close = watchCpu({ server: server.pid, bench: process.pid });
  const result = await autocannon({ url: server.base + path, ...rest, requests });
  const window = close();
  const ok = result['2xx'];
  return { result, window, rate: ok / (result.duration || 1) } satisfies LoadRun;
}

export function describeWindow(w: CpuWindow): string {
  const cpu = Object.entries(w.cpu)
    .map(([k, v]) => `${k} ${v.toFixed(2)}s`)
    .join(', ');
  return `${w.wall.toFixed(1)}s wall; cpu ${cpu}; foreign ${(w.foreignShare * 100).toFixed(0)}% steal ${(w.stealShare * 100).toFixed(0)}%${w.disturbed ? ' DISTURBED' : ''}`;
}
