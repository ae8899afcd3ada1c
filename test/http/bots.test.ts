// The bots API, creating and listing: POST and GET /bots, with their permissions, errors
// and events (test/support/bots.ts holds the shared helpers).
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import {
  API_KEY,
  as,
  assertUnauthorized,
  botsOf,
  createBot,
  error,
  EVERY_CALLER,
  everyone,
  gravatar,
  groupId,
  helperBot,
  helperBotManagers,
  MANAGES_HELPER_BOT,
  type NoticeRecorder,
  recordNotices,
  servicesOf,
} from '../support/bots.ts';
import { SUCCESS } from '../support/client.ts';

let t: TestApp;
let notices: NoticeRecorder;

beforeEach(async () => {
  t = await buildTestApp();
  notices = recordNotices(t);
});
afterEach(async () => {
  await t.close();
});

describe('POST /bots', () => {
  test('a member creates a generic bot: response, user, and events', async () => {
    const res = await t.as(t.fx.member).post('/bots', {
      full_name: 'Build Bot',
      short_name: 'build',
    });
    assert.equal(res.status, 200, res.text);
    const botId = res.body.user_id as number;
    assert.equal(typeof botId, 'number');
    assert.match(res.body.api_key as string, API_KEY);
    assert.deepEqual(res.body, {
      ...SUCCESS,
      user_id: botId,
      api_key: res.body.api_key,
      avatar_url: gravatar('build-bot@parley.test'),
      default_sending_stream: null,
      default_events_register_stream: null,
      default_all_public_streams: false,
    });

    const user = await t.as(t.fx.admin).get(`/users/${botId}`, { client_gravatar: false });
    assert.equal(user.status, 200, user.text);
    const person = {
      user_id: botId,
      delivery_email: 'build-bot@parley.test',
      email: 'build-bot@parley.test',
      full_name: 'Build Bot',
      date_joined: (user.body.user as Record<string, unknown>).date_joined,
      is_active: true,
      is_owner: false,
      is_admin: false,
      is_guest: false,
      is_bot: true,
      bot_type: 1,
      bot_owner_id: t.fx.member.id,
      role: 400,
      timezone: '',
      avatar_url: gravatar('build-bot@parley.test'),
      avatar_version: 1,
    };
    assert.deepEqual(user.body.user, person);

    const recipients = [...everyone(t), botId];
    assert.deepEqual(await notices.take(), [
      { event: { type: 'realm_user', op: 'add', person }, users: recipients },
      {
        event: {
          type: 'user_group',
          op: 'add_members',
          group_id: await groupId(t, 'role:fullmembers'),
          user_ids: [botId],
        },
        users: recipients,
      },
      {
        event: {
          type: 'realm_bot',
          op: 'add',
          bot: {
            user_id: botId,
            email: 'build-bot@parley.test',
            full_name: 'Build Bot',
            bot_type: 1,
            is_active: true,
            api_key: res.body.api_key,
            avatar_url: gravatar('build-bot@parley.test'),
            default_sending_stream: null,
            default_events_register_stream: null,
            default_all_public_streams: false,
            owner_id: t.fx.member.id,
            services: [],
          },
        },
        users: helperBotManagers(t),
      },
    ]);
  });

  test('the new bot authenticates with its API email and key', async () => {
    const bot = await createBot(t.as(t.fx.member), { short_name: 'Auth' });
    assert.equal(bot.email, 'auth-bot@parley.test');
    const me = await t.as({ email: bot.email, api_key: bot.api_key }).get('/users/me');
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body.user_id, bot.user_id);
    assert.equal(me.body.is_bot, true);
    assert.equal(me.body.bot_owner_id, t.fx.member.id);
  });

  test('an outgoing webhook bot gets a fixed random token, shown to its owner', async () => {
    const bot = await createBot(t.as(t.fx.member), {
      short_name: 'hook',
      full_name: 'Hook Bot',
      bot_type: 3,
      payload_url: 'https://hooks.example.com/parley',
      interface_type: 2,
    });
    const [event] = (await notices.take()).filter((n) => n.event.type === 'realm_bot');
    const services = ((event.event as Record<string, unknown>).bot as Record<string, unknown>)
      .services as Array<Record<string, unknown>>;
    assert.equal(services.length, 1);
    const token = services[0].token as string;
    assert.match(token, API_KEY);
    assert.notEqual(token, bot.api_key);
    assert.deepEqual(services, [
      { base_url: 'https://hooks.example.com/parley', interface: 2, token },
    ]);
    const listed = (await botsOf(t.as(t.fx.member))).find((b) => b.user_id === bot.user_id);
    assert.deepEqual(listed, {
      user_id: bot.user_id,
      email: 'hook-bot@parley.test',
      full_name: 'Hook Bot',
      bot_type: 3,
      is_active: true,
      api_key: bot.api_key,
      avatar_url: gravatar('hook-bot@parley.test'),
      default_sending_stream: null,
      default_events_register_stream: null,
      default_all_public_streams: false,
      owner_id: t.fx.member.id,
      services: [{ base_url: 'https://hooks.example.com/parley', interface: 2, token }],
    });
    // Every bot has its own token.
    const other = await createBot(t.as(t.fx.member), {
      short_name: 'hook2',
      full_name: 'Hook Two',
      bot_type: 3,
      payload_url: 'http://127.0.0.1:8080/',
    });
    const [second] = await servicesOf(t.as(t.fx.member), other.user_id);
    assert.equal(second.interface, 1);
    assert.notEqual(second.token, token);
  });

  test('payload_url may be sent as JSON text, as the reference web client does', async () => {
    const bot = await createBot(t.as(t.fx.member), {
      short_name: 'quoted',
      bot_type: 3,
      payload_url: JSON.stringify('https://example.com/hook'),
    });
    const [service] = await servicesOf(t.as(t.fx.member), bot.user_id);
    assert.equal(service.base_url, 'https://example.com/hook');
  });

  test('an outgoing webhook bot needs an http or https payload_url', async () => {
    const missing = await t.as(t.fx.member).post('/bots', {
      full_name: 'Hook Bot',
      short_name: 'hook',
      bot_type: 3,
    });
    assert.equal(missing.status, 400);
    assert.deepEqual(
      missing.body,
      error("Missing 'payload_url' argument", 'REQUEST_VARIABLE_MISSING', {
        var_name: 'payload_url',
      }),
    );
    for (const url of [
      'not a url',
      'ftp://example.com/',
      'javascript:alert(1)',
      '/relative/path',
      '"unterminated',
      JSON.stringify('mailto:someone@example.com'),
    ]) {
      const res = await t.as(t.fx.member).post('/bots', {
        full_name: 'Hook Bot',
        short_name: 'hook',
        bot_type: 3,
        payload_url: url,
      });
      assert.equal(res.status, 400, url);
      assert.deepEqual(res.body, error('payload_url is not an http or https URL'), url);
    }
    assert.deepEqual(await notices.take(), []);
  });

  test('interface_type and bot_type must be known values', async () => {
    const base = { full_name: 'X Bot', short_name: 'x' };
    for (const [params, msg] of [
      [{ bot_type: 3, payload_url: 'https://e.com/', interface_type: 3 }, 'Invalid interface type'],
      [{ bot_type: 3, payload_url: 'https://e.com/', interface_type: 0 }, 'Invalid interface type'],
      [{ bot_type: 5 }, 'Invalid bot type'],
      [{ bot_type: 0 }, 'Invalid bot type'],
      [{ bot_type: 'generic' }, 'bot_type is not an integer'],
      [{ interface_type: 1.5 }, 'interface_type is not an integer'],
    ] as const) {
      const res = await t.as(t.fx.member).post('/bots', { ...base, ...params });
      assert.equal(res.status, 400, JSON.stringify(params));
      assert.deepEqual(res.body, error(msg), JSON.stringify(params));
    }
  });

  test('an incoming webhook bot has no services; naming an integration is refused', async () => {
    const bot = await createBot(t.as(t.fx.member), { short_name: 'incoming', bot_type: 2 });
    const listed = (await botsOf(t.as(t.fx.member))).find((b) => b.user_id === bot.user_id)!;
    assert.equal(listed.bot_type, 2);
    assert.deepEqual(listed.services, []);
    const res = await t.as(t.fx.member).post('/bots', {
      full_name: 'Github Bot',
      short_name: 'github',
      bot_type: 2,
      service_name: 'github',
      config_data: { secret: 'x' },
    });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, error("Invalid integration 'github'."));
  });

  test('an embedded bot keeps its service name and configuration', async () => {
    const bot = await createBot(t.as(t.fx.member), {
      short_name: 'embedded',
      bot_type: 4,
      service_name: 'converter',
      config_data: { key: 'value', other: '' },
    });
    assert.deepEqual(await servicesOf(t.as(t.fx.member), bot.user_id), [
      { service_name: 'converter', config_data: { key: 'value', other: '' } },
    ]);
    // The service name defaults to the short name.
    const plain = await createBot(t.as(t.fx.member), {
      short_name: 'plain',
      full_name: 'Plain Bot',
      bot_type: 4,
    });
    assert.deepEqual(await servicesOf(t.as(t.fx.member), plain.user_id), [
      { service_name: 'plain', config_data: {} },
    ]);
  });

  test('config_data must map strings to strings', async () => {
    for (const [config_data, msg] of [
      [{ key: 1 }, 'config_data["key"] is not a string'],
      [['a'], 'config_data is not a dict'],
      ['not json', 'config_data is not valid JSON'],
    ] as const) {
      const res = await t.as(t.fx.member).post('/bots', {
        full_name: 'E Bot',
        short_name: 'e',
        bot_type: 4,
        config_data,
      });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, error(msg));
    }
  });

  test('default_all_public_streams is stored; default channels by name are refused', async () => {
    const res = await t.as(t.fx.member).post('/bots', {
      full_name: 'Reader Bot',
      short_name: 'reader',
      default_all_public_streams: true,
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.default_all_public_streams, true);
    const listed = (await botsOf(t.as(t.fx.member))).find((b) => b.user_id === res.body.user_id)!;
    assert.equal(listed.default_all_public_streams, true);
    const [, , add] = await notices.take();
    assert.equal(
      ((add.event as Record<string, unknown>).bot as Record<string, unknown>)
        .default_all_public_streams,
      true,
    );

    for (const name of ['default_sending_stream', 'default_events_register_stream']) {
      const bad = await t.as(t.fx.member).post('/bots', {
        full_name: 'Sender Bot',
        short_name: 'sender',
        [name]: 'general',
      });
      assert.equal(bad.status, 400);
      assert.deepEqual(bad.body, error("Invalid channel name 'general'"));
    }
    const notBool = await t.as(t.fx.member).post('/bots', {
      full_name: 'Sender Bot',
      short_name: 'sender',
      default_all_public_streams: 'yes',
    });
    assert.deepEqual(notBool.body, error('default_all_public_streams is not a boolean'));
  });

  test('short names and names already in use are refused', async () => {
    for (const [params, msg] of [
      [{ short_name: 'helper', full_name: 'Another Helper' }, 'Username already in use'],
      [{ short_name: 'HELPER', full_name: 'Another Helper' }, 'Username already in use'],
      [{ short_name: 'unique', full_name: 'Helper Bot' }, 'Name is already in use!'],
      [{ short_name: 'unique', full_name: 'Mark Member' }, 'Name is already in use!'],
      [{ short_name: 'unique', full_name: '  Mark Member ' }, 'Name is already in use!'],
    ] as const) {
      const res = await t.as(t.fx.member).post('/bots', params);
      assert.equal(res.status, 400, JSON.stringify(params));
      assert.deepEqual(res.body, error(msg), JSON.stringify(params));
    }
    // A deactivated user's name is free.
    await createBot(t.as(t.fx.member), { short_name: 'dee', full_name: 'Dee Deactivated' });
  });

  test('bad short names and names are refused', async () => {
    for (const [params, msg] of [
      [{ short_name: '' }, 'Bad name or username'],
      [{ short_name: '   ' }, 'Bad name or username'],
      [{ short_name: 'two words' }, 'Bad name or username'],
      [{ short_name: 'at@sign' }, 'Bad name or username'],
      [{ full_name: '' }, 'Name too short!'],
      [{ full_name: 'a'.repeat(101) }, 'Name too long!'],
      [{ full_name: 'Bad *name*' }, 'Invalid characters in name!'],
    ] as const) {
      const res = await t
        .as(t.fx.member)
        .post('/bots', { full_name: 'Fine Bot', short_name: 'fine', ...params });
      assert.equal(res.status, 400, JSON.stringify(params));
      assert.deepEqual(res.body, error(msg), JSON.stringify(params));
    }
    for (const name of ['full_name', 'short_name']) {
      const params: Record<string, string> = { full_name: 'Fine Bot', short_name: 'fine' };
      delete params[name];
      const res = await t.as(t.fx.member).post('/bots', params);
      assert.deepEqual(
        res.body,
        error(`Missing '${name}' argument`, 'REQUEST_VARIABLE_MISSING', { var_name: name }),
      );
    }
    assert.deepEqual(await notices.take(), []);
  });

  test('unknown parameters are reported as ignored', async () => {
    const res = await t
      .as(t.fx.member)
      .post('/bots', { full_name: 'Fine Bot', short_name: 'fine', colour: 'red' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.ignored_parameters_unsupported, ['colour']);
  });

  test("a bot's address is on its organization's host", async () => {
    const other = { ...t.fx.otherOwner, host: 'other.parley.test' };
    const res = await t.as(other).post('/bots', { full_name: 'Other Bot', short_name: 'o' });
    assert.equal(res.status, 200, res.text);
    const [listed] = await botsOf(t.as(other));
    assert.equal(listed.email, 'o-bot@other.parley.test');
    // Short names are per organization.
    await createBot(t.as(t.fx.member), { short_name: 'o', full_name: 'Other Bot' });
  });

  for (const who of EVERY_CALLER) {
    test(`permission: ${who}`, async () => {
      const res = await as(t, who).post('/bots', { full_name: 'Role Bot', short_name: 'role' });
      if (assertUnauthorized(who, res)) return;
      if (who === 'guest') {
        assert.equal(res.status, 400);
        assert.deepEqual(res.body, error('Not allowed for guest users'));
      } else if (who === 'bot') {
        assert.equal(res.status, 400);
        assert.deepEqual(res.body, error('This endpoint does not accept bot requests.'));
      } else {
        assert.equal(res.status, 200, res.text);
        const owner = t.fx[who as 'owner' | 'admin' | 'moderator' | 'member'];
        const [listed] = (await botsOf(as(t, who))).filter((b) => b.user_id === res.body.user_id);
        assert.equal(listed.owner_id, owner.id);
      }
    });
  }

  test('can_create_bots_group and can_create_write_only_bots_group decide who may create', async () => {
    const admins = await groupId(t, 'role:administrators');
    const setting = async (name: string, group: number) => {
      const res = await t.as(t.fx.owner).patch('/realm', { [name]: { new: group } });
      assert.equal(res.status, 200, res.text);
    };
    await setting('can_create_bots_group', admins);
    const denied = await t
      .as(t.fx.member)
      .post('/bots', { full_name: 'Generic', short_name: 'generic' });
    assert.equal(denied.status, 400);
    assert.deepEqual(denied.body, error('Insufficient permission', 'UNAUTHORIZED_PRINCIPAL'));
    const outgoing = await t.as(t.fx.member).post('/bots', {
      full_name: 'Outgoing',
      short_name: 'outgoing',
      bot_type: 3,
      payload_url: 'https://example.com/',
    });
    assert.deepEqual(outgoing.body, error('Insufficient permission', 'UNAUTHORIZED_PRINCIPAL'));
    // Incoming webhook bots only write, and members may still create those.
    await createBot(t.as(t.fx.member), { short_name: 'incoming', bot_type: 2 });
    await createBot(t.as(t.fx.admin), { short_name: 'admins', full_name: 'Admins Bot' });

    await setting('can_create_write_only_bots_group', admins);
    const incoming = await t
      .as(t.fx.member)
      .post('/bots', { full_name: 'Incoming 2', short_name: 'incoming2', bot_type: 2 });
    assert.deepEqual(incoming.body, error('Insufficient permission', 'UNAUTHORIZED_PRINCIPAL'));
    await createBot(t.as(t.fx.admin), {
      short_name: 'incoming3',
      full_name: 'Incoming 3',
      bot_type: 2,
    });
  });
});

describe('GET /bots', () => {
  for (const who of EVERY_CALLER) {
    test(`lists the bots the caller manages: ${who}`, async () => {
      const res = await as(t, who).get('/bots');
      if (assertUnauthorized(who, res)) return;
      if (who === 'guest') {
        assert.deepEqual(res.body, error('Not allowed for guest users'));
        return;
      }
      if (who === 'bot') {
        assert.deepEqual(res.body, error('This endpoint does not accept bot requests.'));
        return;
      }
      assert.equal(res.status, 200, res.text);
      const sees = MANAGES_HELPER_BOT.includes(who);
      assert.deepEqual(res.body, { ...SUCCESS, bots: sees ? [helperBot(t)] : [] });
    });
  }

  test('administrators see every bot; members only their own, deactivated ones included', async () => {
    const mine = await createBot(t.as(t.fx.member2), { short_name: 'mine', full_name: 'Mine' });
    const del = await t.as(t.fx.member2).delete(`/bots/${mine.user_id}`);
    assert.equal(del.status, 200, del.text);
    const ofMember2 = await botsOf(t.as(t.fx.member2));
    assert.deepEqual(
      ofMember2.map((b) => [b.user_id, b.is_active, b.owner_id]),
      [[mine.user_id, false, t.fx.member2.id]],
    );
    assert.deepEqual(
      (await botsOf(t.as(t.fx.admin))).map((b) => b.user_id),
      [t.fx.bot.id, mine.user_id],
    );
    assert.deepEqual(
      (await botsOf(t.as(t.fx.member))).map((b) => b.user_id),
      [t.fx.bot.id],
    );
    // Another organization's administrator sees none of these.
    assert.deepEqual(await botsOf(t.as({ ...t.fx.otherOwner, host: 'other.parley.test' })), []);
  });
});
