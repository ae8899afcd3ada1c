// POST /realm/playgrounds and DELETE /realm/playgrounds/{id}: administrators only, the URL
// template rules, the realm_playgrounds event with the whole list, the register section.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { as, assertUnauthorized, error, everyone, EVERY_CALLER } from '../support/bots.ts';
import type { ApiResponse } from '../support/client.ts';
import { registerQueue } from '../support/events.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { captureNotices, type NoticeLog } from '../support/notices.ts';

let t: TestApp;
let log: NoticeLog;
beforeEach(async () => {
  t = await buildTestApp();
  log = captureNotices(t);
});
afterEach(async () => {
  await t.close();
});

type Obj = Record<string, unknown>;
const ok = { result: 'success', msg: '' };
const rust = {
  name: 'Rust playground',
  pygments_language: 'Rust',
  url_template: 'https://play.rust-lang.org/?edition=2021{&code}',
};
const add = (params: Obj, who: FixtureUser = t.fx.admin) =>
  t.as(who).post('/realm/playgrounds', params);
const event = (list: Obj[]) => ({
  event: { type: 'realm_playgrounds', realm_playgrounds: list },
  users: everyone(t),
});
const expectError = (res: ApiResponse, msg: string, status = 400, code = 'BAD_REQUEST') =>
  assert.deepEqual({ status: res.status, body: res.body }, { status, body: error(msg, code) });

describe('code playgrounds', () => {
  test('add and remove; the whole list to everyone; the register section', async () => {
    const first = await add(rust);
    const rustId = first.body.id as number;
    assert.deepEqual(first.body, { ...ok, id: rustId });
    assert.deepEqual(await log.take(), [event([{ id: rustId, ...rust }])]);
    const py = {
      name: 'Python',
      pygments_language: 'python3',
      url_template: 'https://python.example/run/{code}',
    };
    const pyId = (await add(py, t.fx.owner)).body.id as number;
    const both = [
      { id: rustId, ...rust },
      { id: pyId, ...py },
    ];
    assert.deepEqual(await log.take(), [event(both)]);
    const q = await registerQueue(t.as(t.fx.guest), { fetch_event_types: ['realm_playgrounds'] });
    assert.deepEqual(q.realm_playgrounds, both);
    assert.deepEqual((await t.as(t.fx.admin).delete(`/realm/playgrounds/${rustId}`)).body, ok);
    assert.deepEqual(await log.take(), [event([{ id: pyId, ...py }])]);
    expectError(
      await t.as(t.fx.admin).delete(`/realm/playgrounds/${rustId}`),
      'Invalid playground',
    );
    assert.deepEqual(await log.take(), []);
  });

  test('errors', async () => {
    await add(rust);
    await log.take();
    const cases: Array<[Obj, string]> = [
      [
        { ...rust, url_template: 'https://x.example/?c=code' },
        '"code" should be the only variable present in the URL template',
      ],
      [
        { ...rust, url_template: 'https://x.example/{code}{lang}' },
        '"code" should be the only variable present in the URL template',
      ],
      [
        { ...rust, url_template: 'https://x.example/{code,code}' },
        '"code" should be the only variable present in the URL template',
      ],
      [
        { ...rust, url_template: 'https://x.example/{input}' },
        '"code" should be the only variable present in the URL template',
      ],
      [{ ...rust, url_template: 'https://x.example/{code' }, 'Invalid URL template.'],
      [{ ...rust, url_template: 'https://x.example/{}' }, 'Invalid URL template.'],
      [{ ...rust, url_template: 'https://x example/{code}' }, 'Invalid URL template.'],
      [{ ...rust, url_template: 'https://x.example/{co de}' }, 'Invalid URL template.'],
      [{ ...rust, pygments_language: 'rust!' }, 'Invalid characters in pygments language'],
      [rust, 'Realm playground with this Realm, Pygments language and Name already exists.'],
      [{ ...rust, name: '' }, 'name cannot be blank'],
      [
        { ...rust, pygments_language: 'x'.repeat(41) },
        'pygments_language is too long (limit: 40 characters)',
      ],
    ];
    for (const [params, msg] of cases) expectError(await add(params), msg);
    const missing = await add({ name: 'x', pygments_language: 'x' });
    assert.deepEqual(missing.body, {
      ...error("Missing 'url_template' argument", 'REQUEST_VARIABLE_MISSING'),
      var_name: 'url_template',
    });
    // Operators and modifiers are valid RFC 6570.
    assert.equal(
      (await add({ ...rust, name: 'r2', url_template: 'https://x.example{/code*}' })).status,
      200,
    );
    assert.equal(
      (await add({ ...rust, name: 'r3', url_template: 'https://x.example/%20{+code:100}' })).status,
      200,
    );
    expectError(await t.as(t.fx.admin).delete('/realm/playgrounds/999'), 'Invalid playground');
  });

  for (const who of EVERY_CALLER) {
    test(`${who}: only administrators manage playgrounds`, async () => {
      const existing = (await add(rust)).body.id as number;
      await log.take();
      const client = as(t, who);
      const added = await client.post('/realm/playgrounds', { ...rust, name: 'Mine' });
      const removed = await client.delete(`/realm/playgrounds/${existing}`);
      if (assertUnauthorized(who, added)) {
        assert.ok(assertUnauthorized(who, removed));
        assert.deepEqual(await log.take(), []);
        return;
      }
      if (who === 'owner' || who === 'admin') {
        assert.deepEqual(added.body, { ...ok, id: added.body.id });
        assert.deepEqual(removed.body, ok);
        assert.equal((await log.take()).length, 2);
      } else {
        for (const r of [added, removed]) {
          expectError(r, 'Must be an organization administrator', 400, 'UNAUTHORIZED_PRINCIPAL');
        }
        assert.deepEqual(await log.take(), []);
      }
    });
  }
});
