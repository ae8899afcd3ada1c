// Administering channels: PATCH /streams/{id} (name, description, privacy, retention,
// topics policy, folder, permission groups, default status), with permissions, errors and
// the exact events and recipients (archiving: channels-archive.test.ts).
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { SUCCESS } from '../support/client.ts';
import { captureNotices, ids, type NoticeLog } from '../support/notices.ts';
import {
  assertError,
  channelRow,
  expectedChannel,
  subscribersOf,
  systemGroups,
} from '../support/channels.ts';

let t: TestApp;
let bus: NoticeLog;
beforeEach(async () => {
  t = await buildTestApp();
  bus = captureNotices(t);
});
afterEach(async () => {
  await t.close();
});

const streamUpdate = (channel: { id: number; name: string }, fields: Record<string, unknown>) => ({
  type: 'stream',
  op: 'update',
  stream_id: channel.id,
  name: channel.name,
  ...fields,
});

/** Everyone who can see a public channel: every active user but a guest who is not in it. */
const seesDesign = () =>
  ids(t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member, t.fx.member2, t.fx.bot);
const seesGeneral = () =>
  ids(t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member, t.fx.member2, t.fx.guest, t.fx.bot);

async function patch(who: keyof typeof t.fx, channelId: number, params: Record<string, unknown>) {
  return t.as(t.fx[who] as never).patch(`/streams/${channelId}`, params);
}

describe('PATCH /streams/{id}: who may', () => {
  test('members who can read the channel are told they cannot administer it', async () => {
    for (const who of ['member', 'member2', 'guest', 'bot'] as const) {
      const res = await patch(who, t.fx.channels.general.id, { description: 'x' });
      assertError(
        res,
        'You do not have permission to administer this channel.',
        'CANNOT_ADMINISTER_CHANNEL',
      );
    }
  });

  test('users who cannot see the channel find it unknown', async () => {
    assertError(
      await patch('member', t.fx.channels.secret.id, { description: 'x' }),
      'Invalid channel ID',
    );
    assertError(
      await patch('guest', t.fx.channels.design.id, { description: 'x' }),
      'Invalid channel ID',
    );
    assertError(await patch('admin', 99999, { description: 'x' }), 'Invalid channel ID');
    assertError(
      await patch('admin', t.fx.channels.otherGeneral.id, { description: 'x' }),
      'Invalid channel ID',
    );
  });

  test("the channel's administer group: its creator", async () => {
    // The moderator created secret and so administers it.
    const res = await patch('moderator', t.fx.channels.secret.id, { description: 'Hush.' });
    assert.deepEqual(res.body, SUCCESS, res.text);
    // ...but not general, which the owner created.
    assertError(
      await patch('moderator', t.fx.channels.general.id, { description: 'x' }),
      'You do not have permission to administer this channel.',
      'CANNOT_ADMINISTER_CHANNEL',
    );
  });

  test('organization administrators administer every channel, even private ones they are not in', async () => {
    const res = await patch('admin', t.fx.channels.secret.id, { new_name: 'hidden' });
    assert.deepEqual(res.body, SUCCESS, res.text);
    assert.equal((await channelRow(t, t.fx.channels.secret.id)).name, 'hidden');
  });

  test('nothing to change: success and no events', async () => {
    const res = await patch('admin', t.fx.channels.design.id, {});
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(await bus.take(), []);
  });
});

describe('PATCH /streams/{id}: name and description', () => {
  test('rename: one update to everyone who can see the channel, named by the old name', async () => {
    const res = await patch('admin', t.fx.channels.general.id, { new_name: '  lobby ' });
    assert.deepEqual(res.body, SUCCESS, res.text);
    assert.deepEqual(await bus.take(), [
      {
        event: streamUpdate(t.fx.channels.general, { property: 'name', value: 'lobby' }),
        users: seesGeneral(),
      },
    ]);
    const got = await t.as(t.fx.member).get(`/streams/${t.fx.channels.general.id}`);
    assert.deepEqual(got.body.stream, await expectedChannel(t, 'general', { name: 'lobby' }));
  });

  test('a change of case only is allowed; the same name is not', async () => {
    assert.deepEqual(
      (await patch('admin', t.fx.channels.design.id, { new_name: 'Design' })).body,
      SUCCESS,
    );
    assertError(
      await patch('admin', t.fx.channels.design.id, { new_name: 'Design' }),
      'Channel already has that name.',
    );
  });

  test('two channels renamed to one name at once: one is, the other is told the name exists', async () => {
    const [design, secret] = [t.fx.channels.design, t.fx.channels.secret];
    const before = {
      design: await channelRow(t, design.id),
      secret: await channelRow(t, secret.id),
    };
    const answers = await Promise.all([
      patch('admin', design.id, { new_name: 'plans', description: 'Plans' }),
      patch('admin', secret.id, { new_name: 'plans', description: 'Plans' }),
    ]);
    // Either may come first: on PostgreSQL the two transactions take turns in no set order.
    const winner = answers.findIndex((res) => res.body.result === 'success');
    assert.notEqual(winner, -1, 'one rename succeeds');
    assert.deepEqual(answers[winner]!.body, SUCCESS);
    assertError(answers[1 - winner]!, "Channel 'plans' already exists");
    const [renamed, refused] = winner === 0 ? [design, secret] : [secret, design];
    const refusedBefore = winner === 0 ? before.secret : before.design;
    // Nothing of the refused change is kept: not its description either.
    assert.equal((await channelRow(t, renamed.id)).name, 'plans');
    const refusedAfter = await channelRow(t, refused.id);
    assert.deepEqual(
      [refusedAfter.name, refusedAfter.description],
      [refusedBefore.name, refusedBefore.description],
    );
  });

  test('names are checked', async () => {
    const id = t.fx.channels.design.id;
    assertError(
      await patch('admin', id, { new_name: 'GENERAL' }),
      "Channel 'GENERAL' already exists",
    );
    assertError(await patch('admin', id, { new_name: '   ' }), "Channel name can't be empty.");
    assertError(
      await patch('admin', id, { new_name: 'x'.repeat(61) }),
      'Channel name too long (limit: 60 characters).',
    );
    assertError(
      await patch('admin', id, { new_name: 'a\u0007b' }),
      'Invalid character in channel name, at position 2.',
    );
    assert.deepEqual(await bus.take(), []);
  });

  test('description: Markdown rendered, newlines become spaces', async () => {
    const res = await patch('admin', t.fx.channels.design.id, {
      description: 'Pixels\nand **type**',
    });
    assert.deepEqual(res.body, SUCCESS, res.text);
    assert.deepEqual(await bus.take(), [
      {
        event: streamUpdate(t.fx.channels.design, {
          property: 'description',
          value: 'Pixels and **type**',
          rendered_description: '<p>Pixels and <strong>type</strong></p>',
        }),
        users: seesDesign(),
      },
    ]);
    assertError(
      await patch('admin', t.fx.channels.design.id, { description: 'x'.repeat(1025) }),
      'description is too long (limit: 1024 characters)',
    );
  });
});

describe('PATCH /streams/{id}: privacy', () => {
  test('private to public: new viewers get the channel and its subscribers', async () => {
    const res = await patch('owner', t.fx.channels.private.id, { is_private: false });
    assert.deepEqual(res.body, SUCCESS, res.text);
    const now = await expectedChannel(t, 'private', { invite_only: false });
    assert.deepEqual(await bus.take(), [
      {
        event: { type: 'stream', op: 'create', streams: [now] },
        users: ids(t.fx.moderator, t.fx.member2, t.fx.bot),
      },
      {
        event: {
          type: 'subscription',
          op: 'peer_add',
          stream_ids: [t.fx.channels.private.id],
          user_ids: subscribersOf(t, 'private'),
          __only_with_subscribers: true,
        },
        users: ids(t.fx.moderator, t.fx.member2, t.fx.bot),
      },
      {
        event: streamUpdate(t.fx.channels.private, {
          property: 'invite_only',
          value: false,
          history_public_to_subscribers: true,
          is_web_public: false,
        }),
        users: ids(t.fx.owner, t.fx.admin, t.fx.member),
      },
    ]);
  });

  test('public to private protects history by default; outsiders lose the channel', async () => {
    const res = await patch('admin', t.fx.channels.design.id, { is_private: true });
    assert.deepEqual(res.body, SUCCESS, res.text);
    assert.deepEqual(await bus.take(), [
      {
        event: {
          type: 'stream',
          op: 'delete',
          streams: [{ stream_id: t.fx.channels.design.id }],
          stream_ids: [t.fx.channels.design.id],
        },
        users: ids(t.fx.moderator, t.fx.member2, t.fx.bot),
      },
      {
        event: streamUpdate(t.fx.channels.design, {
          property: 'invite_only',
          value: true,
          history_public_to_subscribers: false,
          is_web_public: false,
        }),
        users: ids(t.fx.owner, t.fx.admin, t.fx.member),
      },
    ]);
    const row = await channelRow(t, t.fx.channels.design.id);
    assert.equal(row.history_public_to_subscribers, 0);
  });

  test('history can be shared explicitly', async () => {
    await patch('admin', t.fx.channels.design.id, {
      is_private: true,
      history_public_to_subscribers: true,
    });
    assert.equal((await channelRow(t, t.fx.channels.design.id)).history_public_to_subscribers, 1);
  });

  test('inconsistent combinations are refused', async () => {
    const id = t.fx.channels.design.id;
    assertError(
      await patch('admin', id, { history_public_to_subscribers: false }),
      'Invalid parameters',
    );
    assertError(
      await patch('admin', id, { is_private: false, history_public_to_subscribers: false }),
      'Invalid parameters',
    );
    await t.as(t.fx.admin).post('/default_streams', { stream_id: id });
    await bus.take();
    assertError(
      await patch('admin', id, { is_private: true }),
      'A default channel cannot be private.',
    );
    assert.deepEqual(await bus.take(), []);
  });

  test('changing privacy needs access to the messages', async () => {
    assertError(
      await patch('admin', t.fx.channels.secret.id, { is_private: false }),
      'Channel content access is required.',
    );
  });

  test('changing privacy needs the matching channel-creation permission', async () => {
    const g = await systemGroups(t);
    await t.as(t.fx.owner).patch('/realm', {
      can_create_private_channel_group: { new: g['role:owners'] },
    });
    assertError(
      await patch('admin', t.fx.channels.design.id, { is_private: true }),
      'Insufficient permission',
    );
  });

  test('the moderation request channel must stay private', async () => {
    await t
      .as(t.fx.admin)
      .patch('/realm', { moderation_request_channel_id: t.fx.channels.private.id });
    assertError(
      await patch('owner', t.fx.channels.private.id, { is_private: false }),
      'Moderation request channel must be private.',
    );
  });

  test('web-public needs spectator access and the web-public permission', async () => {
    const id = t.fx.channels.design.id;
    assertError(
      await patch('owner', id, { is_web_public: true }),
      'Web-public channels are not enabled.',
    );
    await t.as(t.fx.owner).patch('/realm', { enable_spectator_access: true });
    assertError(await patch('admin', id, { is_web_public: true }), 'Insufficient permission');
    await bus.take();
    assert.deepEqual((await patch('owner', id, { is_web_public: true })).body, SUCCESS);
    // The guest can now see it.
    assert.deepEqual(await bus.take(), [
      {
        event: {
          type: 'stream',
          op: 'create',
          streams: [await expectedChannel(t, 'design', { is_web_public: true })],
        },
        users: ids(t.fx.guest),
      },
      {
        event: {
          type: 'subscription',
          op: 'peer_add',
          stream_ids: [id],
          user_ids: subscribersOf(t, 'design'),
          __only_with_subscribers: true,
        },
        users: ids(t.fx.guest),
      },
      {
        event: streamUpdate(t.fx.channels.design, {
          property: 'invite_only',
          value: false,
          history_public_to_subscribers: true,
          is_web_public: true,
        }),
        users: seesDesign(),
      },
    ]);
    assertError(await patch('owner', id, { is_private: true }), 'Invalid parameters');
  });
});

describe('PATCH /streams/{id}: retention, topics policy, folder, default', () => {
  test('message_retention_days: owners only; days, "unlimited" and "realm_default"', async () => {
    const id = t.fx.channels.design.id;
    assertError(
      await patch('admin', id, { message_retention_days: 30 }),
      'Must be an organization owner',
      'UNAUTHORIZED_PRINCIPAL',
    );
    for (const [sent, stored] of [
      [30, 30],
      ['unlimited', -1],
      ['realm_default', null],
    ] as const) {
      assert.deepEqual((await patch('owner', id, { message_retention_days: sent })).body, SUCCESS);
      assert.deepEqual(await bus.take(), [
        {
          event: streamUpdate(t.fx.channels.design, {
            property: 'message_retention_days',
            value: stored,
          }),
          users: seesDesign(),
        },
      ]);
      assert.equal((await channelRow(t, id)).message_retention_days, stored);
    }
    for (const bad of [0, -5, 'forever']) {
      assertError(
        await patch('owner', id, { message_retention_days: bad }),
        `Bad value for 'message_retention_days': ${bad}`,
        'REQUEST_VARIABLE_INVALID',
        { var_name: 'message_retention_days', bad_value: bad },
      );
    }
  });

  test('topics_policy: changes announced; no event when unchanged', async () => {
    const id = t.fx.channels.design.id;
    assert.deepEqual(
      (await patch('admin', id, { topics_policy: 'disable_empty_topic' })).body,
      SUCCESS,
    );
    assert.deepEqual(await bus.take(), [
      {
        event: streamUpdate(t.fx.channels.design, {
          property: 'topics_policy',
          value: 'disable_empty_topic',
        }),
        users: seesDesign(),
      },
    ]);
    assert.deepEqual(
      (await patch('admin', id, { topics_policy: 'disable_empty_topic' })).body,
      SUCCESS,
    );
    assert.deepEqual(await bus.take(), []);
    assertError(await patch('admin', id, { topics_policy: 'sometimes' }), 'Invalid topics_policy');
  });

  test('empty_topic_only only when every message is in the empty topic', async () => {
    const id = t.fx.channels.design.id;
    const row = await channelRow(t, id);
    const message = (topic: string) =>
      t.ctx.db
        .insertInto('messages')
        .values({
          realm_id: t.fx.realm.id,
          recipient_id: row.recipient_id!,
          channel_id: id,
          sender_id: t.fx.admin.id,
          topic,
          content: 'hi',
          rendered_content: '<p>hi</p>',
          date_sent: 1,
          sending_client: 'test',
          is_me_message: 0,
          has_link: 0,
          has_image: 0,
          has_attachment: 0,
        })
        .execute();
    await message('');
    assert.deepEqual(
      (await patch('admin', id, { topics_policy: 'empty_topic_only' })).body,
      SUCCESS,
    );
    await patch('admin', id, { topics_policy: 'inherit' });
    await message('plans');
    assertError(
      await patch('admin', id, { topics_policy: 'empty_topic_only' }),
      'To enable this configuration, all messages in this channel must be in the "general chat" topic. Consider renaming or deleting other topics.',
    );
  });

  test('folder_id: null leaves the folder; folders do not exist yet', async () => {
    const id = t.fx.channels.design.id;
    assert.deepEqual((await patch('admin', id, { folder_id: null })).body, SUCCESS);
    assert.deepEqual(await bus.take(), [
      {
        event: streamUpdate(t.fx.channels.design, { property: 'folder_id', value: null }),
        users: seesDesign(),
      },
    ]);
    assertError(await patch('admin', id, { folder_id: 3 }), 'Invalid channel folder ID');
  });

  test('is_default_stream: administrators only', async () => {
    const id = t.fx.channels.design.id;
    assert.deepEqual((await patch('admin', id, { is_default_stream: true })).body, SUCCESS);
    assert.deepEqual(await bus.take(), [
      { event: { type: 'default_streams', default_streams: [id] }, users: seesGeneral() },
    ]);
    assert.deepEqual((await patch('admin', id, { is_default_stream: false })).body, SUCCESS);
    assert.deepEqual(await bus.take(), [
      { event: { type: 'default_streams', default_streams: [] }, users: seesGeneral() },
    ]);
    assertError(
      await patch('moderator', t.fx.channels.secret.id, { is_default_stream: false }),
      'Must be an organization administrator',
      'UNAUTHORIZED_PRINCIPAL',
    );
  });

  test('is_archived=false on a channel that is not archived', async () => {
    assertError(
      await patch('admin', t.fx.channels.design.id, { is_archived: false }),
      'Channel is not currently deactivated',
    );
  });
});

describe('PATCH /streams/{id}: permission groups', () => {
  test('can_send_message_group: the setting, and the legacy post policy it implies', async () => {
    const g = await systemGroups(t);
    const res = await patch('owner', t.fx.channels.general.id, {
      can_send_message_group: { new: g['role:administrators'], old: g['role:everyone'] },
    });
    assert.deepEqual(res.body, SUCCESS, res.text);
    const general = t.fx.channels.general;
    assert.deepEqual(await bus.take(), [
      {
        event: streamUpdate(general, {
          property: 'can_send_message_group',
          value: g['role:administrators'],
        }),
        users: seesGeneral(),
      },
      {
        event: streamUpdate(general, { property: 'stream_post_policy', value: 2 }),
        users: seesGeneral(),
      },
      {
        event: streamUpdate(general, { property: 'is_announcement_only', value: true }),
        users: seesGeneral(),
      },
    ]);
  });

  test('an anonymous group, and no event when the value does not change', async () => {
    const id = t.fx.channels.design.id;
    const value = { direct_members: [t.fx.member.id], direct_subgroups: [] };
    assert.deepEqual(
      (await patch('admin', id, { can_remove_subscribers_group: { new: value } })).body,
      SUCCESS,
    );
    assert.deepEqual(await bus.take(), [
      {
        event: streamUpdate(t.fx.channels.design, {
          property: 'can_remove_subscribers_group',
          value,
        }),
        users: seesDesign(),
      },
    ]);
    assert.deepEqual(
      (await patch('admin', id, { can_remove_subscribers_group: { new: value, old: value } })).body,
      SUCCESS,
    );
    assert.deepEqual(await bus.take(), []);
  });

  test('a channel read after each change of an anonymous group setting shows the change', async () => {
    // Group settings are presented from the organization's groups as cached reads: a read
    // before each change must not be given again after it.
    const g = await systemGroups(t);
    const id = t.fx.channels.design.id;
    const read = async () => {
      const res = await t.as(t.fx.admin).get(`/streams/${id}`);
      return (res.body.stream as Record<string, unknown>).can_remove_subscribers_group;
    };
    const values = [
      { direct_members: [t.fx.member.id], direct_subgroups: [] },
      {
        direct_members: [t.fx.member.id, t.fx.member2.id],
        direct_subgroups: [g['role:moderators']],
      },
      g['role:administrators'],
      { direct_members: [t.fx.member2.id], direct_subgroups: [] },
    ];
    assert.equal(typeof (await read()), 'number');
    for (const value of values) {
      const res = await patch('admin', id, { can_remove_subscribers_group: { new: value } });
      assert.deepEqual(res.body, SUCCESS, res.text);
      assert.deepEqual(await read(), value);
    }
  });

  test("'old' must match, groups must exist and be allowed", async () => {
    const g = await systemGroups(t);
    const id = t.fx.channels.design.id;
    assertError(
      await patch('admin', id, {
        can_send_message_group: { new: g['role:members'], old: g['role:nobody'] },
      }),
      "'old' value does not match the expected value.",
      'EXPECTATION_MISMATCH',
    );
    assertError(
      await patch('admin', id, { can_send_message_group: { new: 99999 } }),
      'Invalid user group',
    );
    assertError(
      await patch('admin', id, { can_send_message_group: { new: g['role:internet'] } }),
      "'can_send_message_group' setting cannot be set to 'role:internet' group.",
    );
    assertError(
      await patch('admin', id, { can_administer_channel_group: { new: g['role:everyone'] } }),
      "'can_administer_channel_group' setting cannot be set to 'role:everyone' group.",
    );
    assertError(
      await patch('admin', id, { can_send_message_group: 5 }),
      'can_send_message_group is not a dict',
    );
  });

  test('granting sight of a private channel: create and subscribers for the new viewer', async () => {
    const id = t.fx.channels.secret.id;
    const value = { direct_members: [t.fx.member.id], direct_subgroups: [] };
    const res = await patch('moderator', id, { can_add_subscribers_group: { new: value } });
    assert.deepEqual(res.body, SUCCESS, res.text);
    assert.deepEqual(await bus.take(), [
      {
        event: {
          type: 'stream',
          op: 'create',
          streams: [await expectedChannel(t, 'secret', { can_add_subscribers_group: value })],
        },
        users: ids(t.fx.member),
      },
      {
        event: {
          type: 'subscription',
          op: 'peer_add',
          stream_ids: [id],
          user_ids: subscribersOf(t, 'secret'),
          __only_with_subscribers: true,
        },
        users: ids(t.fx.member),
      },
      {
        event: streamUpdate(t.fx.channels.secret, { property: 'can_add_subscribers_group', value }),
        users: ids(t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member2),
      },
    ]);
    // And taking it away again.
    const g = await systemGroups(t);
    await patch('moderator', id, { can_add_subscribers_group: { new: g['role:nobody'] } });
    const events = await bus.take();
    assert.deepEqual(events[0], {
      event: { type: 'stream', op: 'delete', streams: [{ stream_id: id }], stream_ids: [id] },
      users: ids(t.fx.member),
    });
  });

  test('settings that grant access to messages need access to the messages', async () => {
    const g = await systemGroups(t);
    assertError(
      await patch('admin', t.fx.channels.secret.id, {
        can_subscribe_group: { new: g['role:members'] },
      }),
      'Channel content access is required.',
    );
    // Other settings only need the right to administer.
    assert.deepEqual(
      (
        await patch('admin', t.fx.channels.secret.id, {
          can_send_message_group: { new: g['role:members'] },
        })
      ).body,
      SUCCESS,
    );
  });
});
