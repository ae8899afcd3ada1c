// Custom profile fields: GET/POST/PATCH/DELETE /realm/profile_fields(/{id}), reordering,
// PATCH/DELETE /users/me/profile_data, profile_data in user objects, the
// custom_profile_fields and realm_user events, and the register section.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { as, assertUnauthorized, error, everyone, EVERY_CALLER } from '../support/bots.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { registerQueue } from '../support/events.ts';
import { captureNotices, type NoticeLog } from '../support/notices.ts';
import type { ApiResponse } from '../support/client.ts';

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
const create = (params: Obj, who: FixtureUser = t.fx.admin) =>
  t.as(who).post('/realm/profile_fields', params);
const list = async (): Promise<Obj[]> =>
  (await t.as(t.fx.member).get('/realm/profile_fields')).body.custom_fields as Obj[];
const fieldsEvent = (fields: Obj[]) => ({
  event: { type: 'custom_profile_fields', fields },
  users: everyone(t),
});
const expectError = (res: ApiResponse, msg: string, status = 400, code = 'BAD_REQUEST') =>
  assert.deepEqual({ status: res.status, body: res.body }, { status, body: error(msg, code) });

const field = (id: number, name: string, type: number, extra: Obj = {}): Obj => ({
  id,
  name,
  type,
  hint: '',
  field_data: '',
  order: id,
  required: false,
  editable_by_user: true,
  ...extra,
});

async function newField(params: Obj): Promise<number> {
  const res = await create(params);
  assert.equal(res.status, 200, res.text);
  return res.body.id as number;
}

const choices = { a: { text: 'Vim', order: '1' }, b: { text: 'Emacs', order: '2' } };

describe('custom profile fields', () => {
  test('create each type; the list; the event with the whole list to everyone', async () => {
    assert.deepEqual((await t.as(t.fx.guest).get('/realm/profile_fields')).body, {
      ...ok,
      custom_fields: [],
    });
    const res = await create({
      name: ' Phone ',
      hint: 'Your number',
      field_type: 1,
      required: true,
      display_in_profile_summary: true,
    });
    const phone = res.body.id as number;
    assert.deepEqual(res.body, { ...ok, id: phone });
    const first = field(phone, 'Phone', 1, {
      hint: 'Your number',
      required: true,
      display_in_profile_summary: true,
    });
    assert.deepEqual(await log.take(), [fieldsEvent([first])]);
    const bio = await newField({ name: 'Bio', field_type: 2, editable_by_user: false });
    const editor = await newField({ name: 'Editor', field_type: 3, field_data: choices });
    const birthday = await newField({ name: 'Birthday', field_type: 4 });
    const site = await newField({ name: 'Site', field_type: 5 });
    const mentor = await newField({ name: 'Mentor', field_type: 6 });
    const gh = await newField({ field_type: 7, field_data: { subtype: 'github' } });
    const blog = await newField({
      name: 'Blog',
      field_type: 7,
      field_data: { subtype: 'custom', url_pattern: 'https://blog.example/%(username)s' },
    });
    const pronouns = await newField({ name: 'Pronouns', field_type: 8 });
    const all = [
      first,
      field(bio, 'Bio', 2, { editable_by_user: false }),
      field(editor, 'Editor', 3, { field_data: JSON.stringify(choices) }),
      field(birthday, 'Birthday', 4),
      field(site, 'Site', 5),
      field(mentor, 'Mentor', 6),
      field(gh, 'GitHub', 7, {
        hint: 'Enter your GitHub username',
        field_data: '{"subtype":"github"}',
      }),
      field(blog, 'Blog', 7, {
        field_data: '{"subtype":"custom","url_pattern":"https://blog.example/%(username)s"}',
      }),
      field(pronouns, 'Pronouns', 8),
    ];
    assert.deepEqual(await list(), all);
    assert.equal((await log.take()).length, 8);
  });

  test('creation errors', async () => {
    await newField({ name: 'Phone', field_type: 1, display_in_profile_summary: true });
    await newField({ name: 'Pronouns', field_type: 8, display_in_profile_summary: true });
    await log.take();
    const cases: Array<[Obj, string]> = [
      [{ name: '  ', field_type: 1 }, 'Label cannot be blank.'],
      [{ field_type: 1 }, 'Label cannot be blank.'],
      [{ name: 'Phone', field_type: 1 }, 'A field with that label already exists.'],
      [{ name: 'X', field_type: 9 }, 'Invalid field type.'],
      [{ name: 'X', field_type: 0 }, 'Invalid field type.'],
      [{ name: 'X', field_type: 3 }, 'Field must have at least one choice.'],
      [{ name: 'X', field_type: 3, field_data: {} }, 'Field must have at least one choice.'],
      [{ name: 'X', field_type: 3, field_data: [] }, 'field_data is not a dict'],
      [{ name: 'X', field_type: 3, field_data: { a: 'b' } }, 'field_data["a"] is not a dict'],
      [
        { name: 'X', field_type: 3, field_data: { a: { text: 'b' } } },
        'field_data["a"] key is missing: order',
      ],
      [
        { name: 'X', field_type: 3, field_data: { a: { text: 'b', order: 1 } } },
        'field_data["a"]["order"] is not a string',
      ],
      [
        {
          name: 'X',
          field_type: 3,
          field_data: { a: { text: 'b', order: '1' }, c: { text: 'b', order: '2' } },
        },
        'Field must not have duplicate choices.',
      ],
      [
        { name: 'X', field_type: 7, field_data: { subtype: 'myspace' } },
        'Invalid external account type',
      ],
      [
        { name: 'X', field_type: 7, field_data: { subtype: 'constructor' } },
        'Invalid external account type',
      ],
      [
        { name: 'X', field_type: 7, field_data: { subtype: 'custom' } },
        'Custom external account must define URL pattern',
      ],
      [
        { name: 'X', field_type: 7, field_data: { subtype: 'custom', url_pattern: 'https://a/' } },
        "URL pattern must contain '%(username)s'.",
      ],
      [{ name: 'X', field_type: 7, field_data: {} }, 'field_data["subtype"] is not a string'],
      [
        { name: 'X', field_type: 1, display_in_profile_summary: true },
        'Only 2 custom profile fields can be displayed in the profile summary.',
      ],
      [
        { name: 'X', field_type: 2, display_in_profile_summary: true },
        'Field type not supported for display in profile summary.',
      ],
      [{ name: 'x'.repeat(41), field_type: 1 }, 'name is too long (limit: 40 characters)'],
      [{ name: 'X', hint: 'x'.repeat(81) }, 'hint is too long (limit: 80 characters)'],
      [{ name: 'X', field_type: 'text' }, 'field_type is not an integer'],
    ];
    for (const [params, msg] of cases) expectError(await create(params), msg);
    assert.equal((await list()).length, 2);
    assert.deepEqual(await log.take(), []);
  });

  test('update and delete', async () => {
    const phone = await newField({ name: 'Phone', field_type: 1 });
    const editor = await newField({ name: 'Editor', field_type: 3, field_data: choices });
    const gh = await newField({ field_type: 7, field_data: { subtype: 'github' } });
    await log.take();
    const patch = (id: number, params: Obj) =>
      t.as(t.fx.admin).patch(`/realm/profile_fields/${id}`, params);
    assert.deepEqual(
      (await patch(phone, { name: 'Mobile', hint: 'Call me', required: true })).body,
      ok,
    );
    const phoneNow = field(phone, 'Mobile', 1, { hint: 'Call me', required: true });
    const editorNow = field(editor, 'Editor', 3, { field_data: JSON.stringify(choices) });
    const ghNow = field(gh, 'GitHub', 7, {
      hint: 'Enter your GitHub username',
      field_data: '{"subtype":"github"}',
    });
    assert.deepEqual(await log.take(), [fieldsEvent([phoneNow, editorNow, ghNow])]);
    const fewer = { a: { text: 'Vim', order: '1' } };
    assert.deepEqual(
      (await patch(editor, { field_data: fewer, editable_by_user: false })).body,
      ok,
    );
    assert.deepEqual((await patch(gh, { required: true })).body, ok);
    await log.take();
    expectError(await patch(999, { name: 'x' }), 'Field id 999 not found.');
    expectError(await patch(phone, { name: '' }), 'Label cannot be blank.');
    expectError(await patch(phone, { name: 'Editor' }), 'A field with that label already exists.');
    expectError(await patch(editor, { field_data: {} }), 'Field must have at least one choice.');
    expectError(await patch(gh, { name: 'Hub' }), 'Default custom field cannot be updated.');
    expectError(await patch(gh, { hint: 'x' }), 'Default custom field cannot be updated.');
    assert.deepEqual(await log.take(), []);

    // Deleting a field drops users' values of it.
    await t.as(t.fx.member).patch('/users/me/profile_data', { data: [{ id: phone, value: '1' }] });
    await log.take();
    expectError(
      await t.as(t.fx.admin).delete('/realm/profile_fields/999'),
      'Field id 999 not found.',
    );
    assert.deepEqual((await t.as(t.fx.admin).delete(`/realm/profile_fields/${phone}`)).body, ok);
    const left = [
      field(editor, 'Editor', 3, { field_data: JSON.stringify(fewer), editable_by_user: false }),
      { ...ghNow, required: true },
    ];
    assert.deepEqual(await log.take(), [fieldsEvent(left)]);
    assert.deepEqual(await list(), left);
    const me = await t
      .as(t.fx.member)
      .get(`/users/${t.fx.member.id}`, { include_custom_profile_fields: true });
    assert.deepEqual((me.body.user as Obj).profile_data, {});
  });

  test('reorder: every field id once', async () => {
    const a = await newField({ name: 'A' });
    const b = await newField({ name: 'B' });
    const c = await newField({ name: 'C' });
    await log.take();
    const reorder = (order: unknown, who = t.fx.admin) =>
      t.as(who).patch('/realm/profile_fields', { order });
    assert.deepEqual((await reorder([c, a, b])).body, ok);
    const expected = [
      field(c, 'C', 1, { order: 0 }),
      field(a, 'A', 1, { order: 1 }),
      field(b, 'B', 1, { order: 2 }),
    ];
    assert.deepEqual(await list(), expected);
    assert.deepEqual(await log.take(), [fieldsEvent(expected)]);
    for (const bad of [
      [c, a],
      [c, a, b, 999],
      [c, a, a],
      [c, a, 999],
    ]) {
      expectError(await reorder(bad), 'Invalid order mapping.');
    }
    expectError(await reorder('x'), 'order is not valid JSON');
    const missing = await t.as(t.fx.admin).patch('/realm/profile_fields', {});
    assert.deepEqual(missing.body, {
      ...error("Missing 'order' argument", 'REQUEST_VARIABLE_MISSING'),
      var_name: 'order',
    });
    assert.deepEqual(await log.take(), []);
  });

  test('profile data: values of each type, in user objects, and realm_user events', async () => {
    const phone = await newField({ name: 'Phone', field_type: 1 });
    const bio = await newField({ name: 'Bio', field_type: 2 });
    const editor = await newField({ name: 'Editor', field_type: 3, field_data: choices });
    const birthday = await newField({ name: 'Birthday', field_type: 4 });
    const site = await newField({ name: 'Site', field_type: 5 });
    const mentor = await newField({ name: 'Mentor', field_type: 6 });
    const gh = await newField({ field_type: 7, field_data: { subtype: 'github' } });
    const pronouns = await newField({ name: 'Pronouns', field_type: 8 });
    await log.take();
    const data = [
      { id: phone, value: '555 *1234*' },
      { id: bio, value: 'I like **tea**' },
      { id: editor, value: 'b' },
      { id: birthday, value: '2000-02-29' },
      { id: site, value: 'https://example.com/me' },
      { id: mentor, value: [t.fx.owner.id, t.fx.admin.id] },
      { id: gh, value: 'octocat' },
      { id: pronouns, value: 'they/them' },
    ];
    const res = await t.as(t.fx.member).patch('/users/me/profile_data', { data });
    assert.deepEqual(res.body, ok);
    const profile: Obj = {
      [phone]: { value: '555 *1234*', rendered_value: '<p>555 <em>1234</em></p>' },
      [bio]: { value: 'I like **tea**', rendered_value: '<p>I like <strong>tea</strong></p>' },
      [editor]: { value: 'b' },
      [birthday]: { value: '2000-02-29' },
      [site]: { value: 'https://example.com/me' },
      [mentor]: { value: JSON.stringify([t.fx.owner.id, t.fx.admin.id]) },
      [gh]: { value: 'octocat' },
      [pronouns]: { value: 'they/them' },
    };
    const events = await log.take();
    assert.deepEqual(
      events,
      data.map((d) => ({
        event: {
          type: 'realm_user',
          op: 'update',
          person: {
            user_id: t.fx.member.id,
            custom_profile_field: { id: d.id, ...(profile[d.id] as Obj) },
          },
        },
        users: everyone(t),
      })),
    );
    const user = (
      await t
        .as(t.fx.guest)
        .get(`/users/${t.fx.member.id}`, { include_custom_profile_fields: true })
    ).body.user as Obj;
    assert.deepEqual(user.profile_data, profile);
    const all = (await t.as(t.fx.owner).get('/users', { include_custom_profile_fields: true })).body
      .members as Obj[];
    assert.deepEqual(all.find((u) => u.user_id === t.fx.member.id)!.profile_data, profile);
    assert.deepEqual(all.find((u) => u.user_id === t.fx.member2.id)!.profile_data, {});
    assert.ok(!('profile_data' in all.find((u) => u.user_id === t.fx.bot.id)!));
    // Without the parameter, GET /users leaves profile data out.
    const plain = (await t.as(t.fx.owner).get('/users', { include_custom_profile_fields: false }))
      .body.members as Obj[];
    assert.ok(!('profile_data' in plain[0]));

    // Unchanged values send nothing; an empty value clears.
    await t.as(t.fx.member).patch('/users/me/profile_data', { data: [data[0]] });
    assert.deepEqual(await log.take(), []);
    await t.as(t.fx.member).patch('/users/me/profile_data', {
      data: [
        { id: phone, value: '' },
        { id: mentor, value: [] },
      ],
    });
    const cleared = (id: number) => ({
      event: {
        type: 'realm_user',
        op: 'update',
        person: { user_id: t.fx.member.id, custom_profile_field: { id, value: null } },
      },
      users: everyone(t),
    });
    assert.deepEqual(await log.take(), [cleared(phone), cleared(mentor)]);
    assert.deepEqual(
      (await t.as(t.fx.member).delete('/users/me/profile_data', { data: [bio, phone] })).body,
      ok,
    );
    assert.deepEqual(await log.take(), [cleared(bio)]);
    const after = (
      await t
        .as(t.fx.member)
        .get(`/users/${t.fx.member.id}`, { include_custom_profile_fields: true })
    ).body.user as Obj;
    assert.deepEqual(
      Object.keys(after.profile_data as Obj).sort(),
      [editor, birthday, site, gh, pronouns].map(String).sort(),
    );
  });

  test('profile data errors', async () => {
    const phone = await newField({ name: 'Phone', field_type: 1 });
    const bio = await newField({ name: 'Bio', field_type: 2 });
    const editor = await newField({ name: 'Editor', field_type: 3, field_data: choices });
    const birthday = await newField({ name: 'Birthday', field_type: 4 });
    const site = await newField({ name: 'Site', field_type: 5 });
    const mentor = await newField({ name: 'Mentor', field_type: 6 });
    const locked = await newField({ name: 'Badge', field_type: 1, editable_by_user: false });
    await log.take();
    const set = (id: number, value: unknown, who = t.fx.member) =>
      t.as(who).patch('/users/me/profile_data', { data: [{ id, value }] });
    const cases: Array<[Promise<ApiResponse>, string]> = [
      [set(999, 'x'), 'Field id 999 not found.'],
      [set(phone, 'x'.repeat(51)), 'Phone is too long (limit: 50 characters)'],
      [set(bio, 'x'.repeat(501)), 'Bio is too long (limit: 500 characters)'],
      [set(phone, 5), 'Phone is not a string'],
      [set(editor, 'z'), "'z' is not a valid choice for 'Editor'."],
      [set(birthday, '2001-02-29'), 'Birthday is not a date'],
      [set(birthday, 'yesterday'), 'Birthday is not a date'],
      [set(site, 'not a url'), 'Site is not a URL'],
      [set(mentor, 'x'), 'Mentor is not a list'],
      [set(mentor, ['x']), 'Mentor[0] is not an integer'],
      [set(mentor, [999999]), 'Invalid user ID: 999999'],
      [set(mentor, [t.fx.otherOwner.id]), `Invalid user ID: ${t.fx.otherOwner.id}`],
      [
        set(locked, 'gold'),
        'You are not allowed to change this field. Contact an administrator to update it.',
      ],
      [
        t.as(t.fx.member).delete('/users/me/profile_data', { data: [locked] }),
        'You are not allowed to change this field. Contact an administrator to update it.',
      ],
      [
        t.as(t.fx.member).delete('/users/me/profile_data', { data: [999] }),
        'Field id 999 not found.',
      ],
      [set(phone, '1', t.fx.bot), 'This endpoint does not accept bot requests.'],
      [
        t.as(t.fx.bot).delete('/users/me/profile_data', { data: [phone] }),
        'This endpoint does not accept bot requests.',
      ],
      [
        t.as(t.fx.member).patch('/users/me/profile_data', { data: [{ id: phone }] }),
        'data[0]["value"] field is missing',
      ],
    ];
    for (const [res, msg] of cases) expectError(await res, msg);
    assert.deepEqual(await log.take(), []);
    // A field users may not edit is still the administrators' to fill in.
    assert.deepEqual((await set(locked, 'gold', t.fx.admin)).body, ok);
    assert.deepEqual((await log.take()).length, 1);
  });

  test('PATCH /users/{id}: administrators set and clear anyone’s values, all or nothing', async () => {
    const phone = await newField({ name: 'Phone', field_type: 1 });
    const badge = await newField({ name: 'Badge', field_type: 1, editable_by_user: false });
    await log.take();
    const patch = (who: FixtureUser, target: FixtureUser, data: unknown) =>
      t.as(who).patch(`/users/${target.id}`, { profile_data: data });
    assert.deepEqual(
      (
        await patch(t.fx.admin, t.fx.member, [
          { id: phone, value: '+1 555' },
          { id: badge, value: 'gold' },
        ])
      ).body,
      ok,
    );
    // Short text is Markdown: a value comes rendered too.
    const update = (id: number, value: string | null) => ({
      event: {
        type: 'realm_user',
        op: 'update',
        person: {
          user_id: t.fx.member.id,
          custom_profile_field:
            value === null ? { id, value } : { id, value, rendered_value: `<p>${value}</p>` },
        },
      },
      users: everyone(t),
    });
    assert.deepEqual(await log.take(), [update(phone, '+1 555'), update(badge, 'gold')]);
    const profileData = async () =>
      (
        (
          await t
            .as(t.fx.member2)
            .get(`/users/${t.fx.member.id}`, { include_custom_profile_fields: true })
        ).body.user as Obj
      ).profile_data;
    assert.deepEqual(await profileData(), {
      [phone]: { value: '+1 555', rendered_value: '<p>+1 555</p>' },
      [badge]: { value: 'gold', rendered_value: '<p>gold</p>' },
    });
    // An empty value clears; an unchanged one says nothing.
    assert.deepEqual(
      (
        await patch(t.fx.owner, t.fx.member, [
          { id: phone, value: '' },
          { id: badge, value: 'gold' },
        ])
      ).body,
      ok,
    );
    assert.deepEqual(await log.take(), [update(phone, null)]);
    // One bad item refuses the whole request.
    expectError(
      await patch(t.fx.admin, t.fx.member, [
        { id: phone, value: '+1 777' },
        { id: 999, value: 'x' },
      ]),
      'Field id 999 not found.',
    );
    expectError(
      await patch(t.fx.admin, t.fx.bot, [{ id: phone, value: '1' }]),
      'Bots have no custom profile fields',
    );
    expectError(
      await patch(t.fx.moderator, t.fx.member, [{ id: phone, value: '1' }]),
      'Insufficient permission',
    );
    expectError(
      await patch(t.fx.member, t.fx.member2, [{ id: phone, value: '1' }]),
      'Insufficient permission',
    );
    assert.deepEqual(await log.take(), []);
    assert.deepEqual(await profileData(), {
      [badge]: { value: 'gold', rendered_value: '<p>gold</p>' },
    });
  });

  test('the register section', async () => {
    const phone = await newField({ name: 'Phone', field_type: 1 });
    await t.as(t.fx.member).patch('/users/me/profile_data', { data: [{ id: phone, value: 'x' }] });
    const q = await registerQueue(t.as(t.fx.guest), {
      fetch_event_types: ['custom_profile_fields', 'realm_user'],
    });
    assert.deepEqual(q.custom_profile_fields, [field(phone, 'Phone', 1)]);
    assert.deepEqual(q.custom_profile_field_types, {
      SHORT_TEXT: { id: 1, name: 'Text (short)' },
      LONG_TEXT: { id: 2, name: 'Text (long)' },
      SELECT: { id: 3, name: 'List of options' },
      DATE: { id: 4, name: 'Date picker' },
      URL: { id: 5, name: 'Link' },
      USER: { id: 6, name: 'Users' },
      EXTERNAL_ACCOUNT: { id: 7, name: 'External account' },
      PRONOUNS: { id: 8, name: 'Pronouns' },
    });
    const people = q.realm_users as Obj[];
    assert.deepEqual(people.find((p) => p.user_id === t.fx.member.id)!.profile_data, {
      [phone]: { value: 'x', rendered_value: '<p>x</p>' },
    });
  });

  for (const who of EVERY_CALLER) {
    test(`${who}: reads fields; only administrators change them`, async () => {
      const client = as(t, who);
      const got = await client.get('/realm/profile_fields');
      const made = await client.post('/realm/profile_fields', { name: 'X', field_type: 1 });
      const existing = await newField({ name: 'Existing' });
      await log.take();
      const patched = await client.patch(`/realm/profile_fields/${existing}`, { hint: 'h' });
      const reordered = await client.patch('/realm/profile_fields', {
        order: made.body.id ? [existing, made.body.id] : [existing],
      });
      const deleted = await client.delete(`/realm/profile_fields/${existing}`);
      const responses = [made, patched, reordered, deleted];
      if (assertUnauthorized(who, got)) {
        for (const r of responses) assert.ok(assertUnauthorized(who, r));
        return;
      }
      assert.deepEqual(got.body, { ...ok, custom_fields: [] });
      if (who === 'owner' || who === 'admin') {
        for (const r of responses) assert.equal(r.status, 200, r.text);
        assert.equal((await log.take()).length, 3);
      } else {
        for (const r of responses) {
          expectError(r, 'Must be an organization administrator', 400, 'UNAUTHORIZED_PRINCIPAL');
        }
        assert.deepEqual(await log.take(), []);
      }
    });
  }
});
