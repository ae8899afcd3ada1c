// A send to thousands of subscribers lets the event loop turn between its steps inside the
// transaction (actions/messages.ts, nextTurn), so that requests answered from memory are not
// held behind it; a send to a small channel runs straight through.
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { doSubscribeUsers } from '../../src/actions/channels.ts';
import { setFaultHook, withTransaction } from '../../src/actions/transaction.ts';
import { ROLE } from '../../src/lib/roles.ts';
import * as channelsStore from '../../src/store/channels.ts';
import { getRealmById } from '../../src/store/realms.ts';
import type { UserRow } from '../../src/store/schema.ts';
import * as usersStore from '../../src/store/users.ts';
import { buildTestApp, TEST_DATABASE_URL, type TestApp } from '../support/app.ts';
import { subscribersOf } from '../support/channels.ts';
import { rowsOf, sendToChannel, T0, useClock } from '../support/messages.ts';

let t: TestApp;
beforeEach(async () => {
  t = await buildTestApp();
  useClock(t);
});
afterEach(async () => {
  setFaultHook(null);
  await t.close();
});

/** This many new members subscribed to a channel: rows through the store, the subscriptions
 *  through the action in one call (creating each through the API would take minutes). */
async function addSubscribers(channelId: number, count: number): Promise<void> {
  const { settings } = (await usersStore.getUserById(t.ctx.db, t.fx.realm.id, t.fx.member.id))!;
  await withTransaction(t.ctx, t.fx.realm.id, async (work) => {
    const users: UserRow[] = [];
    for (let i = 0; i < count; i++) {
      const email = `reader${i}@parley.test`;
      users.push(
        await usersStore.insertUser(work.db, {
          realm_id: t.fx.realm.id,
          email,
          delivery_email: email,
          full_name: `Reader ${i}`,
          role: ROLE.member,
          is_active: 1,
          is_bot: 0,
          bot_type: null,
          bot_owner_id: null,
          api_key: `readerkey${String(i).padStart(23, '0')}`,
          password_hash: null,
          date_joined: T0,
          avatar_source: 'G',
          avatar_version: 1,
          settings,
        }),
      );
    }
    const realm = (await getRealmById(work.db, t.fx.realm.id))!;
    const channel = (await channelsStore.getChannel(work.db, realm.id, channelId))!;
    await doSubscribeUsers(t.ctx, work, realm, channel, users);
  });
}

/** Whether a callback queued for the next loop turn once the message row is written runs
 *  before the transaction commits. */
function watchTurns(): { turned: () => boolean | null } {
  let turned = false;
  let atCommit: boolean | null = null;
  setFaultHook((point) => {
    if (point === 'message-inserted') setImmediate(() => (turned = true));
    if (point === 'before-commit') atCommit = turned;
  });
  return { turned: () => atCommit };
}

test('a send to thousands of subscribers lets the event loop turn before it commits', async () => {
  await addSubscribers(t.fx.channels.general.id, 2100);
  const watch = watchTurns();
  const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'to everyone');
  assert.equal(watch.turned(), true);
  assert.equal(Object.keys(await rowsOf(t, id)).length, 2100 + subscribersOf(t, 'general').length);
});

test(
  'a send to a small channel runs through without yielding',
  // On PostgreSQL every statement is a round trip, so the loop turns during any transaction.
  { skip: TEST_DATABASE_URL ? 'SQLite only' : false },
  async () => {
    const watch = watchTurns();
    await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'to a few');
    assert.equal(watch.turned(), false);
  },
);
