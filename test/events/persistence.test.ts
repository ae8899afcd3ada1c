// Queues survive a graceful restart: one server saves them, the next one (on the same
// database) restores them, and each restored queue gets a restart event.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeSavedQueues } from '../../src/events/saved-queues.ts';
import { SERVER_GENERATION, SVC_FEATURE_LEVEL, SVC_VERSION } from '../../src/version.ts';
import { buildTestApp } from '../support/app.ts';
import { drainEvents, getEvents, registerQueue, withoutIds } from '../support/events.ts';

test('restored queues keep their ids, pending events and acknowledgements', async () => {
  const file = join(await mkdtemp(join(tmpdir(), 'parley-restart-')), 'event-queues.json');
  const first = await buildTestApp();
  let second: Awaited<ReturnType<typeof buildTestApp>> | null = null;
  try {
    const member = first.as(first.fx.member);
    const { queue_id } = await registerQueue(member, { event_types: ['user_settings', 'restart'] });
    for (const value of [true, false]) {
      assert.equal((await member.patch('/settings', { enter_sends: value })).status, 200);
    }
    assert.equal((await drainEvents(first.ctx, member, queue_id, -1)).length, 2);
    await getEvents(member, queue_id, 0, { dontBlock: true });
    await first.ctx.queues.shutdown();
    await first.ctx.queues.saveTo(file);

    second = await buildTestApp({ shareStoreWith: first });
    assert.equal(await second.ctx.queues.restoreFrom(file), 1);
    const again = second.as(second.fx.member);
    const events = await getEvents(again, queue_id, 0, { dontBlock: true });
    assert.deepEqual(events, [
      { type: 'user_settings', op: 'update', property: 'enter_sends', value: false, id: 1 },
      {
        type: 'restart',
        svc_version: SVC_VERSION,
        svc_merge_base: SVC_VERSION,
        svc_feature_level: SVC_FEATURE_LEVEL,
        zulip_version: SVC_VERSION,
        zulip_merge_base: SVC_VERSION,
        zulip_feature_level: SVC_FEATURE_LEVEL,
        server_generation: SERVER_GENERATION,
        id: 2,
      },
    ]);
    // The acknowledgement made before the restart still stands.
    const stale = await again.get('/events', { queue_id, last_event_id: -1, dont_block: true });
    assert.equal(stale.status, 400);
    assert.equal(stale.body.msg, 'An event newer than -1 has already been pruned!');
    // New events reach the restored queue.
    assert.equal((await again.patch('/settings', { enter_sends: true })).status, 200);
    assert.deepEqual(withoutIds(await drainEvents(second.ctx, again, queue_id, 2)), [
      { type: 'user_settings', op: 'update', property: 'enter_sends', value: true },
    ]);
  } finally {
    await second?.close();
    await first.close();
  }
});

test("a guest's restored narrowed queue still hears nothing of channels they are not in", async () => {
  const file = join(await mkdtemp(join(tmpdir(), 'parley-restart-')), 'event-queues.json');
  const first = await buildTestApp();
  let second: Awaited<ReturnType<typeof buildTestApp>> | null = null;
  try {
    const narrow = { event_types: ['message'], narrow: [['channel', 'design']] };
    const guest = await registerQueue(first.as(first.fx.guest), narrow);
    const member = await registerQueue(first.as(first.fx.member2), narrow);
    await first.ctx.queues.shutdown();
    await first.ctx.queues.saveTo(file);

    second = await buildTestApp({ shareStoreWith: first });
    assert.equal(await second.ctx.queues.restoreFrom(file), 2);
    const sent = await second
      .as(second.fx.admin)
      .post('/messages', { type: 'stream', to: 'design', topic: 'plans', content: 'hi' });
    assert.equal(sent.status, 200, sent.text);
    const heard = async (who: typeof first.fx.guest, queueId: string) =>
      (await drainEvents(second!.ctx, second!.as(who), queueId, -1))
        .filter((e) => e.type === 'message')
        .map((e) => (e.message as { id: number }).id);
    assert.deepEqual(await heard(second.fx.guest, guest.queue_id), []);
    assert.deepEqual(await heard(second.fx.member2, member.queue_id), [sent.body.id]);
  } finally {
    await second?.close();
    await first.close();
  }
});

test('queues that missed changes committed while the server was stopped are not restored', async () => {
  const file = join(await mkdtemp(join(tmpdir(), 'parley-restart-')), 'event-queues.json');
  const first = await buildTestApp();
  let second: Awaited<ReturnType<typeof buildTestApp>> | null = null;
  try {
    const { queue_id } = await registerQueue(first.as(first.fx.member), {
      event_types: ['realm_user'],
    });
    const otherRealm = await registerQueue(
      first.as({ ...first.fx.otherOwner, host: 'other.parley.test' }),
      { event_types: ['realm_user', 'restart'] },
    );
    await first.ctx.queues.shutdown();
    await first.ctx.queues.saveTo(file);

    // The next process starts; before it restores, another writer changes the organization.
    second = await buildTestApp({ shareStoreWith: first });
    const rename = await second.as(second.fx.admin).patch('/settings', { full_name: 'Meanwhile' });
    assert.equal(rename.status, 200);
    assert.equal(await second.ctx.queues.restoreFrom(file), 1);
    const gone = await second
      .as(second.fx.member)
      .get('/events', { queue_id, last_event_id: -1, dont_block: true });
    assert.equal(gone.status, 400);
    assert.equal(gone.body.code, 'BAD_EVENT_QUEUE_ID');
    // The other organization changed nothing: its queue is back.
    const kept = await second
      .as({ ...second.fx.otherOwner, host: 'other.parley.test' })
      .get('/events', { queue_id: otherRealm.queue_id, last_event_id: -1, dont_block: true });
    assert.equal(kept.status, 200, kept.text);
    assert.deepEqual(
      (kept.body.events as Array<{ type: string }>).map((e) => e.type),
      ['restart'],
    );
  } finally {
    await second?.close();
    await first.close();
  }
});

test('a save that fails leaves the last saved file and no temporary one', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'parley-saved-'));
  const file = join(dir, 'event-queues.json');
  await writeSavedQueues(file, { queues: [] });
  const before = await readFile(file, 'utf8');
  // The rename cannot replace a directory: the write before it has succeeded, the save fails.
  const blocked = join(dir, 'blocked.json');
  await mkdir(join(blocked, 'inside'), { recursive: true });
  await assert.rejects(writeSavedQueues(blocked, { queues: [] }));
  assert.deepEqual((await readdir(dir)).sort(), ['blocked.json', 'event-queues.json']);
  assert.equal(await readFile(file, 'utf8'), before);
  await rm(dir, { recursive: true, force: true });
});
