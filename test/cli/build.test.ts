// `npm run build` output runs with plain node: the .ts import extensions are rewritten and
// nothing at run time needs tsx. Built outside the tree, so a stale dist/ never shadows
// src/ and lint never sees the output; --noCheck because type errors are the typecheck
// step's to report.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { tempDir, waitFor } from './io.ts';

const run = promisify(execFile);

test(
  'the build runs with node: migrate, then serve until SIGTERM',
  { timeout: 180_000 },
  async () => {
    // What the package root gives dist/: ES modules, and the dependencies.
    const root = tempDir();
    writeFileSync(join(root, 'package.json'), '{"type":"module"}');
    symlinkSync(resolve('node_modules'), join(root, 'node_modules'), 'dir');
    const outDir = join(root, 'dist');
    await run(
      process.execPath,
      [
        join('node_modules', 'typescript', 'bin', 'tsc'),
        '-p',
        'tsconfig.build.json',
        '--outDir',
        outDir,
        '--noCheck',
      ],
      { timeout: 150_000 },
    );
    const env = { PATH: process.env.PATH ?? '', PARLEY_DATA_DIR: tempDir(), PARLEY_PORT: '0' };
    const cli = join(outDir, 'cli.js');

    const migrated = await run(process.execPath, [cli, 'migrate', '--json'], {
      env,
      timeout: 30_000,
    });
    const applied = (JSON.parse(migrated.stdout) as { applied: string[] }).applied;
    assert.equal(applied[0], '0001_initial');

    const child = spawn(process.execPath, [cli, 'serve', '--json'], {
      env: { ...env, PARLEY_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    after(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    let exit: { code: number | null; signal: string | null } | null = null;
    child.on('exit', (code, signal) => (exit = { code, signal }));
    await waitFor('the serve banner', () => stdout.includes('\n') || exit, 60_000);
    const banner = JSON.parse(stdout) as Record<string, string>;
    const me = await fetch(`${banner.url}/api/v1/users/me`, {
      headers: {
        authorization: `Basic ${Buffer.from(`${banner.email}:${banner.api_key}`).toString('base64')}`,
      },
    });
    assert.equal(me.status, 200);
    child.kill('SIGTERM');
    assert.deepEqual(await waitFor('the exit', () => exit, 30_000), { code: 0, signal: null });
    assert.equal(stderr, '');
  },
);
