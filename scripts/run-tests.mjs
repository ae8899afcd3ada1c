#!/usr/bin/env node
// Runs every test/**/*.test.ts through node's test runner with tsx. Node 20 has no glob
// support in --test, so the files are found here. Arguments narrow the run to files whose
// path contains one of them (npm run test:only -- events).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';

const filters = process.argv.slice(2);
const files = readdirSync('test', { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => join('test', f))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
const concurrency = process.env.PARLEY_TEST_CONCURRENCY || '2';
const child = spawn(
  process.execPath,
  [
    '--import',
    './scripts/preload-deps.mjs',
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${concurrency}`,
    ...files,
  ],
  {
    stdio: 'inherit',
  },
);
child.on('exit', (code, signal) => process.exit(signal ? 1 : (code ?? 1)));
