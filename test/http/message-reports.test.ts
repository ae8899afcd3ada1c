// POST /messages/{id}/report: the moderation request channel setting, who may report what,
// the Notification Bot (created once per organization) and the report it posts.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { as, assertUnauthorized, EVERY_CALLER } from '../support/bots.ts';
import { SUCCESS, type Credentials } from '../support/client.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { captureNotices, ids, type NoticeLog } from '../support/notices.ts';
import { assertError, sendDirect, sendToChannel, useClock } from '../support/messages.ts';

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

const NOT_CONFIGURED = 'Moderation request channel must be specified to enable message reporting.';

const report = (who: Credentials | null, id: number, params: Record<string, unknown>) =>
  t.as(who).post(`/messages/${id}/report`, params);

/** Make the private channel (owner and member subscribed) the moderation channel. */
async function configure(): Promise<void> {
  const res = await t
    .as(t.fx.owner)
    .patch('/realm', { moderation_request_channel_id: t.fx.channels.private.id });
  assert.deepEqual(res.body, {
    ...SUCCESS,
    moderation_request_channel_id: t.fx.channels.private.id,
  });
}

interface Posted {
  id: number;
  sender_full_name: string;
  sender_email: string;
  subject: string;
  raw: string;
  html: string;
}

/** The messages of the moderation channel, as its subscriber the owner sees them. */
async function moderationPosts(): Promise<Posted[]> {
  const page = await t.as(t.fx.owner).get('/messages', {
    anchor: 'oldest',
    num_before: 0,
    num_after: 100,
    narrow: [{ operator: 'channel', operand: t.fx.channels.private.id }],
    apply_markdown: false,
  });
  assert.equal(page.status, 200, page.text);
  const out: Posted[] = [];
  for (const m of page.body.messages as Array<Record<string, unknown>>) {
    const one = await t.as(t.fx.owner).get(`/messages/${m.id as number}`);
    out.push({
      id: m.id as number,
      sender_full_name: m.sender_full_name as string,
      sender_email: m.sender_email as string,
      subject: m.subject as string,
      raw: m.content as string,
      html: (one.body.message as { content: string }).content,
    });
  }
  return out;
}

const mention = (u: FixtureUser) => `@_**${u.full_name}|${u.id}**`;

describe('POST /messages/{id}/report', () => {
  test('the Notification Bot posts the report into the moderation channel', async () => {
    await configure();
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 'lunch', 'buy `now`');
    await log.take();
    const res = await report(t.fx.member2, id, {
      report_type: 'spam',
      description: 'Selling things.',
    });
    assert.deepEqual(res.body, SUCCESS);
    const [post] = await moderationPosts();
    const raw = [
      `${mention(t.fx.member2)} reported #**general>lunch@${id}** sent by ${mention(t.fx.member)}.`,
      '',
      '- **Reason**: Spam',
      '- **Notes**:',
      '```quote',
      'Selling things.',
      '```',
      '',
      `**Message sent by ${mention(t.fx.member)}**`,
      '```quote',
      'buy `now`',
      '```',
    ].join('\n');
    assert.deepEqual(
      { ...post, id: 0, html: '' },
      {
        id: 0,
        sender_full_name: 'Notification Bot',
        sender_email: 'notification-bot@parley.test',
        subject: `${t.fx.member.full_name}'s reports`,
        raw,
        html: '',
      },
    );
    const silent = (u: FixtureUser) =>
      `<span class="user-mention silent" data-user-id="${u.id}">${u.full_name}</span>`;
    const general = t.fx.channels.general.id;
    assert.equal(
      post.html,
      `<p>${silent(t.fx.member2)} reported <a class="message-link" ` +
        `href="/#narrow/channel/${general}-general/topic/lunch/near/${id}">` +
        `#general &gt; lunch @ 💬</a> sent by ${silent(t.fx.member)}.</p>\n` +
        '<ul>\n<li><strong>Reason</strong>: Spam</li>\n<li><strong>Notes</strong>:</li>\n</ul>\n' +
        '<blockquote>\n<p>Selling things.</p>\n</blockquote>\n' +
        `<p><strong>Message sent by ${silent(t.fx.member)}</strong></p>\n` +
        '<blockquote>\n<p>buy <code>now</code></p>\n</blockquote>',
    );
    // Only the normal message event of the post, to the moderation channel's subscribers
    // and the bot; no dedicated report event.
    const sent = await log.take();
    const messages = sent.filter((s) => s.event.type === 'message');
    assert.equal(messages.length, 1);
    const bot = await t.ctx.db
      .selectFrom('users')
      .selectAll()
      .where('delivery_email', '=', 'notification-bot@parley.test')
      .execute();
    assert.equal(bot.length, 1);
    assert.deepEqual(
      { is_bot: bot[0].is_bot, bot_type: bot[0].bot_type, owner: bot[0].bot_owner_id },
      { is_bot: 1, bot_type: 1, owner: null },
    );
    assert.deepEqual(
      messages[0].users,
      [...ids(t.fx.owner, t.fx.member), bot[0].id].sort((a, b) => a - b),
    );
    assert.deepEqual(
      sent.filter((s) => s.event.type !== 'message').map((s) => s.event.type),
      // Creating the bot announces it; the channel's first message moves first_message_id.
      ['realm_user', 'user_group', 'realm_bot', 'stream'],
      'creating the bot announces it once',
    );
    // A second report reuses the bot.
    const other = await sendToChannel(t, t.fx.member, t.fx.channels.general, 'lunch', 'again');
    assert.deepEqual(
      (await report(t.fx.admin, other, { report_type: 'harassment' })).body,
      SUCCESS,
    );
    const posts = await moderationPosts();
    assert.equal(posts.length, 2);
    assert.equal(posts[1].sender_email, 'notification-bot@parley.test');
    assert.equal(
      posts[1].raw,
      [
        `${mention(t.fx.admin)} reported #**general>lunch@${other}** sent by ${mention(t.fx.member)}.`,
        '',
        '- **Reason**: Harassment',
        '',
        `**Message sent by ${mention(t.fx.member)}**`,
        '```quote',
        'again',
        '```',
      ].join('\n'),
    );
    const bots = await t.ctx.db
      .selectFrom('users')
      .select('id')
      .where('delivery_email', '=', 'notification-bot@parley.test')
      .execute();
    assert.equal(bots.length, 1);
  });

  test('every reason, a direct message, and fences inside the reported content', async () => {
    await configure();
    const labels: Record<string, string> = {
      spam: 'Spam',
      harassment: 'Harassment',
      inappropriate: 'Inappropriate content',
      norms: 'Violates community norms',
      other: 'Other reason',
    };
    for (const [type, label] of Object.entries(labels)) {
      const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', type);
      const res = await report(t.fx.member2, id, { report_type: type, description: 'why' });
      assert.deepEqual(res.body, SUCCESS, type);
      const posts = await moderationPosts();
      assert.equal(posts[posts.length - 1].raw.split('\n')[2], `- **Reason**: ${label}`);
    }
    const dm = await sendDirect(t, t.fx.member, [t.fx.member2], '```\ncode\n```');
    assert.deepEqual((await report(t.fx.member2, dm, { report_type: 'norms' })).body, SUCCESS);
    const posts = await moderationPosts();
    assert.equal(
      posts[posts.length - 1].raw,
      [
        `${mention(t.fx.member2)} reported a direct message (ID ${dm}) sent by ${mention(t.fx.member)}.`,
        '',
        '- **Reason**: Violates community norms',
        '',
        `**Message sent by ${mention(t.fx.member)}**`,
        '````quote',
        '```\ncode\n```',
        '````',
      ].join('\n'),
    );
    assert.match(posts[posts.length - 1].html, /<blockquote>\n<div class="codehilite">/);
  });

  test('errors, with their codes and statuses', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'hi');
    const secret = await sendToChannel(t, t.fx.moderator, t.fx.channels.secret, 't', 's');
    assertError(
      await report(t.fx.member2, id, { report_type: 'spam' }),
      400,
      'BAD_REQUEST',
      NOT_CONFIGURED,
    );
    await configure();
    const cases: Array<[FixtureUser, number, Record<string, unknown>, string]> = [
      [t.fx.member2, id, { report_type: 'other' }, 'An explanation is required.'],
      [
        t.fx.member2,
        id,
        { report_type: 'other', description: '   ' },
        'An explanation is required.',
      ],
      [t.fx.member, id, { report_type: 'spam' }, "You can't report this message."],
      [t.fx.guest, id, { report_type: 'spam' }, 'Not allowed for guest users'],
      [t.fx.member2, 999999, { report_type: 'spam' }, 'Invalid message(s)'],
      [t.fx.member, secret, { report_type: 'spam' }, 'Invalid message(s)'],
    ];
    for (const [who, messageId, params, msg] of cases) {
      assertError(await report(who, messageId, params), 400, 'BAD_REQUEST', msg);
    }
    assertError(
      await report(t.fx.member2, id, { report_type: 'other', description: 'x'.repeat(1001) }),
      400,
      'BAD_REQUEST',
      'description is too long (limit: 1000 characters)',
    );
    assertError(
      await report(t.fx.member2, id, { report_type: 'rude' }),
      400,
      'BAD_REQUEST',
      'Invalid report_type',
    );
    const missing = await report(t.fx.member2, id, {});
    assert.deepEqual(
      [missing.status, missing.body],
      [
        400,
        {
          result: 'error',
          msg: "Missing 'report_type' argument",
          code: 'REQUEST_VARIABLE_MISSING',
          var_name: 'report_type',
        },
      ],
    );
    // Exactly 1000 characters are fine.
    assert.deepEqual(
      (await report(t.fx.member2, id, { report_type: 'other', description: 'y'.repeat(1000) }))
        .body,
      SUCCESS,
    );
    // Nothing refused was posted.
    assert.equal((await moderationPosts()).length, 1);
  });

  test('the setting is the administrators’; an archived channel turns reporting off', async () => {
    const res = await t
      .as(t.fx.moderator)
      .patch('/realm', { moderation_request_channel_id: t.fx.channels.secret.id });
    assert.equal(res.status, 400);
    await configure();
    await t.ctx.db
      .updateTable('channels')
      .set({ is_archived: 1 })
      .where('id', '=', t.fx.channels.private.id)
      .execute();
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'hi');
    assertError(
      await report(t.fx.member2, id, { report_type: 'spam' }),
      400,
      'BAD_REQUEST',
      NOT_CONFIGURED,
    );
  });

  test('every caller', async () => {
    await configure();
    const id = await sendToChannel(t, t.fx.member2, t.fx.channels.general, 't', 'hi');
    for (const who of EVERY_CALLER) {
      const res = await as(t, who).post(`/messages/${id}/report`, { report_type: 'spam' });
      if (assertUnauthorized(who, res)) continue;
      if (who === 'guest') {
        assertError(res, 400, 'BAD_REQUEST', 'Not allowed for guest users');
        continue;
      }
      assert.deepEqual(res.body, SUCCESS, who);
    }
  });
});
