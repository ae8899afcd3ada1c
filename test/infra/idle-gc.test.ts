import assert from 'node:assert/strict';
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import {
  nextBurst,
  startIdleCollector,
  worthCollecting,
  type IdleCollector,
  type IdleCollectorOptions,
} from '../../src/infra/idle-gc.ts';

/** Short-lived objects, dropped at once: what a burst of requests leaves in the young generation. */
function makeGarbage(bytes: number): number {
  let kept = 0;
  for (let made = 0; made < bytes; made += 100) {
    const piece = { n: made, text: `piece ${made}`.padEnd(60, '.') };
    kept += piece.text.length & 1;
  }
  return kept;
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await sleep(10);
  return check();
}

/** Keep the event loop busy (every turn spinning) for ms, allocating as it goes. */
async function busyFor(ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    await new Promise<void>((resolve) =>
      setImmediate(() => {
        const spinUntil = Math.min(end, Date.now() + 5);
        while (Date.now() < spinUntil) makeGarbage(10_000);
        resolve();
      }),
    );
  }
}

/**
 * A collector that looks every 20 ms unless told otherwise and collects whatever room is left
 * (a test process's young generation is resized as V8 likes); the tests fail at once where
 * the runtime refuses.
 */
function collectorFor(
  options: Partial<IdleCollectorOptions> & { busyBelow: number; minAllocatedBytes: number },
): IdleCollector {
  const collector = startIdleCollector({
    intervalMs: 20,
    busyIntervalMs: 20,
    quietIntervalMs: 20,
    burstDecay: 0.99,
    minFreeBytes: Infinity,
    ...options,
  });
  assert.ok(collector, 'this runtime allows a collection on request');
  return collector;
}

function watchMinorCollections(): { count: () => number; stop: () => void } {
  let minor = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries() as Array<
      PerformanceEntry & { detail?: { kind?: number } }
    >) {
      if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) minor++;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return { count: () => minor, stop: () => observer.disconnect() };
}

test('idle collector: scavenges once the loop is idle and garbage has piled up, without exposing gc', async (t) => {
  const minor = watchMinorCollections();
  const collector = collectorFor({ busyBelow: 0.5, minAllocatedBytes: 64 * 1024 });
  t.after(() => {
    collector.stop();
    minor.stop();
  });
  assert.equal((globalThis as { gc?: unknown }).gc, undefined);
  makeGarbage(512 * 1024);
  assert.ok(await until(() => collector.collections >= 1, 2_000), 'an idle collection ran');
  // Performance entries are delivered on a later turn.
  assert.ok(await until(() => minor.count() >= 1, 1_000), 'V8 reported a minor collection');
});

test('idle collector: leaves a busy loop alone, and collects once it goes quiet', async (t) => {
  const collector = collectorFor({ busyBelow: 0.2, minAllocatedBytes: 64 * 1024 });
  t.after(() => collector.stop());
  await busyFor(300);
  assert.equal(collector.collections, 0);
  makeGarbage(512 * 1024);
  assert.ok(await until(() => collector.collections >= 1, 2_000), 'collected once idle');
});

test('idle collector: does not collect again until new garbage piles up', async (t) => {
  // Each check allocates a little itself (reading the heap spaces: 2-3 KB, 3 KB on Node 24),
  // which over the quiet 300 ms below comes to about 50 KB: the threshold is well above it.
  const collector = collectorFor({ busyBelow: 0.5, minAllocatedBytes: 256 * 1024 });
  t.after(() => collector.stop());
  // Objects that survive the first collection stay young until the next: they are not new
  // garbage. Small amounts, so that V8 does not collect on its own meanwhile.
  const survivors = Array.from({ length: 6_000 }, (_, i) => ({ i, text: `kept ${i}`.padEnd(60) }));
  makeGarbage(384 * 1024);
  assert.ok(await until(() => collector.collections >= 1, 2_000));
  const after = collector.collections;
  await sleep(300);
  assert.equal(collector.collections, after, 'nothing new to collect');
  makeGarbage(384 * 1024);
  assert.ok(await until(() => collector.collections > after, 2_000), 'new garbage, collected');
  assert.equal(survivors.length, 6_000);
});

test('idle collector: an idle loop is looked at less and less often, a busy one again at once', async (t) => {
  const collector = collectorFor({
    quietIntervalMs: 160,
    busyBelow: 0.2,
    minAllocatedBytes: 64 * 1024 * 1024,
  });
  t.after(() => collector.stop());
  // Quiet for a second: looks after 20, 40, 80, 160, 160, ... ms, about 8 in all (50 at 20 ms).
  await sleep(1_000);
  const quiet = collector.checks;
  assert.ok(quiet >= 4 && quiet <= 12, `${quiet} checks while quiet`);
  // Busy: within one quiet wait (160 ms) the looks come every 20 ms again.
  await busyFor(500);
  const busy = collector.checks - quiet;
  assert.ok(busy >= 10, `${busy} checks in 500 ms of work`);
  assert.equal(collector.collections, 0);
});

test("idle collector: a look's own work is not the loop's, so an idle loop reads idle at Parley's 1 %", async (t) => {
  // Parley's own thresholds: busy from 1 % of the time between looks, looks 25 ms apart after
  // a busy one. A look costs more than 1 % of 25 ms (0.25 ms) on a slow machine, so counted
  // as the loop's it made every look read busy: an idle server looked 40 times a second.
  const collector = collectorFor({
    intervalMs: 25,
    busyIntervalMs: 25,
    quietIntervalMs: 400,
    busyBelow: 0.01,
    minAllocatedBytes: 64 * 1024 * 1024,
  });
  t.after(() => collector.stop());
  // Quiet for 1.5 s: looks after 25, 50, 100, 200, 400, 400, 400 ms, 7 (60 at 25 ms).
  await sleep(1_500);
  assert.ok(collector.checks <= 20, `${collector.checks} checks while quiet`);
});

test('idle collector: a busy loop is looked at again soon, so the idle moment after it is not missed', async (t) => {
  // One look a second when idle, one every 20 ms after a busy look. Every idle look collects
  // (no minimum of garbage): a collection marks the first idle look. With a minimum, V8's own
  // scavenge in the garbage made for it now and then left too little, and nothing was collected.
  const collector = collectorFor({
    intervalMs: 1_000,
    quietIntervalMs: 1_000,
    busyBelow: 0.2,
    minAllocatedBytes: 0,
  });
  t.after(() => collector.stop());
  // The first look (at 1 s) finds the loop busy; the looks after it come every 20 ms.
  await busyFor(1_300);
  const busyChecks = collector.checks;
  assert.ok(busyChecks >= 5, `${busyChecks} checks`);
  assert.equal(collector.collections, 0);
  // The next look comes within 20 ms, not a second: long before the 600 ms below. After its
  // collection the next is a second away.
  await sleep(600);
  assert.equal(collector.collections, 1);
});

test('idle collector: stop ends the checks', async () => {
  const collector = collectorFor({ busyBelow: 0.5, minAllocatedBytes: 64 * 1024 });
  collector.stop();
  makeGarbage(512 * 1024);
  await sleep(200);
  assert.equal(collector.collections, 0);
});

test('idle collector: collects only a young generation with less room than its bursts need', () => {
  const options = { minAllocatedBytes: 1 << 20, minFreeBytes: 0 };
  const MB = 1 << 20;
  // 8 MB free of 16, after bursts of 10 MB (a fan-out to a thousand polls): collected.
  assert.equal(
    worthCollecting({ used: 8 * MB, capacity: 16 * MB }, 1 * MB, 10 * MB, options),
    true,
  );
  // 12 MB free: room for the burst, so no collection however much is new.
  assert.equal(worthCollecting({ used: 4 * MB, capacity: 16 * MB }, 0, 10 * MB, options), false);
  // A trickle of half a megabyte a look (heartbeats): left to V8 until nearly full.
  assert.equal(worthCollecting({ used: 14 * MB, capacity: 16 * MB }, 0, 0.5 * MB, options), false);
  assert.equal(worthCollecting({ used: 15.8 * MB, capacity: 16 * MB }, 0, 0.5 * MB, options), true);
  // Nearly full, but almost all of it what the last idle collection left: nothing new.
  assert.equal(
    worthCollecting({ used: 15 * MB, capacity: 16 * MB }, 14.5 * MB, 10 * MB, options),
    false,
  );
  // Room kept whatever the bursts.
  assert.equal(
    worthCollecting({ used: 2 * MB, capacity: 16 * MB }, 0, 0, {
      ...options,
      minFreeBytes: 15 * MB,
    }),
    true,
  );
});

test('idle collector: a burst is the growth between idle looks, unless it outgrew the young generation', () => {
  const MB = 1 << 20;
  // A fan-out's 7 MB after a quieter past: the new burst.
  assert.equal(nextBurst(2 * MB, 7 * MB, 16 * MB, 0.5), 7 * MB);
  // A small growth: the earlier burst, decayed, still counts.
  assert.equal(nextBurst(8 * MB, 1 * MB, 16 * MB, 0.5), 4 * MB);
  // 100 MB of setup in one busy spell: V8 collected inside it anyway, so it sets nothing.
  assert.equal(nextBurst(1 * MB, 100 * MB, 16 * MB, 0.5), 0.5 * MB);
  assert.equal(nextBurst(0, 16 * MB, 16 * MB, 0.5), 16 * MB);
});
