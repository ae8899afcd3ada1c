// The conventions every route shares: how parameters arrive and are checked, the response
// envelope, ignored_parameters_unsupported, unknown routes and methods, and hostile input.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { basicAuth, type Client } from '../support/client.ts';
import { HOSTILE_SEGMENTS, HOSTILE_VALUES } from '../support/openapi-fuzz.ts';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(async () => {
  await t.close();
});

const err = (msg: string, code = 'BAD_REQUEST', extra: Record<string, unknown> = {}) => ({
  result: 'error',
  msg,
  code,
  ...extra,
});
const OK = { result: 'success', msg: '' };
const admin = (): Client => t.as(t.fx.admin);
const member = (): Client => t.as(t.fx.member);

/** A raw request as the member, on the default organization's host. */
function raw(opts: {
  method: string;
  url: string;
  headers?: Record<string, string>;
  payload?: string | Buffer;
}) {
  return t.app.inject({
    method: opts.method as 'GET',
    url: opts.url,
    headers: {
      host: 'parley.test',
      authorization: basicAuth(t.fx.member.email, t.fx.member.api_key),
      ...opts.headers,
    },
    ...(opts.payload !== undefined ? { payload: opts.payload } : {}),
  });
}
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe('typed parameter validation', () => {
  test('a missing required parameter names itself', async () => {
    const res = await admin().post('/users', { email: 'x@parley.test', full_name: 'Some One' });
    assert.deepEqual(
      [res.status, res.body],
      [
        400,
        err("Missing 'password' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'password' }),
      ],
    );
  });

  test('parameters with defaults may be left out', async () => {
    const res = await member().get('/users');
    assert.equal(res.status, 200);
  });

  test('wrong types get the reference messages', async () => {
    const cases: Array<[string, string, Record<string, unknown>, Record<string, unknown>]> = [
      ['GET', '/users', { client_gravatar: 'yes' }, err('client_gravatar is not a boolean')],
      ['GET', '/users', { client_gravatar: '1' }, err('client_gravatar is not a boolean')],
      ['GET', '/users', { user_ids: '[1,' }, err('user_ids is not valid JSON')],
      ['GET', '/users', { user_ids: '{}' }, err('user_ids is not a list')],
      ['GET', '/users', { user_ids: '"1"' }, err('user_ids is not a list')],
      ['GET', '/users', { user_ids: '[1,"a"]' }, err('user_ids[1] is not an integer')],
      ['GET', '/users', { user_ids: '[1.5]' }, err('user_ids[0] is not an integer')],
      ['GET', '/users', { user_ids: '[null]' }, err('user_ids[0] is not an integer')],
      [
        'PATCH',
        '/settings',
        { web_font_size_px: '12px' },
        err('web_font_size_px is not an integer'),
      ],
      [
        'PATCH',
        '/settings',
        { web_font_size_px: '1e400' },
        err('web_font_size_px is not an integer'),
      ],
      [
        'PATCH',
        '/settings',
        { web_font_size_px: '99999999999999999999' },
        err('web_font_size_px is not an integer'),
      ],
      ['PATCH', '/settings', { enter_sends: '' }, err('enter_sends is not a boolean')],
      ['PATCH', '/settings', { enter_sends: 'True' }, err('enter_sends is not a boolean')],
      ['PATCH', `/users/${t.fx.member2.id}`, { role: '250' }, err('Invalid role')],
      [
        'PATCH',
        `/users/${t.fx.member2.id}`,
        { full_name: 'x'.repeat(1001) },
        err('full_name is too long (limit: 1000 characters)'),
      ],
    ];
    for (const [method, path, params, expected] of cases) {
      const res = await admin().request(method, path, params);
      assert.deepEqual(
        [res.status, res.body],
        [400, expected],
        `${path} ${JSON.stringify(params)}`,
      );
    }
  });

  test('length limits count characters, not UTF-16 units', async () => {
    // Each of these emoji is two UTF-16 units: 100 of them are 100 characters.
    const add = (word: string) =>
      admin().post('/users/me/alert_words', { alert_words: JSON.stringify([word]) });
    assert.equal((await add('😀'.repeat(100))).status, 200);
    const long = await add(`${'😀'.repeat(100)}x`);
    assert.deepEqual(
      [long.status, long.body],
      [400, err('alert_words[0] is too long (limit: 100 characters)')],
    );
  });

  test('NUL is refused in any parameter, path segments included', async () => {
    const cases: Array<[string, string, Record<string, unknown>, string]> = [
      ['PATCH', '/settings', { full_name: 'A\u0000B' }, 'full_name must not contain null bytes'],
      ['PATCH', '/realm', { name: 'Org\u0000' }, 'name must not contain null bytes'],
      ['GET', '/users/a%00b', {}, 'user_id_or_email must not contain null bytes'],
    ];
    for (const [method, path, params, msg] of cases) {
      const res = await t.as(t.fx.owner).request(method, path, params);
      assert.deepEqual([res.status, res.body], [400, err(msg)], path);
    }
  });

  test('JSON values nested deeper than anyone needs are refused without a crash', async () => {
    const deep = '['.repeat(100000) + ']'.repeat(100000);
    const res = await member().get('/users', { user_ids: deep });
    assert.deepEqual([res.status, res.body], [400, err('user_ids is nested too deeply')]);
    let nested: unknown = 1;
    for (let i = 0; i < 40; i++) nested = [nested];
    const group = { new: nested };
    const realm = await t.as(t.fx.owner).patch('/realm', { can_create_bots_group: group });
    assert.deepEqual(realm.body, err('can_create_bots_group is nested too deeply'));
  });
});

describe('ignored_parameters_unsupported', () => {
  test('lists unknown parameters of a successful request, sorted, from query and body', async () => {
    const res = await member().request('PATCH', '/settings?zeta=1', {
      alpha: 'x',
      enter_sends: true,
    });
    assert.deepEqual(res.body, { ...OK, ignored_parameters_unsupported: ['alpha', 'zeta'] });
    const get = await member().get('/users/me', { b: 1, a: 2 });
    assert.deepEqual(get.body.ignored_parameters_unsupported, ['a', 'b']);
  });

  test('is absent when every parameter was used, on errors, and for path parameters', async () => {
    const used = await member().patch('/settings', { enter_sends: true });
    assert.deepEqual(used.body, OK);
    const failed = await member().patch('/settings', { enter_sends: 'no', unknown: 1 });
    assert.deepEqual(failed.body, err('enter_sends is not a boolean'));
    const path = await member().get(`/users/${t.fx.admin.id}`);
    assert.equal('ignored_parameters_unsupported' in path.body, false);
  });

  test('the reference example: PATCH /settings with an unsupported setting', async () => {
    const res = await member().patch('/settings', { invalid_setting: 'x' });
    assert.deepEqual(res.body, { ...OK, ignored_parameters_unsupported: ['invalid_setting'] });
  });
});

describe('how parameters arrive', () => {
  test('in the query string for any method', async () => {
    const res = await member().request(
      'PATCH',
      '/settings',
      { enter_sends: true },
      { asQuery: true },
    );
    assert.deepEqual(res.body, OK);
    const check = await t.as(t.fx.member).patch('/settings', { enter_sends: true });
    assert.deepEqual(check.body, OK);
  });

  test('as multipart form data', async () => {
    const res = await member().multipart('PATCH', '/settings', {
      full_name: 'Multi Part',
      twenty_four_hour_time: true,
      extra: 'x',
    });
    assert.deepEqual(res.body, { ...OK, ignored_parameters_unsupported: ['extra'] });
    const me = await member().get('/users/me');
    assert.equal(me.body.full_name, 'Multi Part');
    const created = await admin().multipart('POST', '/users', {
      email: 'multi@parley.test',
      password: 'multipart-password',
      full_name: 'Multi User',
    });
    assert.equal(created.status, 200, created.text);
    const withFile = await member().multipart('PATCH', '/settings', { enter_sends: false }, [
      { field: 'file', filename: 'a.txt', contentType: 'text/plain', data: Buffer.from('hi') },
    ]);
    assert.deepEqual(withFile.body, OK);
  });

  test('as a JSON object body', async () => {
    const res = await raw({
      method: 'PATCH',
      url: '/api/v1/settings',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ full_name: 'Json Name', enter_sends: true, timezone: 'UTC' }),
    });
    assert.deepEqual([res.statusCode, JSON.parse(res.body)], [200, OK]);
    const me = await member().get('/users/me');
    assert.deepEqual([me.body.full_name, me.body.timezone], ['Json Name', 'UTC']);
  });

  test('a parameter given twice is refused', async () => {
    const twiceInQuery = await raw({
      method: 'GET',
      url: '/api/v1/users?client_gravatar=true&client_gravatar=false',
    });
    assert.deepEqual(
      [twiceInQuery.statusCode, JSON.parse(twiceInQuery.body)],
      [400, err("Parameter 'client_gravatar' was given more than once")],
    );
    const queryAndBody = await raw({
      method: 'PATCH',
      url: '/api/v1/settings?enter_sends=true',
      headers: FORM,
      payload: 'enter_sends=false',
    });
    assert.deepEqual(
      JSON.parse(queryAndBody.body),
      err("Parameter 'enter_sends' was given more than once"),
    );
    const twiceInBody = await raw({
      method: 'PATCH',
      url: '/api/v1/settings',
      headers: FORM,
      payload: 'enter_sends=false&enter_sends=true',
    });
    assert.equal(twiceInBody.statusCode, 400);
  });
});

describe('malformed bodies and requests', () => {
  const cases: Array<[string, Parameters<typeof raw>[0], number, Record<string, unknown>]> = [
    [
      'invalid JSON',
      {
        method: 'PATCH',
        url: '/api/v1/settings',
        headers: { 'content-type': 'application/json' },
        payload: '{"a":',
      },
      400,
      err('Malformed JSON', 'INVALID_JSON'),
    ],
    [
      'empty JSON',
      {
        method: 'PATCH',
        url: '/api/v1/settings',
        headers: { 'content-type': 'application/json' },
        payload: '',
      },
      400,
      err('Malformed JSON', 'INVALID_JSON'),
    ],
    [
      'a JSON array',
      {
        method: 'PATCH',
        url: '/api/v1/settings',
        headers: { 'content-type': 'application/json' },
        payload: '[1]',
      },
      400,
      err('The request body must hold named parameters'),
    ],
    [
      'a JSON string',
      {
        method: 'PATCH',
        url: '/api/v1/settings',
        headers: { 'content-type': 'application/json' },
        payload: '"x"',
      },
      400,
      err('The request body must hold named parameters'),
    ],
    [
      'plain text',
      {
        method: 'PATCH',
        url: '/api/v1/settings',
        headers: { 'content-type': 'text/plain' },
        payload: 'enter_sends=true',
      },
      415,
      err('Unsupported Content-Type', 'UNSUPPORTED_MEDIA_TYPE'),
    ],
    [
      'XML',
      {
        method: 'PATCH',
        url: '/api/v1/settings',
        headers: { 'content-type': 'application/xml' },
        payload: '<a/>',
      },
      415,
      err('Unsupported Content-Type', 'UNSUPPORTED_MEDIA_TYPE'),
    ],
    [
      'multipart without a boundary',
      {
        method: 'PATCH',
        url: '/api/v1/settings',
        headers: { 'content-type': 'multipart/form-data' },
        payload: 'x',
      },
      400,
      err('Malformed multipart body'),
    ],
    [
      'truncated multipart',
      {
        method: 'PATCH',
        url: '/api/v1/settings',
        headers: { 'content-type': 'multipart/form-data; boundary=XX' },
        payload: '--XX\r\nContent-Disposition: form-data; name="enter_sends"\r\n\r\ntr',
      },
      400,
      err('Malformed multipart body'),
    ],
    [
      'an oversized body',
      {
        method: 'PATCH',
        url: '/api/v1/settings',
        headers: FORM,
        payload: `full_name=${'x'.repeat(1100000)}`,
      },
      413,
      err('Request body too large', 'REQUEST_TOO_LARGE'),
    ],
    [
      'bad percent-encoding in the path',
      { method: 'GET', url: '/api/v1/users/%E0%A4%A' },
      400,
      err('Malformed URL'),
    ],
  ];
  for (const [name, request, status, body] of cases) {
    test(`${name}: ${status} with a JSON error`, async () => {
      const res = await raw(request);
      assert.equal(res.statusCode, status, res.body);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.deepEqual(JSON.parse(res.body), body);
    });
  }

  test('bad percent-encoding in values is decoded leniently, never a crash', async () => {
    const query = await raw({ method: 'GET', url: '/api/v1/users/me?x=%E0%A4%A&y=%ZZ' });
    assert.equal(query.statusCode, 200);
    assert.deepEqual(JSON.parse(query.body).ignored_parameters_unsupported, ['x', 'y']);
    const body = await raw({
      method: 'PATCH',
      url: '/api/v1/settings',
      headers: FORM,
      payload: 'timezone=%ZZ%E0',
    });
    assert.deepEqual(JSON.parse(body.body), err('timezone is not a recognized time zone'));
  });
});

describe('unknown routes and wrong methods', () => {
  test('unknown paths are JSON 404s', async () => {
    for (const url of ['/api/v1/nope', '/api/v1/users/1/nope', '/nope', '/api/v2/users']) {
      const res = await raw({ method: 'GET', url });
      assert.deepEqual([res.statusCode, JSON.parse(res.body)], [404, err('Not Found')], url);
    }
  });

  test('a wrong method is a JSON 405 with Allow', async () => {
    const cases: Array<[string, string, string[]]> = [
      ['PUT', '/api/v1/users', ['GET', 'POST']],
      // PATCH /users/{user_id} matches the path too (and then refuses "me" as an id).
      ['POST', '/api/v1/users/me', ['GET', 'PATCH', 'DELETE']],
      ['GET', '/api/v1/settings', ['PATCH']],
      ['DELETE', '/api/v1/realm', ['PATCH']],
      ['GET', `/api/v1/users/${t.fx.member.id}/reactivate`, ['POST']],
      ['OPTIONS', '/api/v1/users', ['GET', 'POST']],
    ];
    for (const [method, url, allowed] of cases) {
      const res = await raw({ method, url });
      assert.equal(res.statusCode, 405, `${method} ${url}`);
      assert.equal(res.headers.allow, allowed.join(', '));
      assert.deepEqual(
        JSON.parse(res.body),
        err('Method Not Allowed', 'BAD_REQUEST', { allowed_methods: allowed }),
      );
    }
  });

  test('HEAD is answered for GET routes without a body', async () => {
    const res = await raw({ method: 'HEAD', url: '/api/v1/users/me' });
    assert.deepEqual([res.statusCode, res.body], [200, '']);
    const none = await raw({ method: 'HEAD', url: '/api/v1/realm' });
    assert.equal(none.statusCode, 405);
    assert.equal(none.headers.allow, 'PATCH');
  });

  test('a trailing slash reaches the same route', async () => {
    const res = await raw({ method: 'GET', url: '/api/v1/users/me/' });
    assert.equal(res.statusCode, 200);
  });
});

describe('hostile values never cause a server error', () => {
  const VALUES = HOSTILE_VALUES;
  const routes = (): Array<[string, string, string[]]> => [
    ['GET', '/users', ['client_gravatar', 'include_custom_profile_fields', 'user_ids']],
    ['GET', `/users/${t.fx.member.id}`, ['client_gravatar', 'include_custom_profile_fields']],
    ['POST', '/users', ['email', 'password', 'full_name']],
    ['PATCH', `/users/${t.fx.member2.id}`, ['full_name', 'role']],
    ['DELETE', `/users/${t.fx.guest.id}`, ['deactivation_notification_comment']],
    [
      'PATCH',
      '/settings',
      [
        'full_name',
        'email',
        'timezone',
        'default_language',
        'email_address_visibility',
        'web_font_size_px',
      ],
    ],
    [
      'PATCH',
      '/realm',
      [
        'name',
        'description',
        'message_content_edit_limit_seconds',
        'moderation_request_channel_id',
        'can_create_groups',
        'can_access_all_users_group',
        'empty_topic_display_name',
      ],
    ],
  ];
  test('each value for each parameter of each route', async () => {
    const owner = t.as(t.fx.owner);
    for (const [method, path, params] of routes()) {
      for (const param of params) {
        for (const value of VALUES) {
          const res = await owner.request(method, path, { [param]: value });
          assert.ok(
            res.status < 500,
            `${method} ${path} ${param}=${JSON.stringify(value)}: ${res.text}`,
          );
          assert.ok(['success', 'error'].includes(res.body.result as string));
          assert.equal(typeof res.body.msg, 'string');
          if (res.body.result === 'error') assert.equal(typeof res.body.code, 'string');
        }
      }
    }
  });

  test('hostile path segments', async () => {
    for (const segment of HOSTILE_SEGMENTS) {
      for (const method of ['GET', 'PATCH', 'DELETE']) {
        const res = await raw({ method, url: `/api/v1/users/${segment}` });
        assert.ok(res.statusCode < 500, `${method} ${segment}: ${res.body}`);
        assert.ok(['success', 'error'].includes(JSON.parse(res.body).result));
      }
    }
  });

  test('hostile headers', async () => {
    for (const authorization of [
      'Basic',
      'Basic !!!',
      `Basic ${'A'.repeat(10000)}`,
      'Basic Og==',
      '\u00ff',
    ]) {
      const res = await t.app.inject({
        method: 'GET',
        url: '/api/v1/users/me',
        headers: { host: 'parley.test', authorization },
      });
      assert.equal(res.statusCode, 401, authorization.slice(0, 20));
    }
    for (const host of ['', 'evil.example', 'a.b.c.parley.test', 'parley.test:99999']) {
      const res = await t.app.inject({
        method: 'GET',
        url: '/api/v1/users/me',
        headers: { host, authorization: basicAuth(t.fx.member.email, t.fx.member.api_key) },
      });
      assert.ok(res.statusCode < 500, host);
    }
  });
});
