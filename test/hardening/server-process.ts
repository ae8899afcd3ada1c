// `parley serve --json` as a real child process, for the tests that kill, stop or read the
// logs of a real server: start it, read its banner, call it over real HTTP.
import { after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { waitFor } from '../cli/io.ts';

export interface ExitStatus {
  code: number | null;
  signal: string | null;
}

export interface ServerProcess {
  child: ChildProcess;
  /** The banner printed by `serve --json` (url, and on a first start the owner). */
  banner: Record<string, string | number>;
  url: string;
  stdout(): string;
  stderr(): string;
  status(): ExitStatus | null;
  exit(timeoutMs?: number): Promise<ExitStatus>;
}

const running = new Set<ChildProcess>();
after(() => {
  for (const child of running) if (child.exitCode === null) child.kill('SIGKILL');
});

/** Start the server and resolve once its banner is out. */
export async function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve', '--json'], {
    env: {
      PATH: process.env.PATH ?? '',
      PARLEY_PORT: '0',
      PARLEY_LOG_LEVEL: 'warn',
      PARLEY_RATE_LIMIT: 'off',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  let status: ExitStatus | null = null;
  child.on('exit', (code, signal) => {
    status = { code, signal };
    running.delete(child);
  });
  await waitFor('the serve banner', () => stdout.includes('\n') || status, 60_000);
  assert.equal(status, null, `serve ended early: ${stdout}${stderr}`);
  const banner = JSON.parse(stdout.split('\n')[0]) as Record<string, string | number>;
  return {
    child,
    banner,
    url: String(banner.url),
    stdout: () => stdout,
    stderr: () => stderr,
    status: () => status,
    async exit(timeoutMs = 30_000) {
      return waitFor('the server process to exit', () => status, timeoutMs);
    },
  };
}

export const basic = (email: string, key: string): string =>
  `Basic ${Buffer.from(`${email}:${key}`).toString('base64')}`;

export interface Account {
  id: number;
  email: string;
  apiKey: string;
}

/** Call the API over real HTTP with form parameters; returns status and parsed body. */
export async function call(
  url: string,
  who: Account | null,
  method: string,
  path: string,
  params: Record<string, unknown> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    form.append(k, typeof v === 'string' ? v : JSON.stringify(v));
  }
  const headers: Record<string, string> = {};
  if (who) headers.authorization = basic(who.email, who.apiKey);
  const withBody = method !== 'GET' && method !== 'DELETE';
  const target = `${url}/api/v1${path}${!withBody && form.size > 0 ? `?${form}` : ''}`;
  if (withBody) headers['content-type'] = 'application/x-www-form-urlencoded';
  const res = await fetch(target, {
    method,
    headers,
    body: withBody ? form.toString() : undefined,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The owner a first start created, from its banner. */
export function ownerOf(server: ServerProcess): Account {
  return {
    id: Number(server.banner.user_id),
    email: String(server.banner.email),
    apiKey: String(server.banner.api_key),
  };
}

/** Create a member with a password (as the owner), then log in for their API key. */
export async function addMember(
  url: string,
  owner: Account,
  email: string,
  password: string,
): Promise<Account> {
  const created = await call(url, owner, 'POST', '/users', {
    email,
    password,
    full_name: email.split('@')[0],
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const login = await call(url, null, 'POST', '/fetch_api_key', { username: email, password });
  assert.equal(login.status, 200, JSON.stringify(login.body));
  return { id: Number(created.body.user_id), email, apiKey: String(login.body.api_key) };
}
