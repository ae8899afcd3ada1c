// POST and DELETE /messages/{id}/reactions: emoji resolution and validation, who may react
// (whoever may read the message), historical rows, the reaction event and its recipients,
// and reactions in message objects.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FLAG_BITS } from '../../src/lib/message-flags.ts';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { as, assertUnauthorized, EVERY_CALLER } from '../support/bots.ts';
import { SUCCESS, type Credentials } from '../support/client.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { captureNotices, ids, type NoticeLog } from '../support/notices.ts';
import {
  addUser,
  assertError,
  rowsOf,
  sendDirect,
  sendToChannel,
  setChannel,
  useClock,
} from '../support/messages.ts';

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

const EVERYONE = () =>
  ids(t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member, t.fx.member2, t.fx.guest, t.fx.bot);
const INVALID_MESSAGE = 'Invalid message(s)';

const react = (who: Credentials, id: number, params: Record<string, unknown>) =>
  t.as(who).post(`/messages/${id}/reactions`, params);
const unreact = (who: Credentials, id: number, params: Record<string, unknown>) =>
  t.as(who).delete(`/messages/${id}/reactions`, params);

function reactionEvent(
  op: 'add' | 'remove',
  who: FixtureUser,
  messageId: number,
  emoji: { name: string; code: string; type?: string },
): Record<string, unknown> {
  return {
    type: 'reaction',
    op,
    message_id: messageId,
    emoji_name: emoji.name,
    emoji_code: emoji.code,
    reaction_type: emoji.type ?? 'unicode_emoji',
    user_id: who.id,
    user: { user_id: who.id, email: who.email, full_name: who.full_name },
  };
}

/** The message's reactions as GET /messages/{id} shows them to this reader. */
async function reactionsOf(who: FixtureUser, id: number): Promise<unknown> {
  const res = await t.as(who).get(`/messages/${id}`);
  assert.equal(res.status, 200, res.text);
  return (res.body.message as { reactions: unknown }).reactions;
}

const shown = (who: FixtureUser, name: string, code: string, type = 'unicode_emoji') => ({
  emoji_name: name,
  emoji_code: code,
  reaction_type: type,
  user_id: who.id,
});

describe('POST /messages/{id}/reactions', () => {
  test('by name: every reader of the channel is told, and the message shows it', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'hi');
    await log.take();
    const res = await react(t.fx.member2, id, { emoji_name: 'smile' });
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(await log.take(), [
      {
        event: reactionEvent('add', t.fx.member2, id, { name: 'smile', code: '1f642' }),
        users: EVERYONE(),
      },
    ]);
    assert.deepEqual(await reactionsOf(t.fx.guest, id), [shown(t.fx.member2, 'smile', '1f642')]);
    // GET /messages carries them too, in the order they were added.
    await react(t.fx.owner, id, {
      emoji_name: 'octopus_not_known',
      emoji_code: '1f44d',
      reaction_type: 'unicode_emoji',
    }).then((r) => assertError(r, 400, 'BAD_REQUEST', 'Invalid emoji name.'));
    assert.deepEqual((await react(t.fx.owner, id, { emoji_name: 'joy' })).body, SUCCESS);
    const page = await t.as(t.fx.member).get('/messages', {
      anchor: id,
      num_before: 0,
      num_after: 0,
    });
    const [message] = page.body.messages as Array<{ reactions: unknown }>;
    assert.deepEqual(message.reactions, [
      shown(t.fx.member2, 'smile', '1f642'),
      shown(t.fx.owner, 'joy', '1f602'),
    ]);
  });

  test('with a code and type; an alias is a valid name for its code', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'hi');
    const res = await react(t.fx.member, id, {
      emoji_name: 'slight_smile',
      emoji_code: '1f642',
      reaction_type: 'unicode_emoji',
    });
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(await reactionsOf(t.fx.member, id), [
      shown(t.fx.member, 'slight_smile', '1f642'),
    ]);
  });

  test('a second reactor with the same emoji joins the first reaction, under its name', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'hi');
    await react(t.fx.member, id, { emoji_name: 'slight_smile' });
    await log.take();
    assert.deepEqual((await react(t.fx.admin, id, { emoji_name: 'smile' })).body, SUCCESS);
    assert.deepEqual(await log.take(), [
      {
        event: reactionEvent('add', t.fx.admin, id, { name: 'slight_smile', code: '1f642' }),
        users: EVERYONE(),
      },
    ]);
    // Even a name that does not fit the code: joining is not re-validated.
    assert.deepEqual(
      (
        await react(t.fx.owner, id, {
          emoji_name: 'whatever',
          emoji_code: '1f642',
          reaction_type: 'unicode_emoji',
        })
      ).body,
      SUCCESS,
    );
    assert.deepEqual(await reactionsOf(t.fx.member, id), [
      shown(t.fx.member, 'slight_smile', '1f642'),
      shown(t.fx.admin, 'slight_smile', '1f642'),
      shown(t.fx.owner, 'slight_smile', '1f642'),
    ]);
  });

  test('the built-in extra emoji, also under its legacy type name', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'hi');
    await log.take();
    assert.deepEqual((await react(t.fx.member, id, { emoji_name: 'zulip' })).body, SUCCESS);
    const extra = { name: 'zulip', code: 'zulip', type: 'svc_extra_emoji' };
    assert.deepEqual(await log.take(), [
      { event: reactionEvent('add', t.fx.member, id, extra), users: EVERYONE() },
    ]);
    const legacy = { emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' };
    assert.deepEqual((await react(t.fx.admin, id, legacy)).body, SUCCESS);
    assertError(
      await react(t.fx.admin, id, legacy),
      400,
      'REACTION_ALREADY_EXISTS',
      'Reaction already exists.',
    );
    assert.deepEqual(await reactionsOf(t.fx.member, id), [
      shown(t.fx.member, 'zulip', 'zulip', 'svc_extra_emoji'),
      shown(t.fx.admin, 'zulip', 'zulip', 'svc_extra_emoji'),
    ]);
  });

  test('errors: emoji names, codes and types', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'hi');
    await log.take();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ emoji_name: 'no_such_emoji' }, "Emoji 'no_such_emoji' does not exist"],
      // Without both a code and a type, the name is looked up.
      [
        { emoji_name: 'no_such_emoji', emoji_code: '1f642' },
        "Emoji 'no_such_emoji' does not exist",
      ],
      [
        { emoji_name: 'no_such_emoji', emoji_code: '1f642', reaction_type: 'unicode_emoji' },
        'Invalid emoji name.',
      ],
      [{ emoji_name: 'smile', emoji_code: 'ffffff' }, 'Invalid emoji code.'],
      // A code with the variation selector is not the canonical code.
      [{ emoji_name: 'relaxed', emoji_code: '263a-fe0f' }, 'Invalid emoji code.'],
      [
        { emoji_name: 'smile', emoji_code: '1f642', reaction_type: 'sticker' },
        'Invalid emoji type.',
      ],
      [
        { emoji_name: 'party', emoji_code: '1', reaction_type: 'realm_emoji' },
        'Invalid custom emoji.',
      ],
      [
        { emoji_name: 'zulip', emoji_code: 'parley', reaction_type: 'svc_extra_emoji' },
        'Invalid emoji code.',
      ],
      [
        { emoji_name: 'smile', emoji_code: 'zulip', reaction_type: 'svc_extra_emoji' },
        'Invalid emoji name.',
      ],
      [{ emoji_name: 'smile', reaction_type: 'sticker' }, 'Invalid emoji type.'],
      // Names every object inherits are no types either.
      [{ emoji_name: 'smile', reaction_type: 'constructor' }, 'Invalid emoji type.'],
      [
        { emoji_name: 'smile', emoji_code: '1f642', reaction_type: '__proto__' },
        'Invalid emoji type.',
      ],
      [
        { emoji_name: 'smile', emoji_code: '1f642', reaction_type: 'hasOwnProperty' },
        'Invalid emoji type.',
      ],
    ];
    for (const [params, msg] of cases) {
      assertError(await react(t.fx.member, id, params), 400, 'BAD_REQUEST', msg);
    }
    const missing = await react(t.fx.member, id, {});
    assert.deepEqual(
      { status: missing.status, body: missing.body },
      {
        status: 400,
        body: {
          result: 'error',
          msg: "Missing 'emoji_name' argument",
          code: 'REQUEST_VARIABLE_MISSING',
          var_name: 'emoji_name',
        },
      },
    );
    assert.deepEqual(await reactionsOf(t.fx.member, id), []);
    assert.deepEqual(await log.take(), []);
  });

  test('the same reaction twice', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'hi');
    await react(t.fx.member, id, { emoji_name: 'smile' });
    await log.take();
    for (const params of [{ emoji_name: 'smile' }, { emoji_name: 'slight_smile' }]) {
      assertError(
        await react(t.fx.member, id, params),
        400,
        'REACTION_ALREADY_EXISTS',
        'Reaction already exists.',
      );
    }
    assert.deepEqual(await log.take(), []);
  });

  test('unknown, unreadable and archived messages', async () => {
    const general = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'hi');
    const priv = await sendToChannel(t, t.fx.owner, t.fx.channels.private, 't', 'hush');
    const design = await sendToChannel(t, t.fx.admin, t.fx.channels.design, 't', 'x');
    const dm = await sendDirect(t, t.fx.member, [t.fx.member2], 'psst');
    await log.take();
    const refused: Array<[Credentials, number]> = [
      [t.fx.member, 999999],
      // Not subscribed to a private channel: an administrator sees it exist, not its messages.
      [t.fx.admin, priv],
      [t.fx.member2, priv],
      // A guest reads only the channels they are in.
      [t.fx.guest, design],
      [t.fx.owner, dm],
      [{ ...t.fx.otherOwner, host: 'other.parley.test' }, general],
    ];
    for (const [who, id] of refused) {
      assertError(
        await react(who, id, { emoji_name: 'smile' }),
        400,
        'BAD_REQUEST',
        INVALID_MESSAGE,
      );
      assertError(
        await unreact(who, id, { emoji_name: 'smile' }),
        400,
        'BAD_REQUEST',
        INVALID_MESSAGE,
      );
    }
    await react(t.fx.member, general, { emoji_name: 'smile' });
    await setChannel(t, t.fx.channels.general.id, { is_archived: 1 });
    await log.take();
    // Archived channels' messages can be read, not changed.
    assertError(
      await react(t.fx.admin, general, { emoji_name: 'smile' }),
      400,
      'BAD_REQUEST',
      INVALID_MESSAGE,
    );
    assertError(
      await unreact(t.fx.member, general, { emoji_name: 'smile' }),
      400,
      'BAD_REQUEST',
      INVALID_MESSAGE,
    );
    assert.deepEqual(await log.take(), []);
    assertError(
      await t.as(t.fx.member).post('/messages/abc/reactions', { emoji_name: 'smile' }),
      400,
      'BAD_REQUEST',
      'message_id is not an integer',
    );
  });

  test('a reader without a delivery row gets a historical one, and later events', async () => {
    // member2 is not subscribed to the public channel design.
    const id = await sendToChannel(t, t.fx.admin, t.fx.channels.design, 't', 'x');
    assert.equal((await rowsOf(t, id))[t.fx.member2.id], undefined);
    await log.take();
    assert.deepEqual((await react(t.fx.member2, id, { emoji_name: 'tada' })).status, 200);
    assert.equal((await rowsOf(t, id))[t.fx.member2.id], FLAG_BITS.read | FLAG_BITS.historical);
    const tada = { name: 'tada', code: '1f389' };
    assert.deepEqual(await log.take(), [
      {
        event: reactionEvent('add', t.fx.member2, id, tada),
        users: ids(t.fx.admin, t.fx.member, t.fx.member2),
      },
    ]);
    // The row stays: the reactor keeps hearing about the message.
    await react(t.fx.member, id, { emoji_name: 'tada' });
    assert.deepEqual((await log.take())[0].users, ids(t.fx.admin, t.fx.member, t.fx.member2));
    assert.deepEqual((await unreact(t.fx.member2, id, { emoji_name: 'tada' })).body, SUCCESS);
    assert.equal((await rowsOf(t, id))[t.fx.member2.id], FLAG_BITS.read | FLAG_BITS.historical);
  });

  test('who hears: a private channel tells its subscribers, not administrators', async () => {
    const id = await sendToChannel(t, t.fx.owner, t.fx.channels.private, 't', 'hush');
    await log.take();
    await react(t.fx.member, id, { emoji_name: 'smile' });
    assert.deepEqual(
      (await log.take()).map((s) => s.users),
      [ids(t.fx.owner, t.fx.member)],
    );
  });

  test('who hears: protected history tells only subscribers who received the message', async () => {
    const id = await sendToChannel(t, t.fx.moderator, t.fx.channels.secret, 't', 'old');
    const late = await addUser(t, 'Late Joiner', { channels: [t.fx.channels.secret.id] });
    await log.take();
    assertError(
      await react(late, id, { emoji_name: 'smile' }),
      400,
      'BAD_REQUEST',
      INVALID_MESSAGE,
    );
    await react(t.fx.member2, id, { emoji_name: 'smile' });
    assert.deepEqual(
      (await log.take()).map((s) => s.users),
      [ids(t.fx.moderator, t.fx.member2)],
    );
  });

  test('who hears: a direct message tells its participants', async () => {
    const id = await sendDirect(t, t.fx.member, [t.fx.member2, t.fx.guest], 'hi');
    await log.take();
    assert.deepEqual((await react(t.fx.guest, id, { emoji_name: 'smile' })).body, SUCCESS);
    assert.deepEqual(await log.take(), [
      {
        event: reactionEvent('add', t.fx.guest, id, { name: 'smile', code: '1f642' }),
        users: ids(t.fx.member, t.fx.member2, t.fx.guest),
      },
    ]);
  });

  for (const who of EVERY_CALLER) {
    test(`${who}: may react to a message they can read`, async () => {
      const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'hi');
      const res = await as(t, who).post(`/messages/${id}/reactions`, { emoji_name: 'smile' });
      if (assertUnauthorized(who, res)) {
        assert.deepEqual(await reactionsOf(t.fx.member, id), []);
        return;
      }
      assert.deepEqual(res.body, SUCCESS);
      const user = t.fx[who as Exclude<typeof who, 'badKey' | 'noAuth'>];
      assert.deepEqual(await reactionsOf(t.fx.member, id), [shown(user, 'smile', '1f642')]);
      const gone = await as(t, who).delete(`/messages/${id}/reactions`, { emoji_name: 'smile' });
      assert.deepEqual(gone.body, SUCCESS);
      assert.deepEqual(await reactionsOf(t.fx.member, id), []);
    });
  }

  test('unknown parameters are reported', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'hi');
    assert.deepEqual((await react(t.fx.member, id, { emoji_name: 'smile', colour: 'red' })).body, {
      ...SUCCESS,
      ignored_parameters_unsupported: ['colour'],
    });
  });
});

describe('DELETE /messages/{id}/reactions', () => {
  test('by name: the reaction goes, and every reader is told', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'hi');
    await react(t.fx.member2, id, { emoji_name: 'slight_smile' });
    await log.take();
    // Any name of the emoji finds it; the event names it as stored.
    assert.deepEqual((await unreact(t.fx.member2, id, { emoji_name: 'smile' })).body, SUCCESS);
    assert.deepEqual(await log.take(), [
      {
        event: reactionEvent('remove', t.fx.member2, id, { name: 'slight_smile', code: '1f642' }),
        users: EVERYONE(),
      },
    ]);
    assert.deepEqual(await reactionsOf(t.fx.member, id), []);
  });

  test('by code, with or without the type', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'hi');
    await react(t.fx.member, id, { emoji_name: 'smile' });
    await react(t.fx.member, id, { emoji_name: 'zulip' });
    assert.deepEqual((await unreact(t.fx.member, id, { emoji_code: '1f642' })).body, SUCCESS);
    assertError(
      await unreact(t.fx.member, id, { emoji_code: 'zulip' }),
      400,
      'REACTION_DOES_NOT_EXIST',
      "Reaction doesn't exist.",
    );
    const legacy = { emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' };
    assert.deepEqual((await unreact(t.fx.member, id, legacy)).body, SUCCESS);
    assert.deepEqual(await reactionsOf(t.fx.member, id), []);
  });

  test('the extra emoji by name alone', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'hi');
    await react(t.fx.member, id, { emoji_name: 'zulip' });
    await log.take();
    assert.deepEqual((await unreact(t.fx.member, id, { emoji_name: 'zulip' })).body, SUCCESS);
    assert.deepEqual(await log.take(), [
      {
        event: reactionEvent('remove', t.fx.member, id, {
          name: 'zulip',
          code: 'zulip',
          type: 'svc_extra_emoji',
        }),
        users: EVERYONE(),
      },
    ]);
  });

  test('errors: nothing named, an unknown name, a reaction one does not have', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'hi');
    await react(t.fx.member, id, { emoji_name: 'smile' });
    await log.take();
    assertError(
      await unreact(t.fx.member, id, {}),
      400,
      'BAD_REQUEST',
      'At least one of the following arguments must be present: emoji_name, emoji_code',
    );
    assertError(
      await unreact(t.fx.member, id, { emoji_name: 'no_such_emoji' }),
      400,
      'BAD_REQUEST',
      "Emoji 'no_such_emoji' does not exist",
    );
    // Someone else's reaction is not the caller's to remove.
    for (const params of [{ emoji_name: 'smile' }, { emoji_name: 'joy' }]) {
      assertError(
        await unreact(t.fx.member2, id, params),
        400,
        'REACTION_DOES_NOT_EXIST',
        "Reaction doesn't exist.",
      );
    }
    assertError(
      await unreact(t.fx.member, id, { emoji_code: '1f642', reaction_type: 'realm_emoji' }),
      400,
      'REACTION_DOES_NOT_EXIST',
      "Reaction doesn't exist.",
    );
    assert.deepEqual(await log.take(), []);
    assert.deepEqual(await reactionsOf(t.fx.member, id), [shown(t.fx.member, 'smile', '1f642')]);
  });

  test('deleting a message deletes its reactions', async () => {
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'hi');
    await react(t.fx.member, id, { emoji_name: 'smile' });
    assert.equal((await t.as(t.fx.member).delete(`/messages/${id}`)).status, 200);
    const left = await t.ctx.db
      .selectFrom('reactions')
      .select('id')
      .where('message_id', '=', id)
      .execute();
    assert.deepEqual(left, []);
  });
});
