// POST and DELETE /users/me/android_gcm_reg_id and /users/me/apns_device_token: tokens are
// stored per user (no push service is configured, so nothing is ever pushed).
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { as, assertUnauthorized, error, EVERY_CALLER } from '../support/bots.ts';
import type { ApiResponse } from '../support/client.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { captureNotices, type NoticeLog } from '../support/notices.ts';
import { T0, useClock } from '../support/messages.ts';

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

const ok = { result: 'success', msg: '' };
const APNS = 'c0ffee00'.repeat(8);
const expectError = (res: ApiResponse, msg: string, code = 'BAD_REQUEST') =>
  assert.deepEqual({ status: res.status, body: res.body }, { status: 400, body: error(msg, code) });

async function stored(who: FixtureUser) {
  return t.ctx.db
    .selectFrom('push_device_tokens')
    .select(['kind', 'token', 'ios_app_id', 'date_created'])
    .where('user_id', '=', who.id)
    .orderBy('kind')
    .orderBy('token')
    .execute();
}

describe('push registration tokens', () => {
  test('register and remove Android and iOS tokens, per user', async () => {
    const member = t.as(t.fx.member);
    assert.deepEqual(
      (await member.post('/users/me/android_gcm_reg_id', { token: 'abc' })).body,
      ok,
    );
    // Registering again is harmless.
    assert.deepEqual(
      (await member.post('/users/me/android_gcm_reg_id', { token: 'abc' })).body,
      ok,
    );
    assert.deepEqual(
      (await member.post('/users/me/apns_device_token', { token: APNS, appid: 'org.parley.ios' }))
        .body,
      ok,
    );
    await t.as(t.fx.member2).post('/users/me/android_gcm_reg_id', { token: 'other' });
    assert.deepEqual(await stored(t.fx.member), [
      { kind: 'apns', token: APNS, ios_app_id: 'org.parley.ios', date_created: T0 },
      { kind: 'gcm', token: 'abc', ios_app_id: null, date_created: T0 },
    ]);
    // Another user's token is not the caller's to remove.
    expectError(
      await member.delete('/users/me/android_gcm_reg_id', { token: 'other' }),
      'Device not recognized',
      'INVALID_PUSH_DEVICE_TOKEN',
    );
    // Kinds are separate.
    expectError(
      await member.delete('/users/me/apns_device_token', { token: 'abc' }),
      'Invalid APNS token',
    );
    assert.deepEqual(
      (await member.delete('/users/me/android_gcm_reg_id', { token: 'abc' })).body,
      ok,
    );
    expectError(
      await member.delete('/users/me/android_gcm_reg_id', { token: 'abc' }),
      'Device not recognized',
      'INVALID_PUSH_DEVICE_TOKEN',
    );
    assert.deepEqual(
      (await member.delete('/users/me/apns_device_token', { token: APNS })).body,
      ok,
    );
    expectError(
      await member.delete('/users/me/apns_device_token', { token: APNS }),
      'Device not recognized',
      'INVALID_PUSH_DEVICE_TOKEN',
    );
    assert.deepEqual(await stored(t.fx.member), []);
    assert.equal((await stored(t.fx.member2)).length, 1);
    assert.deepEqual(await log.take(), []);
    // No push service: the server says so.
    const settings = await t.as(null).get('/server_settings');
    assert.equal(settings.body.push_notifications_enabled, false);
  });

  test('errors', async () => {
    const member = t.as(t.fx.member);
    const long = 'a'.repeat(4097);
    const cases: Array<[Promise<ApiResponse>, string]> = [
      [member.post('/users/me/android_gcm_reg_id', { token: '' }), 'Empty or invalid length token'],
      [
        member.post('/users/me/android_gcm_reg_id', { token: long }),
        'Empty or invalid length token',
      ],
      [
        member.delete('/users/me/android_gcm_reg_id', { token: '' }),
        'Empty or invalid length token',
      ],
      [
        member.post('/users/me/apns_device_token', { token: '', appid: 'a' }),
        'Empty or invalid length token',
      ],
      [
        member.post('/users/me/apns_device_token', { token: 'xyz', appid: 'a' }),
        'Invalid APNS token',
      ],
      [
        member.post('/users/me/apns_device_token', { token: APNS, appid: 'bad app' }),
        'Invalid app ID',
      ],
      [
        member.delete('/users/me/apns_device_token', { token: long }),
        'Empty or invalid length token',
      ],
    ];
    for (const [res, msg] of cases) expectError(await res, msg);
    assert.equal(
      (await member.post('/users/me/android_gcm_reg_id', { token: 'a'.repeat(4096) })).status,
      200,
    );
    for (const [path, params, name] of [
      ['/users/me/android_gcm_reg_id', {}, 'token'],
      ['/users/me/apns_device_token', { token: APNS }, 'appid'],
    ] as const) {
      const res = await member.post(path, params);
      assert.deepEqual(res.body, {
        ...error(`Missing '${name}' argument`, 'REQUEST_VARIABLE_MISSING'),
        var_name: name,
      });
    }
  });

  for (const who of EVERY_CALLER) {
    test(`${who}: human users register tokens`, async () => {
      const client = as(t, who);
      const calls = [
        await client.post('/users/me/android_gcm_reg_id', { token: 'tok' }),
        await client.post('/users/me/apns_device_token', { token: APNS, appid: 'org.x' }),
        await client.delete('/users/me/android_gcm_reg_id', { token: 'tok' }),
        await client.delete('/users/me/apns_device_token', { token: APNS }),
      ];
      if (assertUnauthorized(who, calls[0])) {
        for (const r of calls) assert.ok(assertUnauthorized(who, r));
        return;
      }
      if (who === 'bot') {
        for (const r of calls) expectError(r, 'This endpoint does not accept bot requests.');
        return;
      }
      for (const r of calls) assert.deepEqual(r.body, ok);
    });
  }
});
