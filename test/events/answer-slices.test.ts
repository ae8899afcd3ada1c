// AnswerSlices answers ready polls in macrotasks bounded in time, in the order they became
// ready: an item is answered once for each time it is made ready, whether its flush took every
// item or stopped on its time limit, and an item deleted before its turn is not answered.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import { AnswerSlices } from '../../src/events/answer-slices.ts';

/** Slices over strings with a clock that advances by stepMs at each answer. */
function slices(stepMs: number, declined: Set<string> = new Set()) {
  let now = 0;
  const answered: string[] = [];
  const ready = new AnswerSlices<string>(
    (item) => {
      now += stepMs;
      if (declined.has(item)) return false;
      answered.push(item);
      return true;
    },
    () => false,
    () => now,
  );
  return { ready, answered };
}

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await nextMacrotask();
}

test('a flush that takes every item empties the set: the same items made ready again are answered again', async () => {
  const { ready, answered } = slices(0.01);
  for (const item of ['a', 'b', 'c', 'b']) ready.add(item);
  await settle();
  assert.deepEqual(answered, ['a', 'b', 'c']);
  for (const item of ['c', 'a']) ready.add(item);
  await settle();
  assert.deepEqual(answered, ['a', 'b', 'c', 'c', 'a']);
});

test('a flush stopped by its time limit leaves the rest, in order, for the next; none is answered twice', async () => {
  // 2 ms an answer: a 5 ms slice answers three (the third passes the limit).
  const { ready, answered } = slices(2);
  for (const item of ['a', 'b', 'c', 'd', 'e', 'f', 'g']) ready.add(item);
  await nextMacrotask();
  assert.deepEqual(answered, ['a', 'b', 'c']);
  // Made ready again between slices: an answered one comes after the rest, a waiting one keeps its place.
  ready.add('a');
  ready.add('e');
  ready.add('h');
  ready.delete('f');
  await settle();
  assert.deepEqual(answered, ['a', 'b', 'c', 'd', 'e', 'g', 'a', 'h']);
  ready.add('b');
  await settle();
  assert.deepEqual(answered.slice(-1), ['b']);
});

test('the newest item deleted before the flush: the others are answered, and later ones still are', async () => {
  const declined = new Set<string>(['x']);
  const { ready, answered } = slices(0.01, declined);
  for (const item of ['a', 'x', 'b', 'c']) ready.add(item);
  ready.delete('c');
  await settle();
  assert.deepEqual(answered, ['a', 'b']);
  for (const item of ['c', 'x', 'a']) ready.add(item);
  await settle();
  assert.deepEqual(answered, ['a', 'b', 'c', 'a']);
});

test('an item that goes away while it is answered, as a flush stops: the items after it are still answered', async () => {
  let now = 0;
  const answered: string[] = [];
  const ready: AnswerSlices<string> = new AnswerSlices<string>(
    (item) => {
      now += 2;
      // As EventQueues does: an item with nothing left to answer is turned down.
      if (answered.includes(item)) return false;
      answered.push(item);
      if (item === 'c') ready.delete('c');
      return true;
    },
    () => false,
    () => now,
  );
  for (const item of ['a', 'b', 'c', 'd', 'e']) ready.add(item);
  await settle();
  assert.deepEqual(answered, ['a', 'b', 'c', 'd', 'e']);
});
