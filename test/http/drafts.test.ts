// GET, POST, PATCH and DELETE /drafts: the Draft shape and its rules, the drafts events to
// the user's own clients, the register section, and enable_drafts_synchronization.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { as, assertUnauthorized, EVERY_CALLER } from '../support/bots.ts';
import { SUCCESS } from '../support/client.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { registerQueue } from '../support/events.ts';
import { captureNotices, type NoticeLog } from '../support/notices.ts';
import { assertError, T0, useClock } from '../support/messages.ts';

let t: TestApp;
let log: NoticeLog;
let setClock: (seconds: number) => void;
beforeEach(async () => {
  t = await buildTestApp();
  setClock = useClock(t);
  log = captureNotices(t);
});
afterEach(async () => {
  await t.close();
});

type Draft = Record<string, unknown>;
const create = (who: FixtureUser, drafts: unknown) => t.as(who).post('/drafts', { drafts });
const edit = (who: FixtureUser, id: number, draft: unknown) =>
  t.as(who).patch(`/drafts/${id}`, { draft });
const remove = (who: FixtureUser, id: number) => t.as(who).delete(`/drafts/${id}`);
const list = async (who: FixtureUser) => {
  const res = await t.as(who).get('/drafts');
  assert.equal(res.status, 200, res.text);
  return res.body;
};
const badRequest = (res: { status: number; body: unknown }, msg: string) =>
  assertError(res as never, 400, 'BAD_REQUEST', msg);
const assertMissing = (res: { status: number; body: unknown }, name: string) =>
  assert.deepEqual(
    { status: res.status, body: res.body },
    {
      status: 400,
      body: {
        result: 'error',
        msg: `Missing '${name}' argument`,
        code: 'REQUEST_VARIABLE_MISSING',
        var_name: name,
      },
    },
  );

const channelDraft = (overrides: Draft = {}): Draft => ({
  type: 'stream',
  to: [t.fx.channels.general.id],
  topic: 'plans',
  content: 'Let us meet',
  ...overrides,
});

async function createOne(who: FixtureUser, draft: Draft): Promise<number> {
  const res = await create(who, [draft]);
  assert.equal(res.status, 200, res.text);
  return (res.body.ids as number[])[0];
}

describe('drafts', () => {
  test('create, list, edit and delete, each told to the user only', async () => {
    const c = t.fx.channels;
    const res = await create(t.fx.member, [
      channelDraft(),
      { type: 'private', to: [t.fx.member2.id], topic: '', content: 'psst', timestamp: 1000.7 },
    ]);
    assert.equal(res.status, 200, res.text);
    const [a, b] = res.body.ids as number[];
    assert.deepEqual(res.body, { ...SUCCESS, ids: [a, b] });
    assert.ok(b > a);
    const first = {
      id: a,
      type: 'stream',
      to: [c.general.id],
      topic: 'plans',
      content: 'Let us meet',
      timestamp: T0,
    };
    const second = {
      id: b,
      type: 'private',
      to: [t.fx.member2.id],
      topic: '',
      content: 'psst',
      timestamp: 1000,
    };
    assert.deepEqual(await log.take(), [
      { event: { type: 'drafts', op: 'add', drafts: [first, second] }, users: [t.fx.member.id] },
    ]);
    // Oldest edit first.
    assert.deepEqual(await list(t.fx.member), { ...SUCCESS, count: 2, drafts: [second, first] });
    // Others see none of them.
    assert.deepEqual(await list(t.fx.member2), { ...SUCCESS, count: 0, drafts: [] });

    setClock(T0 + 60);
    const changed = channelDraft({ to: [c.design.id], topic: 'later', content: 'Or not' });
    assert.deepEqual((await edit(t.fx.member, a, changed)).body, SUCCESS);
    const edited = {
      ...first,
      to: [c.design.id],
      topic: 'later',
      content: 'Or not',
      timestamp: T0 + 60,
    };
    assert.deepEqual(await log.take(), [
      { event: { type: 'drafts', op: 'update', draft: edited }, users: [t.fx.member.id] },
    ]);
    assert.deepEqual(await list(t.fx.member), { ...SUCCESS, count: 2, drafts: [second, edited] });

    assert.deepEqual((await remove(t.fx.member, b)).body, SUCCESS);
    assert.deepEqual(await log.take(), [
      { event: { type: 'drafts', op: 'remove', draft_id: b }, users: [t.fx.member.id] },
    ]);
    assert.deepEqual(await list(t.fx.member), { ...SUCCESS, count: 1, drafts: [edited] });
  });

  test('register carries the drafts, newest edit first', async () => {
    const older = await createOne(t.fx.member, channelDraft({ timestamp: T0 - 100 }));
    const newer = await createOne(t.fx.member, channelDraft({ content: 'second' }));
    const body = await registerQueue(t.as(t.fx.member), { fetch_event_types: ['drafts'] });
    assert.deepEqual(
      (body.drafts as Draft[]).map((d) => d.id),
      [newer, older],
    );
    const other = await registerQueue(t.as(t.fx.member2), { fetch_event_types: ['drafts'] });
    assert.deepEqual(other.drafts, []);
  });

  test('addressing is normalized: recipients sorted without the user, topics only for channels', async () => {
    const m = t.fx.member;
    const ids = [
      await createOne(m, {
        type: 'private',
        to: [t.fx.owner.id, m.id, t.fx.guest.id, t.fx.owner.id],
        topic: 'ignored',
        content: 'group',
      }),
      await createOne(m, { type: 'private', to: [m.id], topic: '', content: 'note to self' }),
      await createOne(m, { type: 'private', to: [], topic: '', content: 'nobody yet' }),
      await createOne(m, { type: '', to: [t.fx.owner.id], topic: 'x', content: 'unaddressed' }),
      await createOne(m, channelDraft({ topic: 'y'.repeat(70), content: '\n\nbody  \n' })),
    ];
    const drafts = (await list(m)).drafts as Draft[];
    assert.deepEqual(
      drafts.map(({ type, to, topic, content }) => ({ type, to, topic, content })),
      [
        {
          type: 'private',
          to: [t.fx.owner.id, t.fx.guest.id].sort((a, b) => a - b),
          topic: '',
          content: 'group',
        },
        { type: 'private', to: [m.id], topic: '', content: 'note to self' },
        { type: '', to: [], topic: '', content: 'nobody yet' },
        { type: '', to: [], topic: '', content: 'unaddressed' },
        {
          type: 'stream',
          to: [t.fx.channels.general.id],
          topic: `${'y'.repeat(57)}...`,
          content: 'body',
        },
      ],
    );
    assert.deepEqual(
      drafts.map((d) => d.id),
      ids,
    );
  });

  test('channel drafts: exactly one channel the user may post to read', async () => {
    const m = t.fx.member;
    for (const to of [[], [t.fx.channels.general.id, t.fx.channels.design.id]]) {
      badRequest(
        await create(m, [channelDraft({ to })]),
        'Must specify exactly 1 channel ID for channel messages',
      );
    }
    for (const id of [99999, t.fx.channels.secret.id, t.fx.channels.otherGeneral.id]) {
      badRequest(await create(m, [channelDraft({ to: [id] })]), 'Invalid channel ID');
    }
    badRequest(
      await create(m, [channelDraft({ topic: 'a\u0000b' })]),
      'drafts must not contain null bytes',
    );
    // Nothing was stored, nothing was said.
    assert.deepEqual(await list(m), { ...SUCCESS, count: 0, drafts: [] });
    assert.deepEqual(await log.take(), []);
  });

  test('direct drafts: known, active users', async () => {
    const m = t.fx.member;
    badRequest(
      await create(m, [{ type: 'private', to: [99999], topic: '', content: 'x' }]),
      'Invalid user ID 99999',
    );
    badRequest(
      await create(m, [{ type: 'private', to: [t.fx.otherOwner.id], topic: '', content: 'x' }]),
      `Invalid user ID ${t.fx.otherOwner.id}`,
    );
    badRequest(
      await create(m, [{ type: 'private', to: [t.fx.deactivated.id], topic: '', content: 'x' }]),
      `'${t.fx.deactivated.email}' is no longer using Parley.`,
    );
  });

  test('the draft shape: no id, a known type, content, a non-negative timestamp', async () => {
    const m = t.fx.member;
    badRequest(
      await create(m, [channelDraft({ id: 5 })]),
      'Argument "id" at drafts[0] is unexpected',
    );
    badRequest(await create(m, [channelDraft({ type: 'note' })]), 'Invalid drafts[0]["type"]');
    badRequest(
      await create(m, [{ type: 'stream', to: [1], content: 'x' }]),
      'drafts[0]["topic"] field is missing',
    );
    badRequest(
      await create(m, [channelDraft({ content: '' })]),
      'drafts[0]["content"] cannot be blank',
    );
    badRequest(await create(m, [channelDraft({ content: '  \n ' })]), 'Message must not be empty');
    badRequest(
      await create(m, [channelDraft({ content: 'a\u0000' })]),
      'drafts must not contain null bytes',
    );
    badRequest(
      await create(m, [channelDraft({ timestamp: -1 })]),
      'Timestamp must not be negative.',
    );
    badRequest(
      await create(m, [channelDraft({ to: ['x'] })]),
      'drafts[0]["to"][0] is not an integer',
    );
    badRequest(await create(m, { type: 'stream' }), 'drafts is not a list');
    assertMissing(await t.as(m).post('/drafts', {}), 'drafts');
    // One bad draft refuses the whole batch.
    badRequest(
      await create(m, [channelDraft(), channelDraft({ to: [] })]),
      'Must specify exactly 1 channel ID for channel messages',
    );
    // Names every object inherits are unexpected too; "__proto__" replaces no prototype.
    const general = t.fx.channels.general.id;
    badRequest(
      await create(
        m,
        `[{"type":"stream","to":[${general}],"topic":"t","content":"c","__proto__":{"timestamp":"x"}}]`,
      ),
      'Argument "__proto__" at drafts[0] is unexpected',
    );
    badRequest(
      await create(m, [channelDraft({ constructor: { timestamp: 'x' } })]),
      'Argument "constructor" at drafts[0] is unexpected',
    );
    assert.deepEqual(await list(m), { ...SUCCESS, count: 0, drafts: [] });
    // An empty batch creates nothing and tells nobody.
    assert.deepEqual((await create(m, [])).body, { ...SUCCESS, ids: [] });
    assert.deepEqual(await log.take(), []);
  });

  test('edit: the same rules; a missing or foreign draft does not exist (404)', async () => {
    const m = t.fx.member;
    const id = await createOne(m, channelDraft());
    await log.take();
    badRequest(await edit(m, id, channelDraft({ id })), 'Argument "id" at draft is unexpected');
    badRequest(
      await edit(m, id, channelDraft({ to: [] })),
      'Must specify exactly 1 channel ID for channel messages',
    );
    assertMissing(await t.as(m).patch(`/drafts/${id}`, {}), 'draft');
    for (const [who, draftId] of [
      [m, 99999],
      [t.fx.member2, id],
    ] as const) {
      assertError(
        await edit(who, draftId, channelDraft()),
        404,
        'BAD_REQUEST',
        'Draft does not exist',
      );
      assertError(await remove(who, draftId), 404, 'BAD_REQUEST', 'Draft does not exist');
    }
    assert.deepEqual(await log.take(), []);
    assert.equal((await list(m)).count, 1);
    // Deleted once, gone.
    assert.deepEqual((await remove(m, id)).body, SUCCESS);
    assertError(await remove(m, id), 404, 'BAD_REQUEST', 'Draft does not exist');
  });

  test('users who do not synchronize drafts may not use them', async () => {
    const m = t.fx.member;
    const id = await createOne(m, channelDraft());
    assert.equal(
      (await t.as(m).patch('/settings', { enable_drafts_synchronization: false })).status,
      200,
    );
    const msg = 'User has disabled synchronizing drafts.';
    badRequest(await t.as(m).get('/drafts'), msg);
    badRequest(await create(m, [channelDraft()]), msg);
    badRequest(await edit(m, id, channelDraft()), msg);
    badRequest(await remove(m, id), msg);
  });

  test('turning synchronization off deletes the drafts without remove events', async () => {
    const m = t.fx.member;
    await createOne(m, channelDraft());
    await createOne(t.fx.member2, channelDraft());
    await log.take();
    assert.equal(
      (await t.as(m).patch('/settings', { enable_drafts_synchronization: false })).status,
      200,
    );
    const sent = await log.take();
    assert.deepEqual(
      sent.map((s) => s.event.type),
      ['user_settings', 'update_display_settings'],
    );
    assert.equal(
      (await t.as(m).patch('/settings', { enable_drafts_synchronization: true })).status,
      200,
    );
    assert.deepEqual(await list(m), { ...SUCCESS, count: 0, drafts: [] });
    // Other users' drafts stay.
    assert.equal((await list(t.fx.member2)).count, 1);
  });

  for (const who of EVERY_CALLER) {
    test(`${who}: keeps drafts of their own`, async () => {
      const res = await as(t, who).post('/drafts', {
        drafts: [{ type: '', to: [], topic: '', content: 'thought' }],
      });
      if (assertUnauthorized(who, res)) {
        assertUnauthorized(who, await as(t, who).get('/drafts'));
        assertUnauthorized(who, await as(t, who).patch('/drafts/1', { draft: channelDraft() }));
        assertUnauthorized(who, await as(t, who).delete('/drafts/1'));
        assert.deepEqual(await log.take(), []);
        return;
      }
      assert.equal(res.status, 200, res.text);
      const [id] = res.body.ids as number[];
      const user = t.fx[who as Exclude<typeof who, 'badKey' | 'noAuth'>];
      const draft = { id, type: '', to: [], topic: '', content: 'thought', timestamp: T0 };
      assert.deepEqual((await as(t, who).get('/drafts')).body, {
        ...SUCCESS,
        count: 1,
        drafts: [draft],
      });
      assert.deepEqual(
        (await as(t, who).patch(`/drafts/${id}`, { draft: { ...draft, id: undefined } })).body,
        SUCCESS,
      );
      assert.deepEqual((await as(t, who).delete(`/drafts/${id}`)).body, SUCCESS);
      assert.deepEqual(
        (await log.take()).map((s) => [s.event.op, s.users]),
        [
          ['add', [user.id]],
          ['update', [user.id]],
          ['remove', [user.id]],
        ],
      );
    });
  }

  test('unknown parameters are reported', async () => {
    assert.deepEqual(
      (await t.as(t.fx.member).post('/drafts', { drafts: [], colour: 'red' })).body,
      {
        ...SUCCESS,
        ids: [],
        ignored_parameters_unsupported: ['colour'],
      },
    );
  });
});
