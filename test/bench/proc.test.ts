// The bench's disturbance check: CPU that none of its own processes used, read from the
// kernel, marks a run as disturbed. A real busy process outside the bench's tree must show.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  FOREIGN_LIMIT,
  hasProc,
  processCpuSeconds,
  watchCpu,
  type CpuWindow,
} from '../../bench/lib/proc.ts';
import { sleep } from '../../bench/lib/stats.ts';

/** Longer than the test needs: it is stopped once measured. */
const SPIN_MS = 10_000;

/**
 * A node process spinning for up to SPIN_MS that is not this process's descendant: its shell
 * exits at once, so it is handed to init, as another program's load would be.
 */
function startOrphanSpinner(): number {
  const out = execFileSync(
    'sh',
    [
      '-c',
      `"$0" -e 'const end = Date.now() + ${SPIN_MS}; while (Date.now() < end);' >/dev/null 2>&1 & echo $!`,
      process.execPath,
    ],
    { encoding: 'utf8' },
  );
  return Number(out.trim());
}

function stopSpinner(pid: number): void {
  try {
    process.kill(pid);
  } catch {
    // already ended
  }
}

async function waitUntilSpinning(pid: number): Promise<void> {
  const start = processCpuSeconds(pid);
  for (let i = 0; i < 100 && processCpuSeconds(pid) - start < 0.05; i++) {
    await sleep(10);
  }
}

describe('watchCpu', { skip: hasProc ? false : 'no /proc here' }, () => {
  test("another program's busy process is foreign load, and disturbs the window", async () => {
    const pid = startOrphanSpinner();
    assert.ok(Number.isInteger(pid) && pid > 1, `spinner pid ${pid}`);
    let spun: number;
    let window: CpuWindow;
    try {
      await waitUntilSpinning(pid);
      const spun0 = processCpuSeconds(pid);
      const close = watchCpu({ bench: process.pid });
      await sleep(600);
      window = close();
      spun = processCpuSeconds(pid) - spun0;
    } finally {
      stopSpinner(pid);
    }
    assert.ok(spun > 0.1, `the spinner ran ${spun} s in the window`);
    // Other load may add to it, never take from it: ticks are 10 ms.
    assert.ok(
      window.foreign >= spun - 0.05,
      `foreign ${window.foreign} s counts the spinner's ${spun} s`,
    );
    assert.ok(window.foreignShare > FOREIGN_LIMIT, `foreign share ${window.foreignShare}`);
    assert.equal(window.disturbed, true);
  });

  test("a watched process's CPU is counted as its own", () => {
    const close = watchCpu({ bench: process.pid });
    const start = process.cpuUsage();
    let used = 0;
    while (used < 300_000) {
      const now = process.cpuUsage(start);
      used = now.user + now.system;
    }
    const window = close();
    // The kernel counts in 10 ms ticks.
    assert.ok(window.cpu.bench >= 0.28, `the bench's own cpu ${window.cpu.bench} s`);
  });
});
