// POST /register: parameters, errors, and the sections of the snapshot.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { listSystemGroups } from '../../src/store/user-groups.ts';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { ROLE_KEYS } from '../support/fixture.ts';
import { registerQueue } from '../support/events.ts';

const BASE_KEYS = [
  'result',
  'msg',
  'queue_id',
  'last_event_id',
  'svc_feature_level',
  'svc_version',
  'svc_merge_base',
  'zulip_feature_level',
  'zulip_version',
  'zulip_merge_base',
  'event_queue_longpoll_timeout_seconds',
  'max_message_length',
  'max_topic_length',
  'max_stream_name_length',
  'max_stream_description_length',
  'max_channel_folder_name_length',
  'max_channel_folder_description_length',
  'max_file_upload_size_mib',
  'max_avatar_file_size_mib',
  'max_icon_file_size_mib',
  'max_logo_file_size_mib',
  'password_min_length',
  'password_max_length',
  'server_presence_ping_interval_seconds',
  'server_presence_offline_threshold_seconds',
  'server_typing_started_expiry_period_milliseconds',
  'server_typing_stopped_wait_period_milliseconds',
  'server_typing_started_wait_period_milliseconds',
  'server_supported_permission_settings',
  'server_generation',
  'server_needs_upgrade',
  'server_avatar_changes_disabled',
  'server_name_changes_disabled',
  'server_web_public_streams_enabled',
  'server_inline_image_preview',
  'server_inline_url_embed_preview',
  'server_thumbnail_formats',
  'server_emoji_data_url',
  'server_jitsi_server_url',
  'server_can_summarize_topics',
  'development_environment',
];

async function withApp(fn: (t: TestApp) => Promise<void>): Promise<void> {
  const t = await buildTestApp();
  try {
    await fn(t);
  } finally {
    await t.close();
  }
}

const keysOf = (body: Record<string, unknown>) => Object.keys(body).sort();
const withBase = (...keys: string[]) => [...BASE_KEYS, ...keys].sort();

test('POST /register: the queue, the versions and the server limits', () =>
  withApp(async (t) => {
    const body = await registerQueue(t.as(t.fx.member), { fetch_event_types: [] });
    const { queue_id, server_generation, server_supported_permission_settings, ...rest } = body;
    assert.match(String(queue_id), new RegExp(`^${t.ctx.config.nodeId}:[A-Za-z0-9_-]{16}$`));
    assert.equal(typeof server_generation, 'number');
    const permissions = server_supported_permission_settings as Record<
      string,
      Record<string, unknown>
    >;
    assert.deepEqual(permissions.realm.can_access_all_users_group, {
      require_system_group: true,
      allow_internet_group: false,
      allow_nobody_group: true,
      allow_everyone_group: true,
      default_group_name: 'role:everyone',
      default_for_system_groups: null,
      allowed_system_groups: ['role:everyone', 'role:members'],
    });
    assert.deepEqual(rest, {
      result: 'success',
      msg: '',
      last_event_id: -1,
      svc_feature_level: body.zulip_feature_level,
      svc_version: '0.1.0-parley',
      svc_merge_base: '0.1.0-parley',
      zulip_feature_level: body.svc_feature_level,
      zulip_version: '0.1.0-parley',
      zulip_merge_base: '0.1.0-parley',
      event_queue_longpoll_timeout_seconds: 90,
      max_message_length: 10000,
      max_topic_length: 60,
      max_stream_name_length: 60,
      max_stream_description_length: 1024,
      max_channel_folder_name_length: 60,
      max_channel_folder_description_length: 1024,
      max_file_upload_size_mib: 25,
      max_avatar_file_size_mib: 5,
      max_icon_file_size_mib: 5,
      max_logo_file_size_mib: 5,
      password_min_length: 6,
      password_max_length: 100,
      server_presence_ping_interval_seconds: 60,
      server_presence_offline_threshold_seconds: 200,
      server_typing_started_expiry_period_milliseconds: 45000,
      server_typing_stopped_wait_period_milliseconds: 12000,
      server_typing_started_wait_period_milliseconds: 30000,
      server_needs_upgrade: false,
      server_avatar_changes_disabled: false,
      server_name_changes_disabled: false,
      server_web_public_streams_enabled: false,
      server_inline_image_preview: false,
      server_inline_url_embed_preview: false,
      server_thumbnail_formats: [],
      server_emoji_data_url: null,
      server_jitsi_server_url: null,
      server_can_summarize_topics: false,
      development_environment: false,
    });
  }));

test('POST /register: one section per fetch type; fetch_event_types falls back to event_types', () =>
  withApp(async (t) => {
    const member = t.as(t.fx.member);
    const sections = async (params: Record<string, unknown>) =>
      keysOf(await registerQueue(member, params));
    assert.deepEqual(await sections({ fetch_event_types: ['realm_bot'] }), withBase('realm_bots'));
    assert.deepEqual(await sections({ event_types: ['user_settings'] }), withBase('user_settings'));
    assert.deepEqual(
      await sections({ event_types: ['user_settings'], fetch_event_types: ['bogus'] }),
      withBase(),
    );
    const realmUser = await sections({ fetch_event_types: ['realm_user'] });
    assert.deepEqual(
      realmUser,
      withBase(
        'realm_users',
        'realm_non_active_users',
        'cross_realm_bots',
        'user_id',
        'email',
        'delivery_email',
        'full_name',
        'avatar_source',
        'avatar_url',
        'avatar_url_medium',
        'is_owner',
        'is_admin',
        'is_moderator',
        'is_guest',
        'can_create_streams',
        'can_create_public_streams',
        'can_create_private_streams',
        'can_create_web_public_streams',
        'can_subscribe_other_users',
        'can_invite_others_to_realm',
      ),
    );
    const realm = await sections({ fetch_event_types: ['realm'] });
    for (const key of [
      'realm_name',
      'realm_description',
      'realm_url',
      'realm_uri',
      'realm_empty_topic_display_name',
      'realm_presence_disabled',
      'realm_can_create_public_channel_group',
      'realm_allow_edit_history',
      'realm_mandatory_topics',
    ]) {
      assert.ok(realm.includes(key), key);
    }
    assert.ok(realm.every((k) => BASE_KEYS.includes(k) || k.startsWith('realm_')));
  }));

test('POST /register: legacy flat settings only for clients without user_settings_object', () =>
  withApp(async (t) => {
    const member = t.as(t.fx.member);
    const legacy = await registerQueue(member, {
      fetch_event_types: ['update_display_settings', 'update_global_notifications'],
    });
    assert.equal(legacy.twenty_four_hour_time, false);
    assert.equal(legacy.default_language, 'en');
    assert.equal(legacy.timezone, '');
    assert.equal(legacy.enable_sounds, true);
    assert.equal(legacy.notification_sound, 'chime');
    assert.deepEqual(legacy.available_notification_sounds, ['chime', 'ding']);
    assert.equal('user_settings' in legacy, false);
    assert.equal(
      'web_font_size_px' in legacy,
      false,
      'not a legacy display or notification setting',
    );
    const modern = await registerQueue(member, {
      fetch_event_types: ['update_display_settings', 'update_global_notifications'],
      client_capabilities: { notification_settings_null: true, user_settings_object: true },
    });
    assert.deepEqual(keysOf(modern), withBase());
  }));

test('POST /register: user_settings holds every setting and the choices clients show', () =>
  withApp(async (t) => {
    const member = t.as(t.fx.member);
    const res = await member.patch('/settings', { default_language: 'de', timezone: 'Asia/Tokyo' });
    assert.equal(res.status, 200, res.text);
    const body = await registerQueue(member, { fetch_event_types: ['user_settings'] });
    const settings = body.user_settings as Record<string, unknown>;
    assert.equal(settings.default_language, 'de');
    assert.equal(settings.timezone, 'Asia/Tokyo');
    assert.equal(settings.email_address_visibility, 1);
    assert.deepEqual(settings.emojiset_choices, [
      { key: 'google', text: 'Google' },
      { key: 'twitter', text: 'Twitter' },
      { key: 'text', text: 'Plain text' },
      { key: 'google-blob', text: 'Google blobs' },
    ]);
    assert.deepEqual(settings.available_notification_sounds, ['chime', 'ding']);
  }));

test("POST /register: the user's own keys and permissions", () =>
  withApp(async (t) => {
    const own = async (who: 'member' | 'guest') => {
      const body = await registerQueue(t.as(t.fx[who]), { fetch_event_types: ['realm_user'] });
      const {
        realm_users: _u,
        realm_non_active_users: _n,
        avatar_url,
        avatar_url_medium,
        ...rest
      } = body;
      assert.match(String(avatar_url), /^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?/);
      assert.equal(avatar_url_medium, `${String(avatar_url)}&s=500`);
      return Object.fromEntries(Object.entries(rest).filter(([k]) => !BASE_KEYS.includes(k)));
    };
    assert.deepEqual(await own('member'), {
      cross_realm_bots: [],
      user_id: t.fx.member.id,
      email: 'member@parley.test',
      delivery_email: 'member@parley.test',
      full_name: 'Mark Member',
      avatar_source: 'G',
      is_owner: false,
      is_admin: false,
      is_moderator: false,
      is_guest: false,
      can_create_streams: true,
      can_create_public_streams: true,
      can_create_private_streams: true,
      can_create_web_public_streams: false,
      can_subscribe_other_users: true,
      can_invite_others_to_realm: true,
    });
    const guest = await own('guest');
    assert.equal(guest.is_guest, true);
    assert.equal(guest.can_create_streams, false);
    assert.equal(guest.can_invite_others_to_realm, false);
  }));

test('POST /register: realm_users split by activity; client_gravatar decides avatar_url', () =>
  withApp(async (t) => {
    const member = t.as(t.fx.member);
    const gravatar = await registerQueue(member, { fetch_event_types: ['realm_user'] });
    const urls = await registerQueue(member, {
      fetch_event_types: ['realm_user'],
      client_gravatar: false,
    });
    const users = gravatar.realm_users as Record<string, unknown>[];
    assert.deepEqual(
      users.map((u) => u.user_id),
      [1, 2, 3, 4, 5, 6, 7],
    );
    assert.deepEqual(
      (gravatar.realm_non_active_users as Record<string, unknown>[]).map((u) => u.user_id),
      [t.fx.deactivated.id],
    );
    assert.ok(users.every((u) => !('is_active' in u) && u.avatar_url === null));
    assert.ok(
      (urls.realm_users as Record<string, unknown>[]).every((u) =>
        String(u.avatar_url).startsWith('https://secure.gravatar.com/avatar/'),
      ),
    );
  }));

test('POST /register: a limited guest sees placeholders unless user_list_incomplete', () =>
  withApp(async (t) => {
    const groups = await listSystemGroups(t.ctx.db, t.fx.realm.id);
    const members = groups.find((g) => g.name === 'role:members')!.id;
    const res = await t
      .as(t.fx.owner)
      .patch('/realm', { can_access_all_users_group: { new: members } });
    assert.equal(res.status, 200, res.text);
    // A new user shares no channel with the guest.
    const created = await t.as(t.fx.admin).post('/users', {
      email: 'stranger@parley.test',
      password: 'stranger-password',
      full_name: 'Stranger',
    });
    assert.equal(created.status, 200, created.text);
    const guest = t.as(t.fx.guest);
    const complete = await registerQueue(guest, { fetch_event_types: ['realm_user'] });
    const users = complete.realm_users as Record<string, unknown>[];
    // Whom the guest can access: the users GET /users shows by name.
    const listed = await guest.get('/users');
    const accessible = (listed.body.members as Array<{ user_id: number; full_name: string }>)
      .filter((u) => u.full_name !== 'Unknown user')
      .map((u) => u.user_id);
    const everyone = [1, 2, 3, 4, 5, 6, 7, 8, created.body.user_id as number];
    const hidden = everyone.filter((id) => !accessible.includes(id));
    assert.ok(hidden.includes(created.body.user_id as number));
    assert.deepEqual(
      users.map((u) => u.user_id),
      everyone.filter((id) => hidden.includes(id) || id !== t.fx.deactivated.id),
    );
    for (const u of users) {
      assert.equal(u.full_name === 'Unknown user', hidden.includes(u.user_id as number));
    }
    const first = users.find((u) => u.user_id === hidden[0])!;
    assert.deepEqual(first, {
      user_id: hidden[0],
      delivery_email: null,
      email: `user${hidden[0]}@parley.test`,
      full_name: 'Unknown user',
      date_joined: '1970-01-01T00:00:00.000Z',
      is_owner: false,
      is_admin: false,
      is_guest: false,
      is_bot: false,
      bot_type: null,
      bot_owner_id: null,
      role: 400,
      timezone: '',
      avatar_url: 'http://parley.test/static/images/unknown-user-avatar.png',
      avatar_version: 1,
      profile_data: {},
    });
    const incomplete = await registerQueue(guest, {
      fetch_event_types: ['realm_user'],
      client_capabilities: { notification_settings_null: false, user_list_incomplete: true },
    });
    const shown = [
      ...(incomplete.realm_users as Array<{ user_id: number }>),
      ...(incomplete.realm_non_active_users as Array<{ user_id: number }>),
    ].map((u) => u.user_id);
    assert.deepEqual(shown.sort(), accessible.sort());
  }));

test('POST /register: idle_queue_timeout is honoured up to 7 days, never below the default', () =>
  withApp(async (t) => {
    const member = t.as(t.fx.member);
    const timeout = async (params: Record<string, unknown>) =>
      (await registerQueue(member, { fetch_event_types: [], ...params })).idle_queue_timeout_secs;
    assert.equal(await timeout({ idle_queue_timeout: 3600 }), 3600);
    assert.equal(await timeout({ idle_queue_timeout: 'mobile' }), 43200);
    assert.equal(await timeout({ idle_queue_timeout: 30 }), 600);
    assert.equal(await timeout({ idle_queue_timeout: 0 }), 600);
    assert.equal(await timeout({ idle_queue_timeout: 10 ** 9 }), 604800);
    assert.equal(await timeout({ queue_lifespan_secs: 7200 }), 7200);
    assert.equal(await timeout({}), undefined);
  }));

test('POST /register: bad parameters', () =>
  withApp(async (t) => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ narrow: [['search', 'lunch']] }, 'Operator search not supported.'],
      [{ narrow: [['is', 'followed']] }, 'Operator is:followed not supported.'],
      [{ narrow: [['constructor', 'x']] }, 'Operator constructor not supported.'],
      [{ narrow: [['channel']] }, 'Invalid narrow: each element must be [operator, operand]'],
      [{ narrow: 'channel' }, 'narrow is not valid JSON'],
      [{ narrow: { channel: 'x' } }, 'narrow is not a list'],
      [{ event_types: { message: true } }, 'Invalid event_types'],
      [
        { client_capabilities: {} },
        'client_capabilities["notification_settings_null"] field is missing',
      ],
      [
        { client_capabilities: { notification_settings_null: 1 } },
        'client_capabilities["notification_settings_null"] is not a boolean',
      ],
      [{ idle_queue_timeout: -1 }, 'Invalid idle_queue_timeout'],
      [{ include_subscribers: 3 }, 'Invalid include_subscribers'],
      [{ apply_markdown: 'yes' }, 'apply_markdown is not a boolean'],
    ];
    for (const [params, msg] of cases) {
      const res = await t.as(t.fx.member).post('/register', params);
      assert.equal(res.status, 400, JSON.stringify(params));
      assert.deepEqual(
        { msg: res.body.msg, code: res.body.code, result: res.body.result },
        { msg, code: 'BAD_REQUEST', result: 'error' },
        JSON.stringify(params),
      );
    }
    assert.equal(t.ctx.queues.size, 0, 'no queue is left behind by a failed register');
  }));

test('POST /register: unknown capabilities are ignored; guests may not ask for all public channels', () =>
  withApp(async (t) => {
    const ok = await t.as(t.fx.member).post('/register', {
      fetch_event_types: [],
      client_capabilities: { notification_settings_null: true, future_capability: true },
      include_subscribers: 'partial',
      all_public_streams: true,
    });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.ignored_parameters_unsupported, undefined);
    const guest = await t.as(t.fx.guest).post('/register', { all_public_streams: true });
    assert.equal(guest.status, 400);
    assert.deepEqual(guest.body, {
      result: 'error',
      msg: 'User not authorized for this query',
      code: 'BAD_REQUEST',
    });
  }));

test('POST /register: who may register', () =>
  withApp(async (t) => {
    for (const key of ROLE_KEYS) {
      const res = await t.as(t.fx[key]).post('/register', { fetch_event_types: [] });
      assert.equal(res.status, key === 'deactivated' ? 401 : 200, `${key}: ${res.text}`);
    }
    const badKey = await t.as({ ...t.fx.member, api_key: 'x'.repeat(32) }).post('/register', {});
    assert.equal(badKey.status, 401);
    assert.equal(badKey.body.code, 'UNAUTHORIZED');
    const none = await t.as(null).post('/register', {});
    assert.equal(none.status, 401);
    assert.equal(none.body.code, 'UNAUTHORIZED');
    assert.equal(t.ctx.queues.size, ROLE_KEYS.length - 1);
  }));
