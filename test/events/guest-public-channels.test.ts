// A guest reads only the channels they are in. A queue with a narrow or all_public_streams
// also hears of every public channel's messages (the reference server's realm-wide
// listeners); a guest's queue must not, nor one whose user was made a guest after it was
// registered.
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { setRegisterHook } from '../../src/actions/events.ts';
import { ROLE } from '../../src/lib/roles.ts';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { SUCCESS } from '../support/client.ts';
import { drainEvents, registerQueue, type Registered } from '../support/events.ts';
import type { FixtureUser } from '../support/fixture.ts';

let t: TestApp;
beforeEach(async () => {
  t = await buildTestApp();
});
afterEach(async () => {
  await t.close();
});

/** design is public, and neither member2 nor the guest is in it. */
const NARROW = { event_types: ['message'], narrow: [['channel', 'design']] };

async function sendToDesign(content: string): Promise<number> {
  const res = await t
    .as(t.fx.admin)
    .post('/messages', { type: 'stream', to: 'design', topic: 'plans', content });
  assert.equal(res.status, 200, res.text);
  return res.body.id as number;
}

/** The ids of the messages the queue was given. */
async function heardOf(who: FixtureUser, queue: Registered): Promise<number[]> {
  const events = await drainEvents(t.ctx, t.as(who), queue.queue_id, queue.last_event_id);
  return events.filter((e) => e.type === 'message').map((e) => (e.message as { id: number }).id);
}

async function changeRole(who: FixtureUser, role: number): Promise<void> {
  const res = await t.as(t.fx.owner).patch(`/users/${who.id}`, { role });
  assert.deepEqual(res.body, SUCCESS);
}

test("a guest's narrowed queue hears nothing of a public channel they are not in", async () => {
  const guestQueue = await registerQueue(t.as(t.fx.guest), NARROW);
  const memberQueue = await registerQueue(t.as(t.fx.member2), NARROW);
  const id = await sendToDesign('for the team');
  assert.deepEqual(await heardOf(t.fx.guest, guestQueue), []);
  assert.deepEqual(await heardOf(t.fx.member2, memberQueue), [id]);
});

test('a member made a guest stops hearing of public channels; made a member again, hears again', async () => {
  const who = t.fx.member2;
  const narrowed = await registerQueue(t.as(who), NARROW);
  const everything = await registerQueue(t.as(who), {
    event_types: ['message'],
    all_public_streams: true,
  });
  const before = await sendToDesign('before');
  await changeRole(who, ROLE.guest);
  await sendToDesign('while a guest');
  await changeRole(who, ROLE.member);
  const after = await sendToDesign('after');
  assert.deepEqual(await heardOf(who, narrowed), [before, after]);
  assert.deepEqual(await heardOf(who, everything), [before, after]);
});

test('a guest made a member hears of public channels through a queue registered as a guest', async () => {
  const who = t.fx.guest;
  const narrowed = await registerQueue(t.as(who), NARROW);
  await sendToDesign('while a guest');
  await changeRole(who, ROLE.member);
  const after = await sendToDesign('as a member');
  assert.deepEqual(await heardOf(who, narrowed), [after]);
});

test('a register that reads its user as a guest makes a queue that hears of no other channel', async () => {
  const who = t.fx.member2;
  // Made a guest after authentication, by a change whose notice came before the queue was
  // there to get it: only the snapshot's reading of the user can tell.
  setRegisterHook(async (point) => {
    if (point !== 'queue-created') return;
    await t.ctx.db
      .updateTable('users')
      .set({ role: ROLE.guest })
      .where('id', '=', who.id)
      .execute();
  });
  let narrowed: Registered;
  try {
    narrowed = await registerQueue(t.as(who), NARROW);
  } finally {
    setRegisterHook(null);
  }
  await sendToDesign('to members');
  assert.deepEqual(await heardOf(who, narrowed), []);
});
