// PATCH /settings: the caller's name, email, password and personal settings, with the
// exact events each change publishes (modern and legacy forms).
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
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
const gravatar = (email: string, size = '') =>
  `https://secure.gravatar.com/avatar/${createHash('md5').update(email).digest('hex')}?d=identicon&version=1${size}`;
const everyone = () =>
  ids(t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member, t.fx.member2, t.fx.guest, t.fx.bot);

/** user_settings plus, where the setting had one, its legacy event, all to the user. */
function settingEvents(
  user: { id: number; email: string },
  property: string,
  value: unknown,
  legacy: 'display' | 'notification' | null,
  extra: Record<string, unknown> = {},
) {
  const out: Array<{ event: Record<string, unknown>; users: number[] }> = [
    { event: { type: 'user_settings', op: 'update', property, value, ...extra }, users: [user.id] },
  ];
  if (legacy === 'display') {
    out.push({
      event: {
        type: 'update_display_settings',
        user: user.email,
        setting_name: property,
        setting: value,
        ...extra,
      },
      users: [user.id],
    });
  }
  if (legacy === 'notification') {
    out.push({
      event: {
        type: 'update_global_notifications',
        user: user.email,
        notification_name: property,
        setting: value,
      },
      users: [user.id],
    });
  }
  return out;
}

describe('personal settings', () => {
  const cases: Array<[string, unknown, 'display' | 'notification' | null]> = [
    ['enable_drafts_synchronization', false, 'display'],
    ['presence_enabled', false, 'notification'],
    ['receives_typing_notifications', false, null],
    ['send_private_typing_notifications', false, null],
    ['send_stream_typing_notifications', false, null],
    ['send_read_receipts', false, null],
    ['twenty_four_hour_time', true, 'display'],
    ['color_scheme', 2, 'display'],
    ['emojiset', 'text', 'display'],
    ['web_home_view', 'all_messages', 'display'],
    ['enter_sends', true, 'display'],
    ['web_font_size_px', 20, null],
    ['notification_sound', 'ding', 'notification'],
    ['email_notifications_batching_period_seconds', 300, 'notification'],
    ['enable_followed_topic_push_notifications', false, null],
    ['automatically_follow_topics_policy', 1, null],
    ['desktop_icon_count_display', 3, 'notification'],
  ];
  for (const [name, value, legacy] of cases) {
    test(`${name}: stored, announced to the user only, and idempotent`, async () => {
      const res = await as('member').patch('/settings', { [name]: value });
      assert.deepEqual([res.status, res.body], [200, OK]);
      assert.deepEqual(await bus.take(), settingEvents(t.fx.member, name, value, legacy));
      const again = await as('member').patch('/settings', { [name]: value });
      assert.deepEqual(again.body, OK);
      assert.deepEqual(await bus.take(), []);
    });
  }

  test('default_language carries its language name', async () => {
    const res = await as('member').patch('/settings', { default_language: 'de' });
    assert.deepEqual(res.body, OK);
    assert.deepEqual(
      await bus.take(),
      settingEvents(t.fx.member, 'default_language', 'de', 'display', { language_name: 'Deutsch' }),
    );
  });

  test('timezone also updates the user for everyone who can see them', async () => {
    const res = await as('member').patch('/settings', { timezone: 'Europe/Berlin' });
    assert.deepEqual(res.body, OK);
    assert.deepEqual(await bus.take(), [
      ...settingEvents(t.fx.member, 'timezone', 'Europe/Berlin', 'display'),
      {
        event: {
          type: 'realm_user',
          op: 'update',
          person: { user_id: t.fx.member.id, email: t.fx.member.email, timezone: 'Europe/Berlin' },
        },
        users: everyone(),
      },
    ]);
    const me = await as('member').get('/users/me');
    assert.equal(me.body.timezone, 'Europe/Berlin');
    // Back to none.
    assert.deepEqual((await as('member').patch('/settings', { timezone: '' })).body, OK);
    assert.equal((await as('member').get('/users/me')).body.timezone, '');
  });

  test('several settings in one request are announced in order', async () => {
    const res = await as('member').patch('/settings', {
      enter_sends: true,
      presence_enabled: false,
      send_read_receipts: false,
    });
    assert.deepEqual(res.body, OK);
    assert.deepEqual(await bus.take(), [
      ...settingEvents(t.fx.member, 'presence_enabled', false, 'notification'),
      ...settingEvents(t.fx.member, 'enter_sends', true, 'display'),
      ...settingEvents(t.fx.member, 'send_read_receipts', false, null),
    ]);
  });

  test('refused values, with the reference messages; nothing changes', async () => {
    const cases: Array<[Record<string, unknown>, Record<string, unknown>]> = [
      [{ default_language: 'xx' }, err('Invalid default_language')],
      [{ notification_sound: 'gong' }, err("Invalid notification sound 'gong'")],
      [
        { email_notifications_batching_period_seconds: 0 },
        err('Invalid email batching period: 0 seconds'),
      ],
      [
        { email_notifications_batching_period_seconds: 604801 },
        err('Invalid email batching period: 604801 seconds'),
      ],
      [{ timezone: 'Mars/Olympus' }, err('timezone is not a recognized time zone')],
      [{ emojiset: 'wingdings' }, err('Invalid emojiset')],
      [{ web_home_view: 'nowhere' }, err('Invalid web_home_view')],
      [{ color_scheme: 9 }, err('Invalid color_scheme')],
      [{ email_address_visibility: 6 }, err('Invalid email_address_visibility')],
      [{ presence_enabled: 'yes' }, err('presence_enabled is not a boolean')],
      [{ presence_enabled: 1 }, err('presence_enabled is not a boolean')],
      [{ color_scheme: 'dark' }, err('color_scheme is not an integer')],
      [{ color_scheme: 1.5 }, err('color_scheme is not an integer')],
      // An invalid value anywhere refuses the whole request.
      [{ enter_sends: true, emojiset: 'wingdings' }, err('Invalid emojiset')],
    ];
    for (const [body, expected] of cases) {
      const res = await as('member').patch('/settings', body);
      assert.deepEqual([res.status, res.body], [400, expected], JSON.stringify(body));
    }
    assert.deepEqual(await bus.take(), []);
  });

  test('unknown parameters are ignored and reported', async () => {
    const res = await as('member').patch('/settings', { invalid_setting: 'x', enter_sends: true });
    assert.deepEqual(res.body, { ...OK, ignored_parameters_unsupported: ['invalid_setting'] });
  });

  test('every human role may change their settings; bots may not; 401 otherwise', async () => {
    for (const who of EVERY_CALLER) {
      const res = await as(who).patch('/settings', { enter_sends: true });
      if (UNAUTHORIZED[who]) assert.deepEqual([res.status, res.body], [401, UNAUTHORIZED[who]]);
      else if (who === 'bot')
        assert.deepEqual(
          [res.status, res.body],
          [400, err('This endpoint does not accept bot requests.')],
        );
      else assert.deepEqual(res.body, OK, who);
    }
  });
});

describe('full_name', () => {
  test('a new name is announced to everyone; the same name is not', async () => {
    const res = await as('member').patch('/settings', { full_name: ' Marcus  Member ' });
    assert.deepEqual(res.body, OK);
    assert.deepEqual(await bus.take(), [
      {
        event: {
          type: 'realm_user',
          op: 'update',
          person: { user_id: t.fx.member.id, full_name: 'Marcus  Member' },
        },
        users: everyone(),
      },
    ]);
    await as('member').patch('/settings', { full_name: 'Marcus  Member' });
    assert.deepEqual(await bus.take(), []);
  });

  test('bad names are refused', async () => {
    for (const [full_name, msg] of [
      ['', 'Name too short!'],
      ['x', 'Name too short!'],
      ['n'.repeat(101), 'Name too long!'],
      ['Bad*Name', 'Invalid characters in name!'],
      ['Tab\tName', 'Invalid characters in name!'],
      ['Name|42', 'Invalid format!'],
      ['Null\u0000Name', 'full_name must not contain null bytes'],
    ]) {
      const res = await as('member').patch('/settings', { full_name });
      assert.deepEqual([res.status, res.body], [400, err(msg)], JSON.stringify(full_name));
    }
  });
});

describe('email', () => {
  test('a new address applies at once: address, avatar and API email events', async () => {
    const res = await as('member').patch('/settings', { email: ' Mark.New@Parley.test ' });
    assert.deepEqual(res.body, OK);
    const email = 'mark.new@parley.test';
    assert.deepEqual(await bus.take(), [
      {
        event: {
          type: 'realm_user',
          op: 'update',
          person: { user_id: t.fx.member.id, delivery_email: email },
        },
        users: everyone(),
      },
      {
        event: {
          type: 'realm_user',
          op: 'update',
          person: {
            user_id: t.fx.member.id,
            avatar_source: 'G',
            avatar_url: gravatar(email),
            avatar_url_medium: gravatar(email, '&s=500'),
            avatar_version: 1,
          },
        },
        users: everyone(),
      },
      {
        event: {
          type: 'realm_user',
          op: 'update',
          person: { user_id: t.fx.member.id, new_email: email },
        },
        users: everyone(),
      },
    ]);
    const me = await t.as({ email, api_key: t.fx.member.api_key }).get('/users/me');
    assert.deepEqual([me.body.email, me.body.delivery_email], [email, email]);
    const old = await as('member').get('/users/me');
    assert.equal(old.status, 401);
  });

  test('with a hidden address, only those who may see it learn the new one', async () => {
    await as('member').patch('/settings', { email_address_visibility: 3 });
    await bus.take();
    await t.as(t.fx.member).patch('/settings', { email: 'hidden@parley.test' });
    const sent = await bus.take();
    assert.deepEqual(sent[0], {
      event: {
        type: 'realm_user',
        op: 'update',
        person: { user_id: t.fx.member.id, delivery_email: 'hidden@parley.test' },
      },
      users: ids(t.fx.owner, t.fx.admin, t.fx.member),
    });
    // The API email stays the user<id> form, so no new_email event.
    assert.equal(sent.length, 2);
    assert.equal(
      (sent[1].event as { person: Record<string, unknown> }).person.avatar_url,
      gravatar('hidden@parley.test'),
    );
  });

  test('refused addresses', async () => {
    for (const [email, msg] of [
      ['not-an-address', 'Invalid address.'],
      ['admin@parley.test', 'Already has an account.'],
      ['ADMIN@parley.test', 'Already has an account.'],
      [t.fx.deactivated.delivery_email, 'Account has been deactivated.'],
    ]) {
      const res = await as('member').patch('/settings', { email });
      assert.deepEqual([res.status, res.body], [400, err(msg)], email);
    }
    // The current address is no change.
    assert.deepEqual(
      (await as('member').patch('/settings', { email: 'MEMBER@parley.test' })).body,
      OK,
    );
    assert.deepEqual(await bus.take(), []);
  });
});

describe('password', () => {
  test('the old password is required and checked; the new one must be strong', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ new_password: 'a-fine-new-one' }, 'Wrong password!'],
      [{ old_password: 'wrong', new_password: 'a-fine-new-one' }, 'Wrong password!'],
      [{ old_password: t.fx.member.password, new_password: 'short' }, 'New password is too weak!'],
      [
        { old_password: t.fx.member.password, new_password: 'x'.repeat(101) },
        'New password is too weak!',
      ],
    ];
    for (const [body, msg] of cases) {
      const res = await as('member').patch('/settings', body);
      assert.deepEqual([res.status, res.body], [400, err(msg)], JSON.stringify(body));
    }
    const ok = await as('member').patch('/settings', {
      old_password: t.fx.member.password,
      new_password: 'a-fine-new-one',
    });
    assert.deepEqual(ok.body, OK);
    assert.deepEqual(await bus.take(), []);
    const login = (password: string) =>
      t.as(null).post('/fetch_api_key', { username: t.fx.member.email, password });
    assert.equal((await login('a-fine-new-one')).status, 200);
    assert.equal((await login(t.fx.member.password)).status, 401);
  });

  test('old_password alone changes nothing and is consumed', async () => {
    const res = await as('member').patch('/settings', { old_password: 'whatever' });
    assert.deepEqual(res.body, OK);
  });
});

describe('email_address_visibility', () => {
  test('hiding the address: the setting, lost access, the API email and the avatar', async () => {
    const res = await as('member').patch('/settings', { email_address_visibility: 3 });
    assert.deepEqual(res.body, OK);
    const fake = `user${t.fx.member.id}@parley.test`;
    const lost = [t.fx.moderator, t.fx.member2, t.fx.guest, t.fx.bot];
    assert.deepEqual(await bus.take(), [
      ...settingEvents(t.fx.member, 'email_address_visibility', 3, null),
      ...lost.map((v) => ({
        event: {
          type: 'realm_user',
          op: 'update',
          person: { user_id: t.fx.member.id, delivery_email: null },
        },
        users: [v.id],
      })),
      {
        event: {
          type: 'realm_user',
          op: 'update',
          person: { user_id: t.fx.member.id, new_email: fake },
        },
        users: everyone(),
      },
      {
        event: {
          type: 'realm_user',
          op: 'update',
          person: {
            user_id: t.fx.member.id,
            avatar_source: 'G',
            avatar_url: gravatar(t.fx.member.delivery_email),
            avatar_url_medium: gravatar(t.fx.member.delivery_email, '&s=500'),
            avatar_version: 1,
          },
        },
        users: everyone(),
      },
    ]);
    // Between two hidden levels the API email stays put: only access changes, and with it
    // the Gravatar choice of client_gravatar clients (the avatar form, to the same viewers).
    await as('member').patch('/settings', { email_address_visibility: 5 });
    assert.deepEqual(await bus.take(), [
      ...settingEvents({ id: t.fx.member.id, email: fake }, 'email_address_visibility', 5, null),
      {
        event: {
          type: 'realm_user',
          op: 'update',
          person: { user_id: t.fx.member.id, delivery_email: t.fx.member.delivery_email },
        },
        users: [t.fx.moderator.id],
      },
      {
        event: {
          type: 'realm_user',
          op: 'update',
          person: {
            user_id: t.fx.member.id,
            avatar_source: 'G',
            avatar_url: gravatar(t.fx.member.delivery_email),
            avatar_url_medium: gravatar(t.fx.member.delivery_email, '&s=500'),
            avatar_version: 1,
          },
        },
        users: [t.fx.moderator.id],
      },
    ]);
    // Legacy events name the user by their current API email.
    await as('member').patch('/settings', { enter_sends: true });
    assert.deepEqual(
      await bus.take(),
      settingEvents({ id: t.fx.member.id, email: fake }, 'enter_sends', true, 'display'),
    );
  });
});
