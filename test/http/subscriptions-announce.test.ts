// POST /users/me/subscriptions with announce: the Notification Bot's post about new public
// channels in the organization's new-channel announcement channel.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { SUCCESS } from '../support/client.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { captureNotices, ids, type NoticeLog } from '../support/notices.ts';

let t: TestApp;
let log: NoticeLog;
beforeEach(async () => {
  t = await buildTestApp();
  log = captureNotices(t);
});
afterEach(async () => {
  await t.close();
});

const mention = (u: FixtureUser) => `@_**${u.full_name}|${u.id}**`;

async function setAnnouncementChannel(id: number): Promise<void> {
  const res = await t.as(t.fx.admin).patch('/realm', { new_stream_announcements_stream_id: id });
  assert.deepEqual(res.body, { ...SUCCESS, new_stream_announcements_stream_id: id });
}

/** The messages of a channel as the owner (subscribed to every fixture channel) reads them. */
async function postsIn(channelId: number): Promise<Array<Record<string, unknown>>> {
  const page = await t.as(t.fx.owner).get('/messages', {
    anchor: 'oldest',
    num_before: 0,
    num_after: 100,
    narrow: [{ operator: 'channel', operand: channelId }],
    apply_markdown: false,
  });
  assert.equal(page.status, 200, page.text);
  return (page.body.messages as Array<Record<string, unknown>>).map((m) => ({
    sender_full_name: m.sender_full_name,
    sender_email: m.sender_email,
    client: m.client,
    subject: m.subject,
    content: m.content,
  }));
}

const botPost = (content: string) => ({
  sender_full_name: 'Notification Bot',
  sender_email: 'notification-bot@parley.test',
  client: 'Internal',
  subject: 'new channels',
  content,
});

const subscribe = (who: FixtureUser, params: Record<string, unknown>) =>
  t.as(who).post('/users/me/subscriptions', params);

describe('POST /users/me/subscriptions: announce', () => {
  test('a new public channel is announced by the Notification Bot, rendered with links', async () => {
    const general = t.fx.channels.general.id;
    await setAnnouncementChannel(general);
    await log.take();
    const res = await subscribe(t.fx.member, {
      subscriptions: [{ name: 'ideas' }],
      announce: true,
    });
    assert.deepEqual(res.body, {
      ...SUCCESS,
      subscribed: { [t.fx.member.id]: ['ideas'] },
      already_subscribed: {},
    });
    assert.deepEqual(await postsIn(general), [
      botPost(`${mention(t.fx.member)} created a new channel #**ideas**.`),
    ]);
    const messages = (await log.take()).filter((n) => n.event.type === 'message');
    assert.equal(messages.length, 1);
    const message = (messages[0].event as unknown as { message: Record<string, unknown> }).message;
    const ideas = (await t.ctx.db
      .selectFrom('channels')
      .select('id')
      .where('name', '=', 'ideas')
      .executeTakeFirstOrThrow())!.id;
    assert.equal(
      message.content,
      `<p><span class="user-mention silent" data-user-id="${t.fx.member.id}">` +
        `${t.fx.member.full_name}</span> created a new channel ` +
        `<a class="stream" data-stream-id="${ideas}" href="/#narrow/channel/${ideas}-ideas">` +
        '#ideas</a>.</p>',
    );
    // The announcement reaches general's subscribers (and the bot, its sender), no one else.
    const bot = await t.ctx.db
      .selectFrom('users')
      .select('id')
      .where('full_name', '=', 'Notification Bot')
      .executeTakeFirstOrThrow();
    const f = t.fx;
    assert.deepEqual(
      [...messages[0].users].sort((a, b) => a - b),
      ids(f.owner, f.admin, f.moderator, f.member, f.member2, f.guest, f.bot, { id: bot.id }),
    );
  });

  test('several new channels in one post; private ones are never named', async () => {
    await setAnnouncementChannel(t.fx.channels.general.id);
    const res = await subscribe(t.fx.admin, {
      subscriptions: [{ name: 'alpha' }, { name: 'beta' }, { name: 'general' }],
      announce: true,
    });
    assert.equal(res.status, 200, res.text);
    const hidden = await subscribe(t.fx.admin, {
      subscriptions: [{ name: 'gamma' }, { name: 'hush' }],
      invite_only: true,
      announce: true,
    });
    assert.equal(hidden.status, 200, hidden.text);
    assert.deepEqual(await postsIn(t.fx.channels.general.id), [
      botPost(`${mention(t.fx.admin)} created the following channels: #**alpha**, #**beta**.`),
    ]);
  });

  test('nothing is posted without announce, for existing channels, or with no target', async () => {
    const general = t.fx.channels.general.id;
    // No announcement channel (the default, -1): announce does nothing, and no bot appears.
    await subscribe(t.fx.member, { subscriptions: [{ name: 'first' }], announce: true });
    const bots = await t.ctx.db
      .selectFrom('users')
      .select('id')
      .where('full_name', '=', 'Notification Bot')
      .execute();
    assert.deepEqual(bots, []);
    await setAnnouncementChannel(general);
    await subscribe(t.fx.member, { subscriptions: [{ name: 'second' }] });
    await subscribe(t.fx.member, {
      subscriptions: [{ name: 'design' }, { name: 'first' }],
      announce: true,
    });
    assert.deepEqual(await postsIn(general), []);
  });

  test('an archived announcement channel takes no announcements', async () => {
    const design = t.fx.channels.design.id;
    await setAnnouncementChannel(design);
    const archived = await t.as(t.fx.admin).delete(`/streams/${design}`);
    assert.deepEqual(archived.body, SUCCESS);
    const res = await subscribe(t.fx.member, {
      subscriptions: [{ name: 'later' }],
      announce: true,
    });
    assert.equal(res.status, 200, res.text);
    const posts = await t.ctx.db
      .selectFrom('messages')
      .select('content')
      .where('content', 'like', '%created a new channel%')
      .execute();
    assert.deepEqual(posts, []);
  });
});
