// The bench's summary of a figure: the median and min–max of its floor/Parley pairs, with
// pairs disturbed by other load, or from a run that completed nothing, left out and counted.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  median,
  pairedValue,
  passUnlessDisturbed,
  percentile,
  round,
  summarise,
} from '../../bench/lib/stats.ts';

describe('percentile and median', () => {
  test('percentile takes the value at or above the share, whatever the order', () => {
    const values = [50, 10, 40, 20, 30, 60, 70, 80, 90, 100];
    assert.equal(percentile(values, 50), 50);
    assert.equal(percentile(values, 99), 100);
    assert.equal(percentile(values, 100), 100);
    assert.equal(percentile(values, 0), 10);
    assert.equal(percentile(values, 11), 20);
    assert.deepEqual(values, [50, 10, 40, 20, 30, 60, 70, 80, 90, 100], 'input left as it was');
  });

  test('median of an odd and an even count', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.equal(median([7]), 7);
  });

  test('no values: NaN, never a number that reads as measured', () => {
    assert.ok(Number.isNaN(percentile([], 99)));
    assert.ok(Number.isNaN(median([])));
  });
});

describe('summarise', () => {
  test('the median and range of the undisturbed pairs; disturbed ones counted as discarded', () => {
    assert.deepEqual(
      summarise([
        { ratio: 1.2, disturbed: false },
        { ratio: 9, disturbed: true },
        { ratio: 1.0, disturbed: false },
        { ratio: 1.4, disturbed: false },
        { ratio: 0.1, disturbed: true },
      ]),
      { median: 1.2, min: 1.0, max: 1.4, pairs: 3, discarded: 2 },
    );
  });

  test('a pair whose run completed nothing (0, Infinity, NaN) is discarded like a disturbed one', () => {
    assert.deepEqual(
      summarise([
        { ratio: 0, disturbed: false },
        { ratio: Infinity, disturbed: false },
        { ratio: NaN, disturbed: false },
        { ratio: 1.1, disturbed: false },
        { ratio: 0.9, disturbed: false },
      ]),
      { median: 1, min: 0.9, max: 1.1, pairs: 2, discarded: 3 },
    );
  });

  test('every pair disturbed: all of them summarised, and pairs 0 says so', () => {
    assert.deepEqual(
      summarise([
        { ratio: 2, disturbed: true },
        { ratio: 1, disturbed: true },
        { ratio: 3, disturbed: true },
      ]),
      { median: 2, min: 1, max: 3, pairs: 0, discarded: 3 },
    );
  });
});

describe('pairedValue', () => {
  const atMost = (limit: number) => (m: number) => m <= limit;

  test('a median within the target passes; rounded to three places', () => {
    assert.deepEqual(
      pairedValue(
        [
          { ratio: 1.23456, disturbed: false },
          { ratio: 1.1, disturbed: false },
          { ratio: 1.6, disturbed: false },
        ],
        atMost(1.5),
      ),
      { value: 1.235, min: 1.1, max: 1.6, pass: true, pairs: 3, discarded: 0 },
    );
  });

  test('a median past the target misses, whatever the best pair read', () => {
    assert.deepEqual(
      pairedValue(
        [
          { ratio: 1.6, disturbed: false },
          { ratio: 1.2, disturbed: false },
          { ratio: 1.7, disturbed: false },
        ],
        atMost(1.5),
      ),
      { value: 1.6, min: 1.2, max: 1.7, pass: false, pairs: 3, discarded: 0 },
    );
  });

  test('every pair disturbed: the median is shown but neither meets nor misses (pass null)', () => {
    assert.deepEqual(
      pairedValue(
        [
          { ratio: 0.66, disturbed: true },
          { ratio: 0.7, disturbed: true },
        ],
        atMost(1.5),
      ),
      { value: 0.68, min: 0.66, max: 0.7, pass: null, pairs: 0, discarded: 2 },
    );
  });
});

describe('passUnlessDisturbed and round', () => {
  test('a disturbed single run neither passes nor fails', () => {
    assert.equal(passUnlessDisturbed(false, true), true);
    assert.equal(passUnlessDisturbed(false, false), false);
    assert.equal(passUnlessDisturbed(true, true), null);
    assert.equal(passUnlessDisturbed(0, false), false);
    assert.equal(passUnlessDisturbed(2, true), null);
  });

  test('round keeps non-finite values as they are', () => {
    assert.equal(round(1.23456), 1.235);
    assert.equal(round(1.23456, 1), 1.2);
    assert.equal(round(Infinity), Infinity);
    assert.ok(Number.isNaN(round(NaN)));
  });
});
