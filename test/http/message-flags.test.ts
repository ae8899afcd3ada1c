// POST /messages/flags: editable flags, only changed ids, historical rows, the unsubscribed
// channels skipped when marking unread, message_details, and events in order. The narrow
// and bulk forms are in message-flags-bulk.test.ts.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FLAG_BITS } from '../../src/lib/message-flags.ts';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { as, assertUnauthorized, EVERY_CALLER } from '../support/bots.ts';
import { SUCCESS, type Credentials } from '../support/client.ts';
import { drainEvents, registerQueue, withoutIds } from '../support/events.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { flagBits, flagEvent } from '../support/flags.ts';
import { captureNotices, type NoticeLog } from '../support/notices.ts';
import { addUser, assertError, sendDirect, sendToChannel, useClock } from '../support/messages.ts';

let t: TestApp;
let log: NoticeLog;
beforeEach(async () => {
  t = await buildTestApp();
  useClock(t);
  log = captureNotices(t);
});
afterEach(async () => {
  await t.close();
});

const INVALID_MESSAGE = 'Invalid message(s)';
const READ = FLAG_BITS.read;
const HISTORICAL = FLAG_BITS.historical;

const setFlags = (who: Credentials | null, messages: number[], op: string, flag: string) =>
  t.as(who).post('/messages/flags', { messages, op, flag });

const bitsOf = (who: FixtureUser, id: number) => flagBits(t, who, id);

async function muteChannel(who: FixtureUser, channelId: number): Promise<void> {
  await t.ctx.db
    .updateTable('subscriptions')
    .set({ is_muted: 1 })
    .where('user_id', '=', who.id)
    .where('channel_id', '=', channelId)
    .execute();
}

describe('POST /messages/flags', () => {
  test('star and unstar: only messages whose flag changed are listed and announced', async () => {
    const a = await sendToChannel(t, t.fx.member2, t.fx.channels.general, 't', 'a');
    const b = await sendToChannel(t, t.fx.member2, t.fx.channels.general, 't', 'b');
    await setFlags(t.fx.member, [a], 'add', 'starred');
    await log.take();
    const res = await setFlags(t.fx.member, [b, a], 'add', 'starred');
    assert.deepEqual(res.body, { ...SUCCESS, messages: [b] });
    assert.deepEqual(await log.take(), [
      { event: flagEvent('add', 'starred', [b]), users: [t.fx.member.id] },
    ]);
    // Nothing changes: no event at all.
    assert.deepEqual((await setFlags(t.fx.member, [a, b], 'add', 'starred')).body, {
      ...SUCCESS,
      messages: [],
    });
    assert.deepEqual(await log.take(), []);
    assert.deepEqual((await setFlags(t.fx.member, [a, b], 'remove', 'starred')).body, {
      ...SUCCESS,
      messages: [a, b],
    });
    assert.deepEqual(await log.take(), [
      { event: flagEvent('remove', 'starred', [a, b]), users: [t.fx.member.id] },
    ]);
    assert.equal(await bitsOf(t.fx.member, a), 0);
    const starred = await t.as(t.fx.member).get('/messages', {
      anchor: 'oldest',
      num_before: 0,
      num_after: 10,
      narrow: [{ operator: 'is', operand: 'starred' }],
    });
    assert.deepEqual(starred.body.messages, []);
  });

  test('collapsed is changeable; an empty list succeeds', async () => {
    const a = await sendToChannel(t, t.fx.member2, t.fx.channels.general, 't', 'a');
    await log.take();
    assert.deepEqual((await setFlags(t.fx.member, [a], 'add', 'collapsed')).body, {
      ...SUCCESS,
      messages: [a],
    });
    assert.equal(await bitsOf(t.fx.member, a), FLAG_BITS.collapsed);
    assert.deepEqual((await setFlags(t.fx.member, [], 'add', 'collapsed')).body, {
      ...SUCCESS,
      messages: [],
    });
    assert.deepEqual(await log.take(), [
      { event: flagEvent('add', 'collapsed', [a]), users: [t.fx.member.id] },
    ]);
  });

  test('mark unread: message_details for channel messages and direct messages', async () => {
    const plain = await sendToChannel(t, t.fx.member2, t.fx.channels.general, 'lunch', 'hi');
    const mention = await sendToChannel(
      t,
      t.fx.member2,
      t.fx.channels.general,
      '',
      `hi @**${t.fx.member.full_name}**`,
    );
    const wildcard = await sendToChannel(t, t.fx.admin, t.fx.channels.design, 'x', '@**all** hi');
    const dm = await sendDirect(t, t.fx.member2, [t.fx.member], 'psst');
    const group = await sendDirect(t, t.fx.member2, [t.fx.member, t.fx.owner], 'group');
    const self = await sendDirect(t, t.fx.member, [t.fx.member], 'note');
    await muteChannel(t.fx.member, t.fx.channels.design.id);
    const all = [plain, mention, wildcard, dm, group, self];
    await setFlags(t.fx.member, all, 'add', 'read');
    await log.take();
    const res = await setFlags(t.fx.member, all, 'remove', 'read');
    assert.deepEqual(res.body, {
      ...SUCCESS,
      messages: all,
      ignored_because_not_subscribed_channels: [],
    });
    const general = t.fx.channels.general.id;
    assert.deepEqual(await log.take(), [
      {
        event: flagEvent('remove', 'read', all, {
          message_details: {
            [plain]: {
              type: 'stream',
              stream_id: general,
              topic: 'lunch',
              unmuted_stream_msg: true,
            },
            [mention]: {
              type: 'stream',
              stream_id: general,
              topic: '',
              unmuted_stream_msg: true,
              mentioned: true,
            },
            // A wildcard mention in a muted channel is no mention for unread_msgs.
            [wildcard]: {
              type: 'stream',
              stream_id: t.fx.channels.design.id,
              topic: 'x',
              unmuted_stream_msg: false,
            },
            [dm]: { type: 'private', user_ids: [t.fx.member2.id] },
            [group]: {
              type: 'private',
              user_ids: [t.fx.owner.id, t.fx.member2.id].sort((x, y) => x - y),
            },
            [self]: { type: 'private', user_ids: [] },
          },
        }),
        users: [t.fx.member.id],
      },
    ]);
  });

  test('mark unread skips channels the user is not subscribed to and names them', async () => {
    // member2 is not subscribed to design (public, shared history).
    const design = await sendToChannel(t, t.fx.admin, t.fx.channels.design, 't', 'd');
    const general = await sendToChannel(t, t.fx.admin, t.fx.channels.general, 't', 'g');
    await setFlags(t.fx.member2, [general], 'add', 'read');
    // member leaves general: its read message stays read.
    await t.ctx.db
      .updateTable('subscriptions')
      .set({ active: 0 })
      .where('user_id', '=', t.fx.member.id)
      .where('channel_id', '=', t.fx.channels.general.id)
      .execute();
    await setFlags(t.fx.member, [general], 'add', 'read');
    await log.take();
    const res = await setFlags(t.fx.member2, [design, general], 'remove', 'read');
    assert.deepEqual(res.body, {
      ...SUCCESS,
      messages: [general],
      ignored_because_not_subscribed_channels: [t.fx.channels.design.id],
    });
    assert.equal(await bitsOf(t.fx.member2, design), undefined);
    assert.deepEqual(await log.take(), [
      {
        event: flagEvent('remove', 'read', [general], {
          message_details: {
            [general]: {
              type: 'stream',
              stream_id: t.fx.channels.general.id,
              topic: 't',
              unmuted_stream_msg: true,
            },
          },
        }),
        users: [t.fx.member2.id],
      },
    ]);
    await setFlags(t.fx.member, [design], 'add', 'read');
    await log.take();
    const res2 = await setFlags(t.fx.member, [general, design], 'remove', 'read');
    assert.deepEqual(res2.body, {
      ...SUCCESS,
      messages: [design],
      // member is subscribed to design: only general, which they left, is skipped.
      ignored_because_not_subscribed_channels: [t.fx.channels.general.id],
    });
    assert.equal(await bitsOf(t.fx.member, general), READ);
    assert.deepEqual(await log.take(), [
      {
        event: flagEvent('remove', 'read', [design], {
          message_details: {
            [design]: {
              type: 'stream',
              stream_id: t.fx.channels.design.id,
              topic: 't',
              unmuted_stream_msg: true,
            },
          },
        }),
        users: [t.fx.member.id],
      },
    ]);
  });

  test('a readable message never received gets a historical row when a flag changes', async () => {
    const a = await sendToChannel(t, t.fx.admin, t.fx.channels.design, 't', 'a');
    await log.take();
    // Already read as far as member2 can tell: no change, no row.
    assert.deepEqual((await setFlags(t.fx.member2, [a], 'add', 'read')).body, {
      ...SUCCESS,
      messages: [],
    });
    assert.equal(await bitsOf(t.fx.member2, a), undefined);
    assert.deepEqual((await setFlags(t.fx.member2, [a], 'add', 'starred')).body, {
      ...SUCCESS,
      messages: [a],
    });
    assert.equal(await bitsOf(t.fx.member2, a), READ | HISTORICAL | FLAG_BITS.starred);
    assert.deepEqual(await log.take(), [
      { event: flagEvent('add', 'starred', [a]), users: [t.fx.member2.id] },
    ]);
    const res = await t.as(t.fx.member2).get(`/messages/${a}`);
    assert.deepEqual((res.body.message as { flags: string[] }).flags, [
      'read',
      'starred',
      'historical',
    ]);
  });

  test('protected history: only recipients may flag; others get Invalid message(s)', async () => {
    const secret = await sendToChannel(t, t.fx.member2, t.fx.channels.secret, 't', 's');
    const late = await addUser(t, 'Late Comer', { channels: [t.fx.channels.secret.id] });
    await log.take();
    assertError(
      await setFlags(late, [secret], 'add', 'starred'),
      400,
      'BAD_REQUEST',
      INVALID_MESSAGE,
    );
    assertError(
      await setFlags(t.fx.member, [secret], 'add', 'starred'),
      400,
      'BAD_REQUEST',
      INVALID_MESSAGE,
    );
    assert.deepEqual((await setFlags(t.fx.moderator, [secret], 'add', 'starred')).body, {
      ...SUCCESS,
      messages: [secret],
    });
    assert.deepEqual(await log.take(), [
      { event: flagEvent('add', 'starred', [secret]), users: [t.fx.moderator.id] },
    ]);
  });

  test('a received message stays flaggable after leaving its private channel', async () => {
    const id = await sendToChannel(t, t.fx.owner, t.fx.channels.private, 't', 'p');
    await t.ctx.db
      .updateTable('subscriptions')
      .set({ active: 0 })
      .where('user_id', '=', t.fx.member.id)
      .where('channel_id', '=', t.fx.channels.private.id)
      .execute();
    await log.take();
    assert.deepEqual((await setFlags(t.fx.member, [id], 'add', 'starred')).body, {
      ...SUCCESS,
      messages: [id],
    });
    assert.deepEqual((await setFlags(t.fx.member, [id], 'add', 'read')).body, {
      ...SUCCESS,
      messages: [id],
    });
    assert.deepEqual((await setFlags(t.fx.member, [id], 'remove', 'read')).body, {
      ...SUCCESS,
      messages: [],
      ignored_because_not_subscribed_channels: [t.fx.channels.private.id],
    });
    assert.deepEqual(await log.take(), [
      { event: flagEvent('add', 'starred', [id]), users: [t.fx.member.id] },
      { event: flagEvent('add', 'read', [id]), users: [t.fx.member.id] },
    ]);
    // Someone who never received it cannot.
    assertError(
      await setFlags(t.fx.admin, [id], 'add', 'starred'),
      400,
      'BAD_REQUEST',
      INVALID_MESSAGE,
    );
  });

  test('errors: flags, operations and messages', async () => {
    const a = await sendToChannel(t, t.fx.member2, t.fx.channels.general, 't', 'a');
    const design = await sendToChannel(t, t.fx.admin, t.fx.channels.design, 't', 'd');
    const sent = await t.as({ ...t.fx.otherOwner, host: 'other.parley.test' }).post('/messages', {
      type: 'stream',
      to: t.fx.channels.otherGeneral.id,
      topic: 't',
      content: 'o',
    });
    assert.equal(sent.status, 200, sent.text);
    const otherRealm = sent.body.id as number;
    const dm = await sendDirect(t, t.fx.owner, [t.fx.admin], 'dm');
    await log.take();
    const cases: Array<[number[], string, string, string]> = [
      [[a], 'add', 'unknown', "Invalid flag: 'unknown'"],
      [[a], 'add', 'mentioned', "Flag not editable: 'mentioned'"],
      [[a], 'remove', 'historical', "Flag not editable: 'historical'"],
      [[a], 'add', 'wildcard_mentioned', "Flag not editable: 'wildcard_mentioned'"],
      [[a], 'add', 'has_alert_word', "Flag not editable: 'has_alert_word'"],
      [[a], 'toggle', 'read', "Invalid message flag operation: 'toggle'"],
      [[a, 999999], 'add', 'starred', INVALID_MESSAGE],
      [[otherRealm], 'add', 'starred', INVALID_MESSAGE],
      [[dm], 'add', 'starred', INVALID_MESSAGE],
    ];
    for (const [messages, op, flag, msg] of cases) {
      assertError(await setFlags(t.fx.member, messages, op, flag), 400, 'BAD_REQUEST', msg);
    }
    // A guest reads only its subscribed channels.
    assertError(
      await setFlags(t.fx.guest, [design], 'add', 'starred'),
      400,
      'BAD_REQUEST',
      INVALID_MESSAGE,
    );
    // A refused request changes nothing.
    assert.equal(await bitsOf(t.fx.member, a), 0);
    assert.deepEqual(await log.take(), []);
    const missing = await t.as(t.fx.member).post('/messages/flags', { op: 'add', flag: 'read' });
    assert.deepEqual(
      [missing.status, missing.body],
      [
        400,
        {
          result: 'error',
          msg: "Missing 'messages' argument",
          code: 'REQUEST_VARIABLE_MISSING',
          var_name: 'messages',
        },
      ],
    );
    assertError(
      await t.as(t.fx.member).post('/messages/flags', { messages: '[1', op: 'add', flag: 'read' }),
      400,
      'BAD_REQUEST',
      'messages is not valid JSON',
    );
  });

  test('every caller', async () => {
    const id = await sendToChannel(t, t.fx.owner, t.fx.channels.general, 't', 'hi');
    for (const who of EVERY_CALLER) {
      const res = await as(t, who).post('/messages/flags', {
        messages: [id],
        op: 'add',
        flag: 'starred',
      });
      if (assertUnauthorized(who, res)) continue;
      assert.deepEqual(res.body, { ...SUCCESS, messages: [id] }, who);
    }
  });

  test('read, unread, read reach a real queue as three events, in order', async () => {
    const id = await sendToChannel(t, t.fx.member2, t.fx.channels.general, 't', 'hi');
    const client = t.as(t.fx.member);
    const q = await registerQueue(client, { event_types: ['update_message_flags'] });
    await setFlags(t.fx.member, [id], 'add', 'read');
    await setFlags(t.fx.member, [id], 'remove', 'read');
    await setFlags(t.fx.member, [id], 'add', 'read');
    const events = await drainEvents(t.ctx, client, q.queue_id, q.last_event_id);
    const details = {
      [id]: {
        type: 'stream',
        stream_id: t.fx.channels.general.id,
        topic: 't',
        unmuted_stream_msg: true,
      },
    };
    assert.deepEqual(withoutIds(events), [
      flagEvent('add', 'read', [id]),
      flagEvent('remove', 'read', [id], { message_details: details }),
      flagEvent('add', 'read', [id]),
    ]);
    assert.equal(await bitsOf(t.fx.member, id), READ);
  });

  test('clients without empty_topic_name see the display name in message_details', async () => {
    const id = await sendToChannel(t, t.fx.member2, t.fx.channels.general, '', 'hi');
    const client = t.as(t.fx.member);
    const q = await registerQueue(client, {});
    await setFlags(t.fx.member, [id], 'add', 'read');
    await setFlags(t.fx.member, [id], 'remove', 'read');
    const events = await drainEvents(t.ctx, client, q.queue_id, q.last_event_id);
    assert.deepEqual(
      (events[1].message_details as Record<string, { topic: string }>)[id].topic,
      q.realm_empty_topic_display_name,
    );
  });
});
