// The bots API, managing one bot: PATCH and DELETE /bots/{id}, POST
// /bots/{id}/api_key/regenerate and GET /bots/{id}/config, with permissions, errors and events.
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
  ids,
  MANAGES_HELPER_BOT,
  type NoticeRecorder,
  recordNotices,
  servicesOf,
  unordered,
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

describe('PATCH /bots/{id}', () => {
  test('the owner renames the bot: response and events', async () => {
    const res = await t.as(t.fx.member).patch(`/bots/${t.fx.bot.id}`, { full_name: 'Helper II' });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {
      ...SUCCESS,
      full_name: 'Helper II',
      avatar_url: gravatar('helper-bot@parley.test'),
      service_interface: null,
      service_payload_url: null,
      config_data: null,
      default_sending_stream: null,
      default_events_register_stream: null,
      default_all_public_streams: false,
      bot_owner: t.fx.member.email,
    });
    assert.deepEqual(await notices.take(), [
      {
        event: {
          type: 'realm_user',
          op: 'update',
          person: { user_id: t.fx.bot.id, full_name: 'Helper II' },
        },
        users: everyone(t),
      },
      {
        event: {
          type: 'realm_bot',
          op: 'update',
          bot: { user_id: t.fx.bot.id, full_name: 'Helper II' },
        },
        users: helperBotManagers(t),
      },
    ]);
    assert.deepEqual(await botsOf(t.as(t.fx.member)), [helperBot(t, { full_name: 'Helper II' })]);
  });

  test('sending the unchanged name changes nothing; a name in use is refused', async () => {
    const same = await t.as(t.fx.member).patch(`/bots/${t.fx.bot.id}`, { full_name: 'Helper Bot' });
    assert.equal(same.status, 200, same.text);
    assert.deepEqual(await notices.take(), []);
    const taken = await t
      .as(t.fx.member)
      .patch(`/bots/${t.fx.bot.id}`, { full_name: 'Nina Member' });
    assert.equal(taken.status, 400);
    assert.deepEqual(taken.body, error('Name is already in use!'));
    const blank = await t.as(t.fx.member).patch(`/bots/${t.fx.bot.id}`, { full_name: ' ' });
    assert.deepEqual(blank.body, error('Name too short!'));
  });

  test('administrators change the role; the owner may not; owner roles need an owner', async () => {
    const byOwner = await t.as(t.fx.member).patch(`/bots/${t.fx.bot.id}`, { role: 300 });
    assert.equal(byOwner.status, 400);
    assert.deepEqual(
      byOwner.body,
      error('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'),
    );
    // The unchanged role needs no permission.
    const same = await t.as(t.fx.member).patch(`/bots/${t.fx.bot.id}`, { role: 400 });
    assert.equal(same.status, 200, same.text);
    const toOwner = await t.as(t.fx.admin).patch(`/bots/${t.fx.bot.id}`, { role: 100 });
    assert.deepEqual(
      toOwner.body,
      error('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL'),
    );
    const invalid = await t.as(t.fx.admin).patch(`/bots/${t.fx.bot.id}`, { role: 500 });
    assert.deepEqual(invalid.body, error('Invalid role'));
    assert.deepEqual(await notices.take(), []);

    const res = await t.as(t.fx.admin).patch(`/bots/${t.fx.bot.id}`, { role: 300 });
    assert.equal(res.status, 200, res.text);
    // The order among these belongs to the users area's role change. The role reaches bot
    // managers through realm_user: the bot objects of realm_bots carry no role.
    assert.deepEqual(
      unordered(await notices.take()),
      unordered([
        {
          event: {
            type: 'user_group',
            op: 'remove_members',
            group_id: await groupId(t, 'role:fullmembers'),
            user_ids: [t.fx.bot.id],
          },
          users: everyone(t),
        },
        {
          event: {
            type: 'user_group',
            op: 'add_members',
            group_id: await groupId(t, 'role:moderators'),
            user_ids: [t.fx.bot.id],
          },
          users: everyone(t),
        },
        {
          event: { type: 'realm_user', op: 'update', person: { user_id: t.fx.bot.id, role: 300 } },
          users: everyone(t),
        },
      ]),
    );
    const user = await t.as(t.fx.admin).get(`/users/${t.fx.bot.id}`);
    assert.equal((user.body.user as Record<string, unknown>).role, 300);

    const byRealmOwner = await t.as(t.fx.owner).patch(`/bots/${t.fx.bot.id}`, { role: 100 });
    assert.equal(byRealmOwner.status, 200, byRealmOwner.text);
    // From owner back down also needs an owner.
    const down = await t.as(t.fx.admin).patch(`/bots/${t.fx.bot.id}`, { role: 400 });
    assert.deepEqual(down.body, error('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL'));
  });

  test('the owner hands the bot to another member: events for each side', async () => {
    const res = await t
      .as(t.fx.member)
      .patch(`/bots/${t.fx.bot.id}`, { bot_owner_id: t.fx.member2.id });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.bot_owner, t.fx.member2.email);
    assert.deepEqual(await notices.take(), [
      {
        event: { type: 'realm_bot', op: 'delete', bot: { user_id: t.fx.bot.id } },
        users: [t.fx.member.id],
      },
      {
        event: { type: 'realm_bot', op: 'add', bot: helperBot(t, { owner_id: t.fx.member2.id }) },
        users: [t.fx.member2.id],
      },
      {
        event: {
          type: 'realm_bot',
          op: 'update',
          bot: { user_id: t.fx.bot.id, owner_id: t.fx.member2.id },
        },
        users: ids(t.fx.owner, t.fx.admin),
      },
      {
        event: {
          type: 'realm_user',
          op: 'update',
          person: { user_id: t.fx.bot.id, bot_owner_id: t.fx.member2.id },
        },
        users: everyone(t),
      },
    ]);
    assert.deepEqual(await botsOf(t.as(t.fx.member)), []);
    assert.deepEqual(await botsOf(t.as(t.fx.member2)), [
      helperBot(t, { owner_id: t.fx.member2.id }),
    ]);
    const formerOwner = await t
      .as(t.fx.member)
      .patch(`/bots/${t.fx.bot.id}`, { full_name: 'Mine' });
    assert.deepEqual(formerOwner.body, error('Insufficient permission', 'UNAUTHORIZED_PRINCIPAL'));
    // Handing it to its current owner changes nothing.
    const same = await t
      .as(t.fx.member2)
      .patch(`/bots/${t.fx.bot.id}`, { bot_owner_id: t.fx.member2.id });
    assert.equal(same.status, 200);
    assert.deepEqual(await notices.take(), []);
  });

  test('an administrator takes the bot: administrators get an update, not an add', async () => {
    const res = await t
      .as(t.fx.admin)
      .patch(`/bots/${t.fx.bot.id}`, { bot_owner_id: t.fx.admin.id });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(await notices.take(), [
      {
        event: { type: 'realm_bot', op: 'delete', bot: { user_id: t.fx.bot.id } },
        users: [t.fx.member.id],
      },
      {
        event: {
          type: 'realm_bot',
          op: 'update',
          bot: { user_id: t.fx.bot.id, owner_id: t.fx.admin.id },
        },
        users: ids(t.fx.owner, t.fx.admin),
      },
      {
        event: {
          type: 'realm_user',
          op: 'update',
          person: { user_id: t.fx.bot.id, bot_owner_id: t.fx.admin.id },
        },
        users: everyone(t),
      },
    ]);
  });

  test('the new owner must be an active person of the organization', async () => {
    for (const [owner, msg] of [
      [999999, 'Failed to change owner, no such user'],
      [t.fx.otherOwner.id, 'Failed to change owner, no such user'],
      [t.fx.deactivated.id, 'Failed to change owner, user is deactivated'],
      [t.fx.bot.id, "Failed to change owner, bots can't own other bots"],
    ] as const) {
      const res = await t.as(t.fx.member).patch(`/bots/${t.fx.bot.id}`, { bot_owner_id: owner });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, error(msg));
    }
    const notInt = await t.as(t.fx.member).patch(`/bots/${t.fx.bot.id}`, { bot_owner_id: 'x' });
    assert.deepEqual(notInt.body, error('bot_owner_id is not an integer'));
    assert.deepEqual(await notices.take(), []);
  });

  test('a failed change leaves everything as it was and emits nothing', async () => {
    const res = await t
      .as(t.fx.member)
      .patch(`/bots/${t.fx.bot.id}`, { full_name: 'Renamed', bot_owner_id: 999999 });
    assert.equal(res.status, 400);
    assert.deepEqual(await notices.take(), []);
    assert.deepEqual(await botsOf(t.as(t.fx.member)), [helperBot(t)]);
  });

  test('default_all_public_streams changes; default channels can only be cleared', async () => {
    const res = await t
      .as(t.fx.member)
      .patch(`/bots/${t.fx.bot.id}`, { default_all_public_streams: true });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.default_all_public_streams, true);
    assert.deepEqual(await notices.take(), [
      {
        event: {
          type: 'realm_bot',
          op: 'update',
          bot: { user_id: t.fx.bot.id, default_all_public_streams: true },
        },
        users: helperBotManagers(t),
      },
    ]);
    assert.deepEqual(await botsOf(t.as(t.fx.member)), [
      helperBot(t, { default_all_public_streams: true }),
    ]);
    const again = await t
      .as(t.fx.member)
      .patch(`/bots/${t.fx.bot.id}`, { default_all_public_streams: true });
    assert.equal(again.status, 200);
    assert.deepEqual(await notices.take(), []);

    const clear = await t.as(t.fx.member).patch(`/bots/${t.fx.bot.id}`, {
      default_sending_stream: '',
      default_events_register_stream: '',
    });
    assert.equal(clear.status, 200, clear.text);
    assert.equal(clear.body.default_sending_stream, null);
    for (const name of ['default_sending_stream', 'default_events_register_stream']) {
      const bad = await t.as(t.fx.member).patch(`/bots/${t.fx.bot.id}`, { [name]: 'general' });
      assert.equal(bad.status, 400);
      assert.deepEqual(bad.body, error("Invalid channel name 'general'"));
    }
    assert.deepEqual(await notices.take(), []);
  });

  test("an outgoing webhook's URL and interface change; its token stays", async () => {
    const bot = await createBot(t.as(t.fx.member), {
      short_name: 'hook',
      bot_type: 3,
      payload_url: 'https://old.example.com/',
    });
    await notices.take();
    const [{ token }] = await servicesOf(t.as(t.fx.member), bot.user_id);

    const res = await t.as(t.fx.member).patch(`/bots/${bot.user_id}`, {
      service_payload_url: JSON.stringify('https://new.example.com/hook'),
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.service_payload_url, 'https://new.example.com/hook');
    assert.equal(res.body.service_interface, 1);
    const services = [{ base_url: 'https://new.example.com/hook', interface: 1, token }];
    assert.deepEqual(await notices.take(), [
      {
        event: { type: 'realm_bot', op: 'update', bot: { user_id: bot.user_id, services } },
        users: helperBotManagers(t),
      },
    ]);

    const iface = await t.as(t.fx.admin).patch(`/bots/${bot.user_id}`, { service_interface: 2 });
    assert.equal(iface.status, 200, iface.text);
    assert.equal(iface.body.service_interface, 2);
    assert.equal(iface.body.service_payload_url, 'https://new.example.com/hook');
    const [after] = (await botsOf(t.as(t.fx.member))).filter((b) => b.user_id === bot.user_id);
    assert.deepEqual(after.services, [
      { base_url: 'https://new.example.com/hook', interface: 2, token },
    ]);
    assert.equal((await notices.take()).length, 1);

    for (const [params, msg] of [
      [{ service_payload_url: 'nope' }, 'service_payload_url is not an http or https URL'],
      [{ service_interface: 7 }, 'Invalid interface type'],
    ] as const) {
      const bad = await t.as(t.fx.member).patch(`/bots/${bot.user_id}`, params);
      assert.equal(bad.status, 400);
      assert.deepEqual(bad.body, error(msg));
    }
    const generic = await t
      .as(t.fx.member)
      .patch(`/bots/${t.fx.bot.id}`, { service_payload_url: 'https://example.com/' });
    assert.deepEqual(
      generic.body,
      error('Only outgoing webhook bots have a service URL and interface'),
    );
  });

  test("an embedded bot's configuration is merged", async () => {
    const bot = await createBot(t.as(t.fx.member), {
      short_name: 'embedded',
      bot_type: 4,
      service_name: 'converter',
      config_data: { a: '1', b: '2' },
    });
    await notices.take();
    const res = await t
      .as(t.fx.member)
      .patch(`/bots/${bot.user_id}`, { config_data: { b: 'two', c: '3' } });
    assert.equal(res.status, 200, res.text);
    const config_data = { a: '1', b: 'two', c: '3' };
    assert.deepEqual(res.body.config_data, config_data);
    assert.deepEqual(await notices.take(), [
      {
        event: {
          type: 'realm_bot',
          op: 'update',
          bot: {
            user_id: bot.user_id,
            services: [{ service_name: 'converter', config_data }],
          },
        },
        users: helperBotManagers(t),
      },
    ]);
    const generic = await t
      .as(t.fx.member)
      .patch(`/bots/${t.fx.bot.id}`, { config_data: { a: '1' } });
    assert.deepEqual(generic.body, error('Only embedded bots have configuration data'));
  });

  test('only bots of the organization can be changed', async () => {
    const otherBot = await createBot(t.as({ ...t.fx.otherOwner, host: 'other.parley.test' }), {
      short_name: 'o',
    });
    for (const id of [t.fx.member.id, 999999, otherBot.user_id]) {
      const res = await t.as(t.fx.admin).patch(`/bots/${id}`, { full_name: 'X' });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, error('No such bot'));
    }
    const notInt = await t.as(t.fx.admin).patch('/bots/abc', { full_name: 'X' });
    assert.equal(notInt.status, 400);
    assert.deepEqual(notInt.body, error('bot_id is not an integer'));
  });

  for (const who of EVERY_CALLER) {
    test(`permission: ${who}`, async () => {
      const res = await as(t, who).patch(`/bots/${t.fx.bot.id}`, { full_name: 'Renamed Bot' });
      if (assertUnauthorized(who, res)) return;
      if (MANAGES_HELPER_BOT.includes(who)) {
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.full_name, 'Renamed Bot');
      } else {
        assert.equal(res.status, 400);
        assert.deepEqual(res.body, error('Insufficient permission', 'UNAUTHORIZED_PRINCIPAL'));
      }
    });
  }
});

describe('DELETE /bots/{id}', () => {
  test('the owner deactivates the bot: events, and its key stops working', async () => {
    const res = await t.as(t.fx.member).delete(`/bots/${t.fx.bot.id}`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(await notices.take(), [
      {
        event: {
          type: 'realm_user',
          op: 'update',
          person: { user_id: t.fx.bot.id, is_active: false },
        },
        users: everyone(t).filter((id) => id !== t.fx.bot.id),
      },
      {
        event: { type: 'realm_bot', op: 'update', bot: { user_id: t.fx.bot.id, is_active: false } },
        users: helperBotManagers(t),
      },
    ]);
    const me = await t.as(t.fx.bot).get('/users/me');
    assert.equal(me.status, 401);
    assert.deepEqual(me.body, error('Account is deactivated', 'UNAUTHORIZED'));
    assert.deepEqual(await botsOf(t.as(t.fx.member)), [helperBot(t, { is_active: false })]);

    // Deleting it again changes nothing.
    const again = await t.as(t.fx.member).delete(`/bots/${t.fx.bot.id}`);
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(await notices.take(), []);
  });

  test('only bots can be deleted here', async () => {
    for (const id of [t.fx.member2.id, 999999]) {
      const res = await t.as(t.fx.admin).delete(`/bots/${id}`);
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, error('No such bot'));
    }
    const member2 = await t.as(t.fx.member2).get('/users/me');
    assert.equal(member2.status, 200);
  });

  for (const who of EVERY_CALLER) {
    test(`permission: ${who}`, async () => {
      const res = await as(t, who).delete(`/bots/${t.fx.bot.id}`);
      if (assertUnauthorized(who, res)) return;
      if (MANAGES_HELPER_BOT.includes(who)) {
        assert.equal(res.status, 200, res.text);
        assert.equal((await t.as(t.fx.bot).get('/users/me')).status, 401);
      } else {
        assert.equal(res.status, 400);
        assert.deepEqual(res.body, error('Insufficient permission', 'UNAUTHORIZED_PRINCIPAL'));
        assert.equal((await t.as(t.fx.bot).get('/users/me')).status, 200);
      }
    });
  }
});

describe('POST /bots/{id}/api_key/regenerate', () => {
  test('a new key replaces the old one, which stops working', async () => {
    const res = await t.as(t.fx.member).post(`/bots/${t.fx.bot.id}/api_key/regenerate`);
    assert.equal(res.status, 200, res.text);
    const apiKey = res.body.api_key as string;
    assert.match(apiKey, API_KEY);
    assert.notEqual(apiKey, t.fx.bot.api_key);
    assert.deepEqual(res.body, { ...SUCCESS, api_key: apiKey });
    assert.deepEqual(await notices.take(), [
      {
        event: { type: 'realm_bot', op: 'update', bot: { user_id: t.fx.bot.id, api_key: apiKey } },
        users: helperBotManagers(t),
      },
    ]);
    const old = await t.as(t.fx.bot).get('/users/me');
    assert.equal(old.status, 401);
    assert.deepEqual(old.body, error('Invalid API key', 'UNAUTHORIZED'));
    const fresh = await t.as({ email: t.fx.bot.email, api_key: apiKey }).get('/users/me');
    assert.equal(fresh.status, 200, fresh.text);
    assert.deepEqual(await botsOf(t.as(t.fx.member)), [helperBot(t, { api_key: apiKey })]);
  });

  test('only bots', async () => {
    const res = await t.as(t.fx.admin).post(`/bots/${t.fx.member.id}/api_key/regenerate`);
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, error('No such bot'));
    assert.equal((await t.as(t.fx.member).get('/users/me')).status, 200);
  });

  for (const who of EVERY_CALLER) {
    test(`permission: ${who}`, async () => {
      const res = await as(t, who).post(`/bots/${t.fx.bot.id}/api_key/regenerate`);
      if (assertUnauthorized(who, res)) return;
      if (MANAGES_HELPER_BOT.includes(who)) {
        assert.equal(res.status, 200, res.text);
        assert.match(res.body.api_key as string, API_KEY);
      } else {
        assert.equal(res.status, 400);
        assert.deepEqual(res.body, error('Insufficient permission', 'UNAUTHORIZED_PRINCIPAL'));
        assert.equal((await t.as(t.fx.bot).get('/users/me')).status, 200);
      }
    });
  }
});

describe('GET /bots/{id}/config', () => {
  test("a generic bot's file holds its email, key and site", async () => {
    const res = await t.as(t.fx.member).get(`/bots/${t.fx.bot.id}/config`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(res.headers['content-disposition'], 'attachment; filename="zuliprc"');
    assert.equal(
      res.text,
      `[api]\nemail=helper-bot@parley.test\nkey=${t.fx.bot.api_key}\nsite=http://parley.test\n`,
    );
  });

  test("an outgoing webhook bot's file also holds the token its payloads carry", async () => {
    const bot = await createBot(t.as(t.fx.member), {
      short_name: 'hook',
      bot_type: 3,
      payload_url: 'https://example.com/hook',
    });
    const [{ token }] = await servicesOf(t.as(t.fx.member), bot.user_id);
    const res = await t.as(t.fx.admin).get(`/bots/${bot.user_id}/config`);
    assert.equal(res.status, 200, res.text);
    assert.equal(
      res.text,
      `[api]\nemail=hook-bot@parley.test\nkey=${bot.api_key}\nsite=http://parley.test\ntoken=${token}\n`,
    );
  });

  test("another organization's file names its own site", async () => {
    const other = { ...t.fx.otherOwner, host: 'other.parley.test' };
    const bot = await createBot(t.as(other), { short_name: 'o' });
    const res = await t.as(other).get(`/bots/${bot.user_id}/config`);
    assert.equal(
      res.text,
      `[api]\nemail=o-bot@other.parley.test\nkey=${bot.api_key}\nsite=http://other.parley.test\n`,
    );
    const fromHere = await t.as(t.fx.admin).get(`/bots/${bot.user_id}/config`);
    assert.equal(fromHere.status, 400);
    assert.deepEqual(fromHere.body, error('No such bot'));
  });

  for (const who of EVERY_CALLER) {
    test(`permission: ${who}`, async () => {
      const res = await as(t, who).get(`/bots/${t.fx.bot.id}/config`);
      if (assertUnauthorized(who, res)) return;
      if (MANAGES_HELPER_BOT.includes(who)) {
        assert.equal(res.status, 200, res.text);
        assert.ok(res.text.includes(`key=${t.fx.bot.api_key}\n`));
      } else {
        assert.equal(res.status, 400);
        assert.deepEqual(res.body, error('Insufficient permission', 'UNAUTHORIZED_PRINCIPAL'));
        assert.ok(!res.text.includes(t.fx.bot.api_key));
      }
    });
  }
});
