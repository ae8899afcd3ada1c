// parley migrate: bring the database schema up to date (serve does this too at start).
import type { Command } from 'commander';
import { migrateDatabase } from '../main.ts';
import type { CommandKit } from './program.ts';

export function addMigrateCommand(program: Command, kit: CommandKit): void {
  program
    .command('migrate')
    .description('apply pending database migrations and print their names')
    .option('--json', 'print {"applied": [names]}')
    .action(async (opts: { json?: boolean }) => {
      const applied = await migrateDatabase(kit.config());
      if (opts.json) return kit.json({ applied });
      if (applied.length === 0) return kit.line('The database is up to date.');
      for (const name of applied) kit.line(`Applied ${name}`);
    });
}
