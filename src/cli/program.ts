// The parley command line: one commander program whose commands call the same actions the
// API calls. Output goes through CliIo so tests run it in-process and read what it printed.
import { Command, CommanderError } from 'commander';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import type { AppContext } from '../context.ts';
import { JsonableError } from '../lib/errors.ts';
import { openContext } from '../main.ts';
import { closeContext } from '../server.ts';
import { PARLEY_VERSION } from '../version.ts';
import { addAccountCommands } from './accounts.ts';
import { addServeCommand } from './serve.ts';
import { addMigrateCommand } from './migrate.ts';

export interface CliIo {
  env: Record<string, string | undefined>;
  stdout(text: string): void;
  stderr(text: string): void;
  /** Run fn with a context on the configured database (tests hand in their own). */
  withContext<T>(config: Config, fn: (ctx: AppContext) => Promise<T>): Promise<T>;
  /** serve: call handler on SIGTERM and SIGINT; returns a function that stops listening. */
  onStopSignal(handler: (signal: string) => void): () => void;
  /** serve: leave at once (a second stop signal, or a stop past its deadline). */
  exit(code: number): void;
}

export function processIo(): CliIo {
  return {
    env: process.env,
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    async withContext(config, fn) {
      const ctx = await openContext(config);
      try {
        return await fn(ctx);
      } finally {
        await closeContext(ctx);
      }
    },
    onStopSignal(handler) {
      process.on('SIGTERM', handler);
      process.on('SIGINT', handler);
      return () => {
        process.off('SIGTERM', handler);
        process.off('SIGINT', handler);
      };
    },
    exit: (code) => process.exit(code),
  };
}

/** Helpers every command uses: configuration and output. */
export interface CommandKit {
  io: CliIo;
  config(): Config;
  line(text?: string): void;
  json(value: Record<string, unknown>): void;
}

function commandKit(io: CliIo): CommandKit {
  return {
    io,
    config: () => loadConfig(io.env),
    line: (text = '') => io.stdout(`${text}\n`),
    json: (value) => io.stdout(`${JSON.stringify(value)}\n`),
  };
}

export function buildProgram(io: CliIo): Command {
  // Settings made here are inherited by the commands added below.
  const program = new Command('parley')
    .description('Parley, a self-hosted team chat server')
    .version(PARLEY_VERSION)
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  const kit = commandKit(io);
  addServeCommand(program, kit);
  addMigrateCommand(program, kit);
  addAccountCommands(program, kit);
  return program;
}

/** Errors a user can act on get one line; anything else is a bug and keeps its stack. */
export function describeError(err: unknown): string {
  if (err instanceof JsonableError || err instanceof ConfigError) return err.message;
  if (err instanceof Error) return err.stack ?? err.message;
  return String(err);
}

/** Run one command line (without the node and script arguments); resolves to the exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  try {
    await buildProgram(io).parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    // Commander has already printed its own message (usage errors, help, version).
    if (err instanceof CommanderError) return err.exitCode;
    io.stderr(`error: ${describeError(err)}\n`);
    return 1;
  }
}
