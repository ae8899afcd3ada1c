#!/usr/bin/env node
// The parley command (bin/parley.js runs this, built or through tsx).
import { processIo, runCli } from './cli/program.ts';

const code = await runCli(process.argv.slice(2), processIo());
process.exitCode = code;
// Whatever is still open (a Redis client retrying, say) must not keep a finished command alive.
setTimeout(() => process.exit(code), 1000).unref();
