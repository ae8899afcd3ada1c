// The message-listing shape outgoing webhooks will send (no route yet; the worker calls it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { presentMessageForWebhook } from '../../src/actions/message-present.ts';
import { getMessage } from '../../src/store/messages.ts';
import { getRealmById } from '../../src/store/realms.ts';
import { getUserById } from '../../src/store/users.ts';
import { buildTestApp } from '../support/app.ts';
import {
  channelRecipientId,
  expectedMessage,
  gravatar,
  sendToChannel,
  useClock,
} from '../support/messages.ts';

test('Markdown content, rendered_content, full avatar URL, the empty topic as is, no flags', async () => {
  const t = await buildTestApp();
  try {
    useClock(t);
    const id = await sendToChannel(
      t,
      t.fx.member,
      t.fx.channels.general,
      '',
      '**hi** @**Helper Bot**',
    );
    const realm = (await getRealmById(t.ctx.db, t.fx.realm.id))!;
    const bot = (await getUserById(t.ctx.db, realm.id, t.fx.bot.id))!;
    const message = (await getMessage(t.ctx.db, realm.id, id))!;
    const html = `<p><strong>hi</strong> <span class="user-mention" data-user-id="${t.fx.bot.id}">@Helper Bot</span></p>`;
    const { flags: _f, ...listed } = expectedMessage({
      id,
      sender: t.fx.member,
      html,
      channel: {
        ...t.fx.channels.general,
        recipientId: await channelRecipientId(t, t.fx.channels.general.id),
      },
      topic: '',
    });
    assert.deepEqual(await presentMessageForWebhook(t.ctx, t.ctx.db, realm, bot, message), {
      ...listed,
      content: '**hi** @**Helper Bot**',
      content_type: 'text/x-markdown',
      rendered_content: html,
      avatar_url: gravatar(t.fx.member.delivery_email),
    });
  } finally {
    await t.close();
  }
});
