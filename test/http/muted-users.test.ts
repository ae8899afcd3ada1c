// POST and DELETE /users/me/muted_users/{id}: the errors, bots and deactivated users,
// existing messages marked read on mute, the muted_users event and register section.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FLAG_BITS } from '../../src/lib/message-flags.ts';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { as, assertUnauthorized, error, EVERY_CALLER } from '../support/bots.ts';
import { systemGroups } from '../support/channels.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { drainEvents, registerQueue, withoutIds } from '../support/events.ts';
import { captureNotices, type NoticeLog } from '../support/notices.ts';
import {
  addUser,
  rowsOf,
  sendDirect,
  sendToChannel,
  setRealmSetting,
  T0,
  useClock,
} from '../support/messages.ts';

let t: TestApp;
let log: NoticeLog;
let setClock: (s: number) => void;
beforeEach(async () => {
  t = await buildTestApp();
  setClock = useClock(t);
  log = captureNotices(t);
});
afterEach(async () => {
  await t.close();
});

const ok = { result: 'success', msg: '' };
const mute = (who: FixtureUser, id: number) => t.as(who).post(`/users/me/muted_users/${id}`);
const unmute = (who: FixtureUser, id: number) => t.as(who).delete(`/users/me/muted_users/${id}`);
const mutedEvent = (who: FixtureUser, list: Array<{ id: number; timestamp: number }>) => ({
  event: { type: 'muted_users', muted_users: list },
  users: [who.id],
});

describe('muted users', () => {
  test('mute and unmute: the whole list with times, to the muter only', async () => {
    assert.deepEqual((await mute(t.fx.member, t.fx.member2.id)).body, ok);
    assert.deepEqual(await log.take(), [
      mutedEvent(t.fx.member, [{ id: t.fx.member2.id, timestamp: T0 }]),
    ]);
    setClock(T0 + 60);
    // Bots and deactivated users can be muted.
    assert.deepEqual((await mute(t.fx.member, t.fx.bot.id)).body, ok);
    assert.deepEqual((await mute(t.fx.member, t.fx.deactivated.id)).body, ok);
    const all = [
      { id: t.fx.member2.id, timestamp: T0 },
      { id: t.fx.bot.id, timestamp: T0 + 60 },
      { id: t.fx.deactivated.id, timestamp: T0 + 60 },
    ].sort((a, b) => a.timestamp - b.timestamp || a.id - b.id);
    assert.deepEqual(await log.take(), [
      mutedEvent(t.fx.member, all.slice(0, 2)),
      mutedEvent(t.fx.member, all),
    ]);
    assert.deepEqual((await unmute(t.fx.member, t.fx.member2.id)).body, ok);
    assert.deepEqual(await log.take(), [mutedEvent(t.fx.member, all.slice(1))]);
    // Muting is per user.
    assert.deepEqual((await unmute(t.fx.member2, t.fx.bot.id)).body, {
      ...error('User is not muted'),
    });
  });

  test('muting marks the muted user’s existing messages read for the muter only', async () => {
    const channelMsg = await sendToChannel(t, t.fx.member2, t.fx.channels.general, 't', 'hi');
    const dm = await sendDirect(t, t.fx.member2, [t.fx.member], 'psst');
    const other = await sendToChannel(t, t.fx.owner, t.fx.channels.general, 't', 'hello');
    await t.as(t.fx.member).post('/messages/flags', {
      messages: [dm],
      op: 'add',
      flag: 'read',
    });
    await log.take();
    assert.deepEqual((await mute(t.fx.member, t.fx.member2.id)).body, ok);
    assert.deepEqual(await log.take(), [
      {
        event: {
          type: 'update_message_flags',
          op: 'add',
          operation: 'add',
          flag: 'read',
          messages: [channelMsg],
          all: false,
        },
        users: [t.fx.member.id],
      },
      mutedEvent(t.fx.member, [{ id: t.fx.member2.id, timestamp: T0 }]),
    ]);
    assert.equal((await rowsOf(t, channelMsg))[t.fx.member.id] & FLAG_BITS.read, FLAG_BITS.read);
    assert.equal((await rowsOf(t, channelMsg))[t.fx.owner.id] & FLAG_BITS.read, 0);
    assert.equal((await rowsOf(t, other))[t.fx.member.id] & FLAG_BITS.read, 0);
    // Nothing unread from them: no flags event.
    await unmute(t.fx.member, t.fx.member2.id);
    await log.take();
    await mute(t.fx.member, t.fx.member2.id);
    assert.deepEqual(await log.take(), [
      mutedEvent(t.fx.member, [{ id: t.fx.member2.id, timestamp: T0 }]),
    ]);
  });

  test('new messages from a muted sender arrive read for the muter only, until unmuted', async () => {
    await mute(t.fx.member, t.fx.member2.id);
    await log.take();
    const channelMsg = await sendToChannel(t, t.fx.member2, t.fx.channels.general, 't', 'hi');
    const dm = await sendDirect(t, t.fx.member2, [t.fx.member], 'psst');
    const read = async (id: number, who: FixtureUser) =>
      ((await rowsOf(t, id))[who.id] & FLAG_BITS.read) === FLAG_BITS.read;
    assert.equal(await read(channelMsg, t.fx.member), true);
    assert.equal(await read(channelMsg, t.fx.owner), false);
    assert.equal(await read(dm, t.fx.member), true);
    await unmute(t.fx.member, t.fx.member2.id);
    const later = await sendDirect(t, t.fx.member2, [t.fx.member], 'again');
    assert.equal(await read(later, t.fx.member), false);
  });

  test('errors', async () => {
    const cases: Array<[() => ReturnType<typeof mute>, number, Record<string, unknown>]> = [
      [() => mute(t.fx.member, t.fx.member.id), 400, error('Cannot mute self')],
      [() => mute(t.fx.member, 999999), 400, error('No such user')],
      [() => unmute(t.fx.member, 999999), 400, error('No such user')],
      [() => mute(t.fx.member, t.fx.otherOwner.id), 400, error('No such user')],
      [() => unmute(t.fx.member, t.fx.member2.id), 400, error('User is not muted')],
      [() => unmute(t.fx.member, t.fx.member.id), 400, error('User is not muted')],
      [
        () => t.as(t.fx.member).post('/users/me/muted_users/abc'),
        400,
        {
          result: 'error',
          msg: 'muted_user_id is not an integer',
          code: 'BAD_REQUEST',
        },
      ],
    ];
    for (const [call, status, body] of cases) {
      const res = await call();
      assert.deepEqual({ status: res.status, body: res.body }, { status, body });
    }
    await mute(t.fx.member, t.fx.member2.id);
    assert.deepEqual(
      { status: (await mute(t.fx.member, t.fx.member2.id)).status },
      { status: 400 },
    );
    assert.deepEqual((await mute(t.fx.member, t.fx.member2.id)).body, error('User already muted'));
  });

  test('a limited guest cannot mute users they cannot access', async () => {
    const groups = await systemGroups(t);
    await setRealmSetting(t, 'can_access_all_users_group', groups['role:members']);
    const stranger = await addUser(t, 'Sam Stranger');
    await log.take();
    assert.deepEqual((await mute(t.fx.guest, stranger.id)).body, error('No such user'));
    assert.deepEqual((await unmute(t.fx.guest, stranger.id)).body, error('No such user'));
    assert.deepEqual((await mute(t.fx.guest, t.fx.bot.id)).body, ok);
    assert.deepEqual(await log.take(), [
      mutedEvent(t.fx.guest, [{ id: t.fx.bot.id, timestamp: T0 }]),
    ]);
  });

  test('the register section, and events on a queue', async () => {
    await mute(t.fx.member, t.fx.member2.id);
    const client = t.as(t.fx.member);
    const q = await registerQueue(client, { fetch_event_types: ['muted_users'] });
    assert.deepEqual(q.muted_users, [{ id: t.fx.member2.id, timestamp: T0 }]);
    assert.ok(!('alert_words' in q));
    await unmute(t.fx.member, t.fx.member2.id);
    assert.deepEqual(withoutIds(await drainEvents(t.ctx, client, q.queue_id, -1)), [
      { type: 'muted_users', muted_users: [] },
    ]);
    const fresh = await registerQueue(t.as(t.fx.member2), {});
    assert.deepEqual(fresh.muted_users, []);
  });

  for (const who of EVERY_CALLER) {
    test(`${who}: mutes and unmutes for themselves`, async () => {
      const client = as(t, who);
      const target = t.fx.member2;
      const muted = await client.post(`/users/me/muted_users/${target.id}`);
      const unmuted = await client.delete(`/users/me/muted_users/${target.id}`);
      if (assertUnauthorized(who, muted)) {
        assert.ok(assertUnauthorized(who, unmuted));
        assert.deepEqual(await log.take(), []);
        return;
      }
      const user = t.fx[who as Exclude<typeof who, 'badKey' | 'noAuth'>];
      assert.deepEqual(muted.body, ok);
      assert.deepEqual(unmuted.body, ok);
      assert.deepEqual(await log.take(), [
        mutedEvent(user, [{ id: target.id, timestamp: T0 }]),
        mutedEvent(user, []),
      ]);
    });
  }
});
