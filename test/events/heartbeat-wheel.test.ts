// The heartbeat wheel on its own, with mocked timers and a clock the test moves: when an
// item is beaten, which items come together, and that removing the last item or stopping
// leaves no timer to fire; and the phases new queues get. The clock is the mocked Date, moved
// with the timers.
import { afterEach, beforeEach, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { evenPhases, HeartbeatWheel, heartbeatTiming } from '../../src/events/heartbeats.ts';

// A 1 s interval without jitter: beats fall 1,000 - 900 to 1,000 ms after an add, on 2 ms ticks.
const CONFIG = { heartbeatMinMs: 1000, heartbeatJitterMs: 0 };
let beats: Array<{ at: number; items: string[] }> = [];
/** The tick each item is parked at, as the wheel's owner keeps it (queues.ts: each poll's). */
let parked = new Map<string, number>();

function wheel(): HeartbeatWheel<string> {
  return new HeartbeatWheel<string>(
    CONFIG,
    () => Date.now(),
    (due) => {
      beats.push({ at: Date.now(), items: [...due].sort() });
      // Beaten is answered: no longer parked.
      for (const item of due) parked.delete(item);
    },
    (item) => parked.get(item),
  );
}

/** Park an item as the owner does: the wheel gives its tick, which the owner keeps. */
function park(w: HeartbeatWheel<string>, item: string, phaseMs: number): number {
  const tick = w.add(item, phaseMs);
  parked.set(item, tick);
  return tick;
}

/** The item's poll is answered or gone. */
function unpark(w: HeartbeatWheel<string>, item: string, tick: number): void {
  parked.delete(item);
  w.remove(tick);
}

/** Move the mocked clock a millisecond at a time, so each timer runs at its own time. */
function advance(ms: number): void {
  for (let i = 0; i < ms; i++) mock.timers.tick(1);
}

beforeEach(() => {
  mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 100_000 });
  beats = [];
  parked = new Map();
});
afterEach(() => mock.timers.reset());

test('the timing: interval + jitter/2, or less when a tenth of the interval exceeds half the jitter; about 300 ticks to a period', () => {
  assert.deepEqual(heartbeatTiming(CONFIG), { latestMs: 1000, periodMs: 900, tickMs: 2 });
  // Without jitter the soonest beat is a tenth of the interval after the add: 900 ms above.
  // By default the reference server's mean of 45–55 s. 50,000 / 300 is 166 ms: the tick is
  // the longest a second holds a whole number of.
  assert.deepEqual(heartbeatTiming({ heartbeatMinMs: 45_000, heartbeatJitterMs: 10_000 }), {
    latestMs: 55_000,
    periodMs: 50_000,
    tickMs: 125,
  });
  assert.equal(heartbeatTiming({ heartbeatMinMs: 5000, heartbeatJitterMs: 0 }).tickMs, 10);
  assert.equal(heartbeatTiming({ heartbeatMinMs: 600_000, heartbeatJitterMs: 0 }).tickMs, 1000);
  assert.equal(heartbeatTiming({ heartbeatMinMs: 30, heartbeatJitterMs: 0 }).tickMs, 1);
});

test('an item is beaten at the latest slot of its phase no later than the interval after its add', () => {
  const w = wheel();
  assert.equal(w.periodMs, 900);
  // Phase 0: slots at multiples of 900 ms; the latest one up to 100,000 + 998 is 100,800.
  // Ticks count from 99,000, the last multiple of period × tick (1,800 ms) before the wheel's
  // start: 100,800 is 900 ticks of 2 ms after it.
  const tick = park(w, 'a', 0);
  assert.equal(tick, 900);
  advance(799);
  assert.deepEqual(beats, []);
  advance(1);
  assert.deepEqual(beats, [{ at: 100_800, items: ['a'] }]);
});

test("on today's clock, ticks stay small integers and slots fall where the phase puts them", () => {
  // 2026-11-26 00:00:00 UTC, and the default interval and jitter (125 ms ticks, 50 s period).
  mock.timers.setTime(1_764_115_200_000);
  const due: number[] = [];
  const parkedAt = new Map<string, number>();
  const w = new HeartbeatWheel<string>(
    { heartbeatMinMs: 45_000, heartbeatJitterMs: 10_000 },
    () => Date.now(),
    () => due.push(Date.now()),
    (item) => parkedAt.get(item),
  );
  const tick = w.add('a', 20_000);
  parkedAt.set('a', tick);
  // Counted from 1970 the tick would be 1.4e10, beyond V8's small integers (2^30).
  assert.ok(Number.isInteger(tick) && tick >= 0 && tick < 2 ** 30, String(tick));
  // The latest time at phase 20 s of the 50 s period (counted from 1970, as before) no later
  // than 55 s less a tick after the add: 20 s after it, the clock being a multiple of 50 s.
  advance(55_000);
  assert.deepEqual(due, [1_764_115_200_000 + 20_000]);
  w.stop();
});

test('items added together on different phases are beaten apart; on the same slot, together', () => {
  const w = wheel();
  park(w, 'a', 0);
  park(w, 'b', 0);
  park(w, 'c', 450);
  advance(1000);
  assert.deepEqual(beats, [
    { at: 100_350, items: ['c'] },
    { at: 100_800, items: ['a', 'b'] },
  ]);
  for (const { at } of beats) {
    assert.ok(at - 100_000 >= 1000 - 900 && at - 100_000 <= 1000, `beat ${at} out of bounds`);
  }
});

test('a removed item is not beaten; removing the last one leaves no timer to fire', () => {
  const w = wheel();
  const a = park(w, 'a', 0);
  const b = park(w, 'b', 450);
  unpark(w, 'a', a);
  advance(1000);
  assert.deepEqual(beats, [{ at: 100_350, items: ['b'] }]);
  beats = [];
  const c = park(w, 'c', 0);
  const cleared = mock.method(globalThis, 'clearTimeout');
  unpark(w, 'c', c);
  assert.equal(cleared.mock.callCount(), 1);
  // An item whose slot already fired is in none: removing it again is harmless.
  w.remove(b);
  advance(2000);
  assert.deepEqual(beats, []);
});

test('an item taken out and put back in its slot is beaten once; an emptied slot is not beaten', () => {
  const w = wheel();
  // A queue polling again after each event leaves its slot and comes back to the same one.
  for (let i = 0; i < 3; i++) unpark(w, 'a', park(w, 'a', 0));
  assert.equal(park(w, 'a', 0), 900);
  assert.equal(w.add('a', 0), 900);
  unpark(w, 'b', park(w, 'b', 450));
  advance(1000);
  assert.deepEqual(beats, [{ at: 100_800, items: ['a'] }]);
  // Its slot fired: the item is in none. The wheel counted each item once (an item put back
  // in the set it was never taken out of, and one added twice, included), so removing the
  // only one added since leaves it empty, and unarmed.
  w.remove(900);
  const c = park(w, 'c', 0);
  const cleared = mock.method(globalThis, 'clearTimeout');
  unpark(w, 'c', c);
  assert.equal(cleared.mock.callCount(), 1);
  beats = [];
  advance(2000);
  assert.deepEqual(beats, []);
});

test('an item removed and parked again in a later slot is beaten there, not at its old slot', () => {
  const w = wheel();
  assert.equal(park(w, 'a', 0), 900);
  assert.equal(park(w, 'b', 0), 900);
  // 750 ms on, the latest slot of phase 0 within the interval is the next one, at 101,700.
  advance(750);
  unpark(w, 'a', 900);
  assert.equal(park(w, 'a', 0), 1350);
  advance(1000);
  // 'a' is still in the old slot's set, parked elsewhere: that slot beats 'b' alone.
  assert.deepEqual(beats, [
    { at: 100_800, items: ['b'] },
    { at: 101_700, items: ['a'] },
  ]);
});

test('after stop nothing is beaten, and adds arm no timer', () => {
  const w = wheel();
  park(w, 'a', 0);
  w.stop();
  park(w, 'b', 0);
  advance(5000);
  assert.deepEqual(beats, []);
});

test('new queues get phases spread evenly over the period, from any start', () => {
  // 19,000 queues over 50 windows of 1 s: 380 each. Random phases miss by about 50 in the
  // fullest window; these by at most 3, and the same holds for the first few hundred.
  for (const start of [0, 0.25, 0.999]) {
    const next = evenPhases(start);
    const counts = new Array<number>(50).fill(0);
    for (let i = 1; i <= 19_000; i++) {
      const phase = next(50_000);
      assert.ok(Number.isInteger(phase) && phase >= 0 && phase < 50_000, `phase ${phase}`);
      counts[Math.floor(phase / 1000)]++;
      if (i === 400)
        assert.ok(
          counts.every((c) => Math.abs(c - 8) <= 3),
          `${counts}`,
        );
    }
    assert.ok(
      counts.every((c) => Math.abs(c - 380) <= 3),
      `windows ${Math.min(...counts)}-${Math.max(...counts)}`,
    );
  }
});
