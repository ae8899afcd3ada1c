// parley serve: run the server until SIGTERM or SIGINT.
import type { Command } from 'commander';
import { unknownSettings } from '../config.ts';
import { bannerJson, bannerLines, createLogger, startServer } from '../main.ts';
import type { CommandKit } from './program.ts';
import { untilStopped } from './signals.ts';

export function addServeCommand(program: Command, kit: CommandKit): void {
  program
    .command('serve')
    .description('run the server (creates the first organization on an empty database)')
    .option('--json', "print the URL (and on a first start the owner's credentials) as JSON")
    .action(async (opts: { json?: boolean }) => {
      const config = kit.config();
      const log = createLogger(config, { write: (line: string) => kit.io.stderr(line) });
      for (const name of unknownSettings(kit.io.env)) {
        log.warn({ variable: name }, 'unknown PARLEY_ variable ignored (misspelt?)');
      }
      const server = await startServer(config, { log });
      // Listen for the stop signals before the banner is out: whoever waits for it may
      // signal at once, and an unhandled SIGTERM would kill the process without a stop.
      const stopped = untilStopped({
        stop: server.stop,
        onStopSignal: kit.io.onStopSignal,
        exit: kit.io.exit,
        log,
      });
      if (opts.json) kit.json(bannerJson(server));
      else for (const line of bannerLines(server)) kit.line(line);
      await stopped;
    });
}
