// PATCH /realm: organization settings, who may change them, the values each accepts, and
// the realm events each change publishes.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import type { Client } from '../support/client.ts';
import { captureNotices, ids, type NoticeLog } from '../support/notices.ts';
import { callerFor, err, EVERY_CALLER, OK, UNAUTHORIZED, type Who } from '../support/callers.ts';

let t: TestApp;
let bus: NoticeLog;
beforeEach(async () => {
  t = await buildTestApp();
  bus = captureNotices(t);
});
afterEach(async () => {
  await t.close();
});

const as = (who: Who): Client => callerFor(t, who);
const mustBeAdmin = err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
const mustBeOwner = err('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL');
const everyone = () =>
  ids(t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member, t.fx.member2, t.fx.guest, t.fx.bot);

const update = (property: string, value: unknown) => ({
  event: { type: 'realm', op: 'update', property, value },
  users: everyone(),
});
const updateDict = (data: Record<string, unknown>) => ({
  event: { type: 'realm', op: 'update_dict', property: 'default', data },
  users: everyone(),
});

async function groupId(name: string): Promise<number> {
  const row = await t.ctx.db
    .selectFrom('user_groups')
    .select('id')
    .where('realm_id', '=', t.fx.realm.id)
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  return row.id;
}

/** The setting as stored (group settings as the group id they hold). */
async function stored(name: string): Promise<unknown> {
  const row = await t.ctx.db
    .selectFrom('realms')
    .select('settings')
    .where('id', '=', t.fx.realm.id)
    .executeTakeFirstOrThrow();
  return (JSON.parse(row.settings) as Record<string, unknown>)[name];
}

describe('name and description', () => {
  test('a new name and description are announced and shown', async () => {
    const res = await as('admin').patch('/realm', {
      name: '  Renamed Org ',
      description: 'New **words**',
    });
    assert.deepEqual(res.body, { ...OK, name: 'updated', description: 'updated' });
    assert.deepEqual(await bus.take(), [
      update('name', 'Renamed Org'),
      update('description', 'New **words**'),
    ]);
    const settings = await t.as(null).get('/server_settings');
    assert.equal(settings.body.realm_name, 'Renamed Org');
    assert.equal(settings.body.realm_description, '<p>New **words**</p>');
    const same = await as('admin').patch('/realm', { name: 'Renamed Org' });
    assert.deepEqual(same.body, OK);
    assert.deepEqual(await bus.take(), []);
  });

  test('refused names and descriptions', async () => {
    const cases: Array<[Record<string, unknown>, Record<string, unknown>]> = [
      [{ name: '   ' }, err('Organization name cannot be blank')],
      [{ name: 'n'.repeat(41) }, err('name is too long (limit: 40 characters)')],
      [{ description: 'd'.repeat(1001) }, err('description is too long (limit: 1000 characters)')],
    ];
    for (const [body, expected] of cases) {
      const res = await as('owner').patch('/realm', body);
      assert.deepEqual([res.status, res.body], [400, expected]);
    }
  });
});

describe('scalar settings', () => {
  const cases: Array<[string, unknown, 'update' | 'update_dict']> = [
    ['presence_disabled', true, 'update'],
    ['topics_policy', 'disable_empty_topic', 'update'],
    ['message_edit_history_visibility_policy', 'moves', 'update'],
    ['allow_message_editing', false, 'update_dict'],
    ['message_content_edit_limit_seconds', 1200, 'update_dict'],
    ['message_content_delete_limit_seconds', 600, 'update'],
    ['move_messages_within_stream_limit_seconds', 3600, 'update'],
    ['move_messages_between_streams_limit_seconds', 3600, 'update'],
    ['enable_read_receipts', false, 'update'],
    ['require_unique_names', true, 'update'],
    ['default_language', 'fr', 'update'],
    ['video_chat_provider', 0, 'update'],
  ];
  for (const [name, value, op] of cases) {
    test(`${name}: stored and announced (${op}); the same value again is no change`, async () => {
      const res = await as('admin').patch('/realm', { [name]: value });
      assert.deepEqual(res.body, {
        ...OK,
        [name]: typeof value === 'string' ? 'updated' : value,
      });
      assert.deepEqual(await bus.take(), [
        op === 'update' ? update(name, value) : updateDict({ [name]: value }),
      ]);
      assert.deepEqual(await stored(name), value);
      assert.deepEqual((await as('admin').patch('/realm', { [name]: value })).body, OK);
      assert.deepEqual(await bus.take(), []);
    });
  }

  test('time limits take "unlimited", stored as null', async () => {
    const res = await as('admin').patch('/realm', {
      message_content_edit_limit_seconds: 'unlimited',
      move_messages_within_stream_limit_seconds: 'unlimited',
    });
    assert.deepEqual(res.body, {
      ...OK,
      message_content_edit_limit_seconds: null,
      move_messages_within_stream_limit_seconds: null,
    });
    assert.deepEqual(await bus.take(), [
      updateDict({ message_content_edit_limit_seconds: null }),
      update('move_messages_within_stream_limit_seconds', null),
    ]);
    assert.equal(await stored('message_content_edit_limit_seconds'), null);
    // The delete limit is unlimited already.
    const same = await as('admin').patch('/realm', {
      message_content_delete_limit_seconds: 'unlimited',
    });
    assert.deepEqual(same.body, OK);
  });

  test('refused time limits name the bad value', async () => {
    for (const bad of [0, -5, 'forever', true]) {
      const res = await as('admin').patch('/realm', { message_content_edit_limit_seconds: bad });
      assert.deepEqual(
        [res.status, res.body],
        [
          400,
          err(
            `Bad value for 'message_content_edit_limit_seconds': ${String(bad)}`,
            'REQUEST_VARIABLE_INVALID',
            {
              var_name: 'message_content_edit_limit_seconds',
              bad_value: typeof bad === 'boolean' ? String(bad) : bad,
            },
          ),
        ],
        String(bad),
      );
    }
  });

  test('other refused values', async () => {
    const cases: Array<[Record<string, unknown>, Record<string, unknown>]> = [
      [{ topics_policy: 'anything_goes' }, err('Invalid topics_policy')],
      [
        { message_edit_history_visibility_policy: 'some' },
        err('Invalid message_edit_history_visibility_policy'),
      ],
      [{ default_language: 'xx' }, err("Invalid language 'xx'")],
      [{ video_chat_provider: 7 }, err('Invalid video_chat_provider 7')],
      [{ presence_disabled: 'maybe' }, err('presence_disabled is not a boolean')],
      [
        { moderation_request_channel_id: 'general' },
        err('moderation_request_channel_id is not an integer'),
      ],
      [{ moderation_request_channel_id: -2 }, err('Invalid moderation_request_channel_id')],
      [{ empty_topic_display_name: '   ' }, err('Invalid empty_topic_display_name')],
      [{ empty_topic_display_name: 'e'.repeat(61) }, err('Invalid empty_topic_display_name')],
      // Nothing changes when one value of several is refused.
      [{ presence_disabled: true, topics_policy: 'nope' }, err('Invalid topics_policy')],
    ];
    for (const [body, expected] of cases) {
      const res = await as('owner').patch('/realm', body);
      assert.deepEqual([res.status, res.body], [400, expected], JSON.stringify(body));
    }
    assert.deepEqual(await bus.take(), []);
    assert.equal(await stored('presence_disabled'), false);
  });

  test('the empty topic display name, under its name or the register name', async () => {
    const res = await as('admin').patch('/realm', { empty_topic_display_name: ' lobby ' });
    assert.deepEqual(res.body, { ...OK, empty_topic_display_name: 'updated' });
    assert.deepEqual(await bus.take(), [update('empty_topic_display_name', 'lobby')]);
    const alias = await as('admin').patch('/realm', { realm_empty_topic_display_name: 'hall' });
    assert.deepEqual(alias.body, { ...OK, empty_topic_display_name: 'updated' });
    assert.deepEqual(await bus.take(), [update('empty_topic_display_name', 'hall')]);
    const both = await as('admin').patch('/realm', {
      empty_topic_display_name: 'a',
      realm_empty_topic_display_name: 'b',
    });
    assert.deepEqual(
      both.body,
      err(
        "Can't decide between 'empty_topic_display_name' and 'realm_empty_topic_display_name' arguments",
        'REQUEST_CONFUSING_VAR',
        { var_name1: 'empty_topic_display_name', var_name2: 'realm_empty_topic_display_name' },
      ),
    );
  });

  test('moderation_request_channel_id names a channel the administrator can see, or -1', async () => {
    for (const id of [t.fx.channels.general.id, t.fx.channels.secret.id]) {
      const res = await as('admin').patch('/realm', { moderation_request_channel_id: id });
      assert.deepEqual(res.body, { ...OK, moderation_request_channel_id: id });
      assert.deepEqual(await bus.take(), [update('moderation_request_channel_id', id)]);
    }
    const none = await as('admin').patch('/realm', { moderation_request_channel_id: -1 });
    assert.deepEqual(none.body, { ...OK, moderation_request_channel_id: -1 });
    assert.deepEqual(await bus.take(), [update('moderation_request_channel_id', -1)]);
    for (const id of [99999, t.fx.channels.otherGeneral.id]) {
      const res = await as('admin').patch('/realm', { moderation_request_channel_id: id });
      assert.deepEqual([res.status, res.body], [400, err('Invalid channel ID')]);
    }
  });

  test('message_retention_days: owners only; "unlimited" or a positive number', async () => {
    assert.deepEqual(
      (await as('admin').patch('/realm', { message_retention_days: 30 })).body,
      mustBeOwner,
    );
    const res = await as('owner').patch('/realm', { message_retention_days: 30 });
    assert.deepEqual(res.body, { ...OK, message_retention_days: 30 });
    assert.deepEqual(await bus.take(), [update('message_retention_days', 30)]);
    const back = await as('owner').patch('/realm', { message_retention_days: 'unlimited' });
    assert.deepEqual(back.body, { ...OK, message_retention_days: -1 });
    assert.deepEqual(await bus.take(), [update('message_retention_days', -1)]);
    const zero = await as('owner').patch('/realm', { message_retention_days: 0 });
    assert.deepEqual(
      zero.body,
      err("Bad value for 'message_retention_days': 0", 'REQUEST_VARIABLE_INVALID', {
        var_name: 'message_retention_days',
        bad_value: 0,
      }),
    );
  });

  test('owner-only scalars refuse administrators', async () => {
    for (const body of [
      { invite_required: false },
      { waiting_period_threshold: 3 },
      { emails_restricted_to_domains: true },
      { disallow_disposable_email_addresses: false },
    ]) {
      assert.deepEqual((await as('admin').patch('/realm', body)).body, mustBeOwner);
      assert.equal((await as('owner').patch('/realm', body)).status, 200);
    }
  });
});

describe('group-permission settings', () => {
  const SETTINGS = [
    'can_create_groups',
    'can_invite_users_group',
    'create_multiuse_invite_group',
    'can_add_custom_emoji_group',
    'can_create_bots_group',
    'can_create_public_channel_group',
    'can_create_private_channel_group',
    'can_access_all_users_group',
    'can_manage_all_groups',
    'can_delete_any_message_group',
    'can_delete_own_message_group',
    'can_move_messages_between_topics_group',
    'can_move_messages_between_channels_group',
  ];
  const OWNER_ONLY = [
    'can_create_groups',
    'can_invite_users_group',
    'create_multiuse_invite_group',
    'can_manage_all_groups',
  ];

  for (const name of SETTINGS) {
    test(`${name}: a system group, announced as update_dict; old must match`, async () => {
      const current = (await stored(name)) as number;
      const target =
        name === 'can_access_all_users_group'
          ? 'role:members'
          : current === (await groupId('role:administrators'))
            ? 'role:moderators'
            : 'role:administrators';
      const id = await groupId(target);
      const caller = OWNER_ONLY.includes(name) ? 'owner' : 'admin';
      const stale = await as(caller).patch('/realm', { [name]: { new: id, old: current + 1000 } });
      assert.deepEqual(
        stale.body,
        err("'old' value does not match the expected value.", 'EXPECTATION_MISMATCH'),
      );
      const res = await as(caller).patch('/realm', { [name]: { new: id, old: current } });
      assert.deepEqual(res.body, { ...OK, [name]: id });
      assert.deepEqual(await bus.take(), [updateDict({ [name]: id })]);
      assert.equal(await stored(name), id);
      const same = await as(caller).patch('/realm', { [name]: { new: id } });
      assert.deepEqual(same.body, OK);
      assert.deepEqual(await bus.take(), []);
      if (OWNER_ONLY.includes(name)) {
        const byAdmin = await as('admin').patch('/realm', { [name]: { new: current } });
        assert.deepEqual(byAdmin.body, mustBeOwner);
      }
    });
  }

  test('an anonymous group of members and subgroups', async () => {
    const admins = await groupId('role:administrators');
    const value = { direct_members: [t.fx.member.id, t.fx.guest.id], direct_subgroups: [admins] };
    const res = await as('admin').patch('/realm', {
      can_create_bots_group: { new: { ...value, direct_members: [t.fx.guest.id, t.fx.member.id] } },
    });
    assert.deepEqual(res.body, { ...OK, can_create_bots_group: value });
    assert.deepEqual(await bus.take(), [updateDict({ can_create_bots_group: value })]);
    // The same members in another order, as old and new, are no change.
    const same = await as('admin').patch('/realm', {
      can_create_bots_group: {
        new: value,
        old: { ...value, direct_members: [t.fx.guest.id, t.fx.member.id] },
      },
    });
    assert.deepEqual(same.body, OK);
    assert.deepEqual(await bus.take(), []);
  });

  test('one subgroup and no members is that group; nothing at all is role:nobody', async () => {
    const moderators = await groupId('role:moderators');
    const res = await as('admin').patch('/realm', {
      can_create_bots_group: { new: { direct_members: [], direct_subgroups: [moderators] } },
    });
    assert.deepEqual(res.body, { ...OK, can_create_bots_group: moderators });
    const nobody = await as('admin').patch('/realm', {
      can_create_bots_group: { new: { direct_members: [], direct_subgroups: [] } },
    });
    const nobodyId = await groupId('role:nobody');
    assert.deepEqual(nobody.body, { ...OK, can_create_bots_group: nobodyId });
    assert.deepEqual(await bus.take(), [
      updateDict({ can_create_bots_group: moderators }),
      updateDict({ can_create_bots_group: nobodyId }),
    ]);
  });

  test('refused group values', async () => {
    const internet = await groupId('role:internet');
    const everyoneGroup = await groupId('role:everyone');
    const nobodyGroup = await groupId('role:nobody');
    const moderators = await groupId('role:moderators');
    const cases: Array<[Record<string, unknown>, Record<string, unknown>]> = [
      [{ can_create_bots_group: { new: 99999 } }, err('Invalid user group')],
      [
        { can_create_bots_group: { new: { direct_members: [99999], direct_subgroups: [] } } },
        err('Invalid user ID: 99999'),
      ],
      [
        {
          can_create_bots_group: {
            new: { direct_members: [t.fx.otherOwner.id], direct_subgroups: [] },
          },
        },
        err(`Invalid user ID: ${t.fx.otherOwner.id}`),
      ],
      [
        { can_create_bots_group: { new: internet } },
        err("'can_create_bots_group' setting cannot be set to 'role:internet' group."),
      ],
      [
        { can_invite_users_group: { new: everyoneGroup } },
        err("'can_invite_users_group' setting cannot be set to 'role:everyone' group."),
      ],
      [
        { can_manage_all_groups: { new: nobodyGroup } },
        err("'can_manage_all_groups' setting cannot be set to 'role:nobody' group."),
      ],
      [
        { can_access_all_users_group: { new: moderators } },
        err("'can_access_all_users_group' must be a system user group.", 'SYSTEM_GROUP_REQUIRED', {
          setting_name: 'can_access_all_users_group',
        }),
      ],
      [
        {
          can_access_all_users_group: {
            new: { direct_members: [t.fx.member.id], direct_subgroups: [] },
          },
        },
        err("'can_access_all_users_group' must be a system user group.", 'SYSTEM_GROUP_REQUIRED', {
          setting_name: 'can_access_all_users_group',
        }),
      ],
      [{ can_create_bots_group: moderators }, err('can_create_bots_group is not a dict')],
      [{ can_create_bots_group: '{"new": ' }, err('can_create_bots_group is not valid JSON')],
      [
        { can_create_bots_group: { old: moderators } },
        err('can_create_bots_group["new"] field is missing'),
      ],
      [
        { can_create_bots_group: { new: moderators, extra: 1 } },
        err('Argument "extra" at can_create_bots_group is unexpected'),
      ],
      [
        { can_create_bots_group: { new: 'moderators' } },
        err('Invalid can_create_bots_group["new"]'),
      ],
    ];
    for (const [body, expected] of cases) {
      const res = await as('owner').patch('/realm', body);
      assert.deepEqual([res.status, res.body], [400, expected], JSON.stringify(body));
    }
    assert.deepEqual(await bus.take(), []);
  });

  test('limiting guests hides users from them through /users', async () => {
    const members = await groupId('role:members');
    const res = await as('admin').patch('/realm', { can_access_all_users_group: { new: members } });
    assert.deepEqual(res.body, { ...OK, can_access_all_users_group: members });
    await t.ctx.db
      .updateTable('subscriptions')
      .set({ active: 0 })
      .where('user_id', '=', t.fx.guest.id)
      .execute();
    const read = await as('guest').get(`/users/${t.fx.member.id}`);
    assert.deepEqual(read.body, err('Insufficient permission'));
  });
});

describe('who may change organization settings', () => {
  test('administrators and owners; everyone else is refused', async () => {
    for (const who of EVERY_CALLER) {
      const res = await as(who).patch('/realm', { presence_disabled: who === 'owner' });
      if (UNAUTHORIZED[who]) assert.deepEqual([res.status, res.body], [401, UNAUTHORIZED[who]]);
      else if (who === 'owner' || who === 'admin') assert.equal(res.status, 200, who);
      else assert.deepEqual([res.status, res.body], [400, mustBeAdmin], who);
    }
  });

  test('unknown parameters are reported as ignored; an empty request changes nothing', async () => {
    const res = await as('admin').patch('/realm', { icon_url: 'x', presence_disabled: true });
    assert.deepEqual(res.body, {
      ...OK,
      presence_disabled: true,
      ignored_parameters_unsupported: ['icon_url'],
    });
    const empty = await as('admin').patch('/realm');
    assert.deepEqual(empty.body, OK);
  });
});
