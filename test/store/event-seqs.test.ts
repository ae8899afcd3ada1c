// The commit sequences a process holding queues compares with the notices it saw
// (events/queues.ts checkCommitted): read in chunks, so any number of organizations fits
// the database's limit on parameters.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventSeqsOf, nextEventSeq } from '../../src/store/realms.ts';
import { buildTestApp } from '../support/app.ts';

test('eventSeqsOf reads the sequences of the realms asked for, past one query of them', async () => {
  const t = await buildTestApp();
  try {
    const realmId = t.fx.realm.id;
    const before = (await eventSeqsOf(t.ctx.db, [realmId])).get(realmId) ?? 0;
    await nextEventSeq(t.ctx.db, realmId);
    await nextEventSeq(t.ctx.db, realmId);
    // 2,500 ids, the real one in the third query; the others have no row.
    const ids = Array.from({ length: 2_500 }, (_, i) => realmId + 1_000 + i);
    ids[2_400] = realmId;
    assert.deepEqual([...(await eventSeqsOf(t.ctx.db, ids))], [[realmId, before + 2]]);
    assert.deepEqual([...(await eventSeqsOf(t.ctx.db, []))], []);
  } finally {
    await t.close();
  }
});
