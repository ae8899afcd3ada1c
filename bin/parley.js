#!/usr/bin/env node
// Runs the built CLI when present; otherwise the TypeScript source through tsx,
// so `npx parley` works on a fresh clone without a build step.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, 'dist', 'cli.js');
if (existsSync(built)) {
  await import(pathToFileURL(built).href);
} else {
  await import(pathToFileURL(join(root, 'scripts', 'preload-deps.mjs')).href);
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(join(root, 'src', 'cli.ts')).href);
}
