// A CliIo that records what a command prints, with fake stop signals and exit, so the CLI
// runs in-process. withContext hands in a test app's context when one is given.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import type { AppContext } from '../../src/context.ts';
import { processIo, runCli, type CliIo } from '../../src/cli/program.ts';

export interface CapturedIo {
  io: CliIo;
  stdout(): string;
  stderr(): string;
  /** Deliver a stop signal to the running serve command. */
  signal(name?: string): void;
  exits: number[];
}

export function captureIo(env: Record<string, string>, ctx?: AppContext): CapturedIo {
  let out = '';
  let err = '';
  const handlers = new Set<(signal: string) => void>();
  const exits: number[] = [];
  const io: CliIo = {
    env,
    stdout: (text) => {
      out += text;
    },
    stderr: (text) => {
      err += text;
    },
    withContext: ctx ? (_config, fn) => fn(ctx) : processIo().withContext,
    onStopSignal(handler) {
      handlers.add(handler);
      return () => handlers.delete(handler);
    },
    exit: (code) => {
      exits.push(code);
    },
  };
  return {
    io,
    stdout: () => out,
    stderr: () => err,
    signal: (name = 'SIGTERM') => {
      for (const h of [...handlers]) h(name);
    },
    exits,
  };
}

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run one command line to completion. */
export async function cli(
  args: string[],
  env: Record<string, string> = {},
  ctx?: AppContext,
): Promise<CliRun> {
  const cap = captureIo(env, ctx);
  const code = await runCli(args, cap.io);
  return { code, stdout: cap.stdout(), stderr: cap.stderr() };
}

/** A temporary directory removed when the test file ends. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'parley-cli-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Poll until check() returns a value, or fail after timeoutMs. */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | null | false,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
