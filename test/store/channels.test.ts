// Subscriber id lists come from the database as comma-separated text (one row per channel).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseIdList } from '../../src/store/channels.ts';

test('an id list is read in ascending order', () => {
  assert.deepEqual(parseIdList('3,17,250,1000001'), [3, 17, 250, 1000001]);
  assert.deepEqual(parseIdList('42'), [42]);
  assert.deepEqual(parseIdList(''), []);
  // PostgreSQL's string_agg has no order without ORDER BY.
  assert.deepEqual(parseIdList('10,2,33,1'), [1, 2, 10, 33]);
});
