import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { basicAuth } from '../support/client.ts';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(async () => {
  await t.close();
});

const unauthorized = (msg: string) => ({ result: 'error', msg, code: 'UNAUTHORIZED' });

test('a valid API email and key authenticate', async () => {
  const res = await t.as(t.fx.member).get('/users/me');
  assert.equal(res.status, 200);
  assert.equal(res.body.user_id, t.fx.member.id);
});

test('the real address also authenticates when it differs from the API email', async () => {
  const res = await t
    .as({ email: t.fx.member.delivery_email.toUpperCase(), api_key: t.fx.member.api_key })
    .get('/users/me');
  assert.equal(res.status, 200);
});

for (const [name, header, msg] of [
  ['no header', undefined, 'Missing authorization header for basic auth'],
  ['another scheme', 'Bearer abc', 'This endpoint requires HTTP basic authentication.'],
  [
    'no colon',
    `Basic ${Buffer.from('nocolon').toString('base64')}`,
    'Invalid authorization header for basic auth',
  ],
  ['malformed key', basicAuth('member@parley.test', 'short'), 'Malformed API key'],
  ['wrong key', basicAuth('member@parley.test', 'A'.repeat(32)), 'Invalid API key'],
] as const) {
  test(`401 UNAUTHORIZED with WWW-Authenticate for ${name}`, async () => {
    const res = await t.as(null).inject({
      method: 'GET',
      url: '/api/v1/users/me',
      headers: header ? { authorization: header } : {},
    });
    assert.equal(res.statusCode, 401);
    assert.equal(res.headers['www-authenticate'], 'Basic realm="parley"');
    assert.deepEqual(JSON.parse(res.body), unauthorized(msg));
  });
}

test("another user's email with a valid key is refused", async () => {
  const res = await t
    .as({ email: t.fx.admin.email, api_key: t.fx.member.api_key })
    .get('/users/me');
  assert.equal(res.status, 401);
  assert.deepEqual(res.body, unauthorized('Invalid API key'));
});

test('a deactivated user is refused', async () => {
  const res = await t.as(t.fx.deactivated).get('/users/me');
  assert.equal(res.status, 401);
  assert.deepEqual(res.body, unauthorized('Account is deactivated'));
});

// Authentication reuses the user and organization rows it read while no users or realms
// row has been written since (src/http/auth.ts); each change below must show at once.
test('a change to the user or organization is seen by the very next request', async () => {
  const me = () => t.as(t.fx.member2).get('/users/me');
  assert.equal((await me()).body.role, 400);
  assert.equal((await me()).status, 200, 'a second request, answered from the known rows');
  // Written straight to the database, as a command-line action on the server's file would.
  await t.ctx.db
    .updateTable('users')
    .set({ role: 300 })
    .where('id', '=', t.fx.member2.id)
    .execute();
  assert.equal((await me()).body.role, 300);
  await t.ctx.db
    .updateTable('users')
    .set({ is_active: 0 })
    .where('id', '=', t.fx.member2.id)
    .execute();
  assert.deepEqual((await me()).body, unauthorized('Account is deactivated'));
  await t.ctx.db
    .updateTable('users')
    .set({ is_active: 1 })
    .where('id', '=', t.fx.member2.id)
    .execute();
  assert.equal((await me()).status, 200);
  await t.ctx.db
    .updateTable('realms')
    .set({ deactivated: 1 })
    .where('id', '=', t.fx.realm.id)
    .execute();
  try {
    assert.deepEqual((await me()).body, unauthorized('This organization has been deactivated'));
  } finally {
    await t.ctx.db
      .updateTable('realms')
      .set({ deactivated: 0 })
      .where('id', '=', t.fx.realm.id)
      .execute();
  }
  assert.equal((await me()).status, 200);
});

test('a change to the organization is seen by the very next request that needs no key', async () => {
  const settings = async () => (await t.as(null).get('/server_settings')).body.realm_name as string;
  const name = await settings();
  assert.equal(await settings(), name, 'a second request, answered from the known row');
  await t.ctx.db
    .updateTable('realms')
    .set({ name: 'Renamed outside' })
    .where('id', '=', t.fx.realm.id)
    .execute();
  try {
    assert.equal(await settings(), 'Renamed outside');
  } finally {
    await t.ctx.db.updateTable('realms').set({ name }).where('id', '=', t.fx.realm.id).execute();
  }
  assert.equal(await settings(), name);
});

test("a bot's regenerated key replaces the old one at once", async () => {
  const bot = t.as(t.fx.bot);
  assert.equal((await bot.get('/users/me')).status, 200);
  const res = await t.as(t.fx.owner).post(`/bots/${t.fx.bot.id}/api_key/regenerate`);
  assert.equal(res.status, 200);
  assert.deepEqual((await bot.get('/users/me')).body, unauthorized('Invalid API key'));
  const fresh = await t
    .as({ email: t.fx.bot.email, api_key: res.body.api_key as string })
    .get('/users/me');
  assert.equal(fresh.body.user_id, t.fx.bot.id);
});

test("a user of another organization cannot authenticate on this organization's host", async () => {
  const res = await t.as(t.fx.otherOwner).get('/users/me');
  assert.equal(res.status, 401);
  assert.deepEqual(res.body, unauthorized('Invalid API key'));
  const own = await t.as({ ...t.fx.otherOwner, host: 'other.parley.test' }).get('/users/me');
  assert.equal(own.status, 200);
  assert.equal(own.body.user_id, t.fx.otherOwner.id);
});

test('a deactivated organization refuses its users', async () => {
  await t.ctx.db
    .updateTable('realms')
    .set({ deactivated: 1 })
    .where('id', '=', t.fx.other.id)
    .execute();
  try {
    const res = await t.as({ ...t.fx.otherOwner, host: 'other.parley.test' }).get('/users/me');
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, unauthorized('This organization has been deactivated'));
  } finally {
    await t.ctx.db
      .updateTable('realms')
      .set({ deactivated: 0 })
      .where('id', '=', t.fx.other.id)
      .execute();
  }
});

test('POST /fetch_api_key returns the key for a correct password', async () => {
  const res = await t.as(null).post('/fetch_api_key', {
    username: t.fx.member.delivery_email,
    password: t.fx.member.password,
  });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, {
    result: 'success',
    msg: '',
    api_key: t.fx.member.api_key,
    email: t.fx.member.email,
    user_id: t.fx.member.id,
  });
});

test('POST /fetch_api_key refuses a wrong password, an unknown user and a deactivated one', async () => {
  for (const [username, password, status, code, msg] of [
    [
      t.fx.member.delivery_email,
      'wrong-password',
      401,
      'AUTHENTICATION_FAILED',
      'Your username or password is incorrect',
    ],
    [
      'nobody@parley.test',
      'whatever',
      401,
      'AUTHENTICATION_FAILED',
      'Your username or password is incorrect',
    ],
    [
      t.fx.deactivated.delivery_email,
      t.fx.deactivated.password,
      401,
      'USER_DEACTIVATED',
      'Account is deactivated',
    ],
  ] as const) {
    const res = await t.as(null).post('/fetch_api_key', { username, password });
    assert.equal(res.status, status);
    assert.deepEqual(res.body, { result: 'error', msg, code });
  }
  const missing = await t.as(null).post('/fetch_api_key', { username: 'x' });
  assert.equal(missing.status, 400);
  assert.deepEqual(missing.body, {
    result: 'error',
    msg: "Missing 'password' argument",
    code: 'REQUEST_VARIABLE_MISSING',
    var_name: 'password',
  });
});
