// GET /messages narrows: every operator (and its legacy names), negation, both term forms,
// search highlighting, and every narrow error.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import {
  assertError,
  getMessages,
  idsIn,
  sendDirect,
  sendToChannel,
  useClock,
} from '../support/messages.ts';

let t: TestApp;
/** The messages every test starts with, by name. */
let m: Record<string, number>;

beforeEach(async () => {
  t = await buildTestApp();
  useClock(t);
  const fx = t.fx;
  m = {
    apples: await sendToChannel(t, fx.member, fx.channels.general, 'Fruit', 'I like apples'),
    fixed: await sendToChannel(
      t,
      fx.admin,
      fx.channels.general,
      '✔ Fixed',
      'done, see https://example.com/x',
    ),
    bananas: await sendToChannel(t, fx.member, fx.channels.design, 'fruit', 'bananas'),
    dm: await sendDirect(t, fx.member, [fx.member2], 'hello there'),
    group: await sendDirect(t, fx.member2, [fx.member, fx.admin], 'group hi'),
    self: await sendDirect(t, fx.member, [fx.member], 'note to self'),
    mention: await sendToChannel(t, fx.admin, fx.channels.general, 'Veg', '@**Mark Member** look'),
    image: await sendToChannel(
      t,
      fx.admin,
      fx.channels.design,
      'pics',
      '[pic](/user_uploads/1/ab/cd/pic.png)',
    ),
  };
  const member = fx.member.id;
  const setFlags = (id: number, bits: number) =>
    t.ctx.db
      .updateTable('user_messages')
      .set((eb) => ({ flags: eb('flags', '|', bits) }))
      .where('user_id', '=', member)
      .where('message_id', '=', id)
      .execute();
  await setFlags(m.apples, 2); // starred
  await setFlags(m.fixed, 1 | 64); // read, alert word
  await t.ctx.db
    .insertInto('reactions')
    .values({
      message_id: m.bananas,
      user_id: fx.admin.id,
      emoji_name: 'smile',
      emoji_code: '1f642',
      reaction_type: 'unicode_emoji',
    })
    .execute();
  const topicPolicy = (channel_id: number, topic_name: string, visibility_policy: number) =>
    t.ctx.db
      .insertInto('user_topics')
      .values({
        user_id: member,
        channel_id,
        topic_name,
        topic_key: topic_name.toLowerCase(),
        visibility_policy,
        last_updated: 0,
      })
      .execute();
  await topicPolicy(fx.channels.general.id, 'fruit', 3); // followed
  await topicPolicy(fx.channels.design.id, 'PICS', 1); // muted
});
afterEach(async () => {
  await t.close();
});

const ALL = () => Object.values(m).sort((a, b) => a - b);
const of = (...names: string[]) => names.map((n) => m[n]).sort((a, b) => a - b);
const without = (...names: string[]) => ALL().filter((id) => !names.map((n) => m[n]).includes(id));
const mine = (narrow: unknown[]) => idsIn(t, t.fx.member, narrow);

describe('operators', () => {
  test('no narrow: the whole personal history', async () => {
    assert.deepEqual(await mine([]), ALL());
  });

  test('channel and stream, by name (any case) and id, in both forms', async () => {
    const general = of('apples', 'fixed', 'mention');
    assert.deepEqual(await mine([['channel', 'general']]), general);
    assert.deepEqual(await mine([['stream', 'GENERAL']]), general);
    assert.deepEqual(
      await mine([{ operator: 'channel', operand: t.fx.channels.general.id }]),
      general,
    );
    assert.deepEqual(
      await mine([{ operator: 'stream', operand: 'general', negated: true }]),
      without('apples', 'fixed', 'mention'),
    );
  });

  test('channels: public and web-public', async () => {
    assert.deepEqual(
      await mine([['channels', 'public']]),
      of('apples', 'fixed', 'mention', 'bananas', 'image'),
    );
    assert.deepEqual(await mine([['streams', 'web-public']]), []);
  });

  test('topic, case-insensitively', async () => {
    assert.deepEqual(await mine([['topic', 'FRUIT']]), of('apples', 'bananas'));
    assert.deepEqual(
      await mine([
        ['channel', 'design'],
        ['topic', 'fruit'],
      ]),
      of('bananas'),
    );
    assert.deepEqual(
      await mine([{ operator: 'topic', operand: 'fruit', negated: true }]),
      without('apples', 'bananas'),
    );
  });

  test('sender, by email and id', async () => {
    assert.deepEqual(await mine([['sender', t.fx.admin.email]]), of('fixed', 'mention', 'image'));
    assert.deepEqual(
      await mine([{ operator: 'sender', operand: t.fx.admin.id }]),
      of('fixed', 'mention', 'image'),
    );
    assert.deepEqual(
      await mine([{ operator: 'sender', operand: t.fx.member.id, negated: true }]),
      of('fixed', 'group', 'mention', 'image'),
    );
  });

  test('dm and pm-with: one conversation exactly, by ids or emails', async () => {
    assert.deepEqual(await mine([['dm', t.fx.member2.email]]), of('dm'));
    assert.deepEqual(
      await mine([['pm-with', `${t.fx.admin.email},${t.fx.member2.email}`]]),
      of('group'),
    );
    assert.deepEqual(
      await mine([{ operator: 'dm', operand: [t.fx.member2.id, t.fx.admin.id] }]),
      of('group'),
    );
    assert.deepEqual(await mine([{ operator: 'dm', operand: [t.fx.member.id] }]), of('self'));
    assert.deepEqual(await mine([{ operator: 'dm', operand: t.fx.owner.id }]), []);
    assert.deepEqual(
      await mine([{ operator: 'dm', operand: [t.fx.member2.id], negated: true }]),
      without('dm'),
    );
  });

  test('dm-including and group-pm-with', async () => {
    assert.deepEqual(await mine([['dm-including', t.fx.member2.email]]), of('dm', 'group'));
    assert.deepEqual(
      await mine([{ operator: 'dm-including', operand: t.fx.member.id }]),
      of('dm', 'group', 'self'),
    );
    assert.deepEqual(await mine([['group-pm-with', t.fx.admin.email]]), of('group'));
    assert.deepEqual(await mine([['group-pm-with', t.fx.member2.email]]), of('group'));
  });

  test('is: dm, private, starred, unread, mentioned, alerted, resolved, followed, muted', async () => {
    assert.deepEqual(await mine([['is', 'dm']]), of('dm', 'group', 'self'));
    assert.deepEqual(await mine([['is', 'private']]), of('dm', 'group', 'self'));
    assert.deepEqual(
      await mine([{ operator: 'is', operand: 'dm', negated: true }]),
      without('dm', 'group', 'self'),
    );
    assert.deepEqual(await mine([['is', 'starred']]), of('apples'));
    assert.deepEqual(await mine([['is', 'unread']]), without('fixed'));
    assert.deepEqual(await mine([['is', 'mentioned']]), of('mention'));
    assert.deepEqual(await mine([['is', 'alerted']]), of('fixed'));
    assert.deepEqual(await mine([['is', 'resolved']]), of('fixed'));
    assert.deepEqual(await mine([['is', 'followed']]), of('apples'));
    assert.deepEqual(await mine([['is', 'muted']]), of('image'));
    assert.deepEqual(
      await mine([{ operator: 'is', operand: 'muted', negated: true }]),
      without('image'),
    );
  });

  test('has: link, image, attachment, reaction', async () => {
    assert.deepEqual(await mine([['has', 'link']]), of('fixed', 'image'));
    assert.deepEqual(await mine([['has', 'image']]), of('image'));
    assert.deepEqual(await mine([['has', 'attachment']]), of('image'));
    assert.deepEqual(await mine([['has', 'reaction']]), of('bananas'));
    assert.deepEqual(
      await mine([{ operator: 'has', operand: 'link', negated: true }]),
      without('fixed', 'image'),
    );
  });

  test('id, near and with', async () => {
    assert.deepEqual(await mine([['id', String(m.bananas)]]), of('bananas'));
    assert.deepEqual(
      await mine([{ operator: 'id', operand: m.bananas, negated: true }]),
      without('bananas'),
    );
    assert.deepEqual(await mine([['near', String(m.bananas)]]), ALL());
    assert.deepEqual(await mine([{ operator: 'with', operand: m.dm }]), of('dm'));
    assert.deepEqual(
      await mine([
        ['channel', 'design'],
        ['with', String(m.apples)],
      ]),
      of('apples'),
    );
    // A message the user cannot read leaves the rest of the narrow as it is.
    const hidden = await sendDirect(t, t.fx.admin, [t.fx.owner], 'private talk');
    assert.deepEqual(
      await mine([
        ['with', String(hidden)],
        ['is', 'starred'],
      ]),
      of('apples'),
    );
  });

  test('search: words and phrases in content or topic, with matches marked', async () => {
    assert.deepEqual(await mine([['search', 'apples']]), of('apples'));
    assert.deepEqual(await mine([['search', 'FRUIT']]), of('apples', 'bananas'));
    assert.deepEqual(await mine([['search', 'like apples']]), of('apples'));
    assert.deepEqual(await mine([['search', '"apples like"']]), []);
    assert.deepEqual(await mine([['search', '100%']]), []);
    const body = await getMessages(t, t.fx.member, {
      anchor: 'newest',
      num_before: 10,
      num_after: 0,
      narrow: [['search', 'apples']],
    });
    const [hit] = body.messages as Array<Record<string, unknown>>;
    assert.equal(hit.match_content, '<p>I like <span class="highlight">apples</span></p>');
    assert.equal(hit.match_subject, 'Fruit');
    const topicHit = await getMessages(t, t.fx.member, {
      anchor: m.bananas,
      num_before: 0,
      num_after: 0,
      narrow: [['search', 'fruit']],
    });
    assert.equal(
      (topicHit.messages as Array<Record<string, unknown>>)[0].match_subject,
      '<span class="highlight">fruit</span>',
    );
    const plain = await getMessages(t, t.fx.member, {
      anchor: m.bananas,
      num_before: 0,
      num_after: 0,
    });
    assert.equal('match_content' in (plain.messages as Array<Record<string, unknown>>)[0], false);
  });

  test('terms combine', async () => {
    assert.deepEqual(
      await mine([
        ['channel', 'general'],
        ['sender', t.fx.admin.email],
        ['is', 'unread'],
      ]),
      of('mention'),
    );
  });
});

describe('errors', () => {
  const bad = async (narrow: unknown, msg: string) =>
    assertError(
      await t
        .as(t.fx.member)
        .get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow }),
      400,
      'BAD_NARROW',
      msg,
    );
  test('unknown operators and operands', async () => {
    await bad([['color', 'red']], 'Invalid narrow operator: unknown operator color');
    await bad([['toString', 'x']], 'Invalid narrow operator: unknown operator toString');
    await bad([['is', 'shiny']], "Invalid narrow operator: unknown 'is' operand shiny");
    await bad([['has', 'poem']], "Invalid narrow operator: unknown 'has' operand poem");
    await bad([['channels', 'all']], 'Invalid narrow operator: unknown channels operand all');
    await bad([['channel', 'nowhere']], 'Invalid narrow operator: unknown channel nowhere');
    await bad([['channel', 'secret']], 'Invalid narrow operator: unknown channel secret');
    await bad([['sender', 'ghost@parley.test']], 'Invalid narrow operator: unknown user in sender');
    await bad(
      [{ operator: 'dm', operand: [99999] }],
      'Invalid narrow operator: unknown user in dm',
    );
    await bad([['id', 'abc']], 'Invalid narrow operator: Invalid message ID');
    await bad([['with', 'abc']], "Invalid narrow operator: Invalid 'with' operator");
    await bad([['search', '   ']], 'Invalid narrow operator: search operand cannot be blank');
    await bad(
      [{ operator: 'topic', operand: 5 }],
      'Invalid narrow operator: invalid operand for topic',
    );
  });
  test('malformed narrows and impossible combinations', async () => {
    const notList = await t.as(t.fx.member).get('/messages', {
      anchor: 'newest',
      num_before: 1,
      num_after: 0,
      narrow: { operator: 'is' },
    });
    assert.deepEqual(notList.body, {
      result: 'error',
      msg: 'narrow is not a list',
      code: 'BAD_REQUEST',
    });
    await bad([['is']], 'Invalid narrow');
    await bad([{ operator: 'is', operand: 'dm', extra: 1 }], 'Invalid narrow');
    await bad([{ operator: 'is', operand: 'dm', negated: 'yes' }], 'Invalid narrow');
    await bad(
      [
        ['channel', 'general'],
        ['is', 'dm'],
      ],
      'No message can be both a channel message and direct message',
    );
    await bad(
      [
        ['with', '1'],
        ['with', '2'],
      ],
      "Duplicate 'with' operators.",
    );
    const notJson = await t
      .as(t.fx.member)
      .get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: '[[' });
    assert.deepEqual(notJson.body, {
      result: 'error',
      msg: 'narrow is not valid JSON',
      code: 'BAD_REQUEST',
    });
  });
});
