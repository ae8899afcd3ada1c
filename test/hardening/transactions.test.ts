// Nothing lost, nothing half-done: a failure injected inside a write's transaction (through
// the fault hook of src/actions/transaction.ts) answers a plain JSON 500 (507 when the disk
// or the database is full), leaves no row behind, queues no event, and the next request works as if the failure never happened.
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setFaultHook } from '../../src/actions/transaction.ts';
import { memoryFileStore } from '../../src/infra/files.ts';
import type { DB } from '../../src/store/schema.ts';
import { keepForLife } from '../../src/store/sqlite-lifetime.ts';
import { buildTestApp, TEST_DATABASE_URL, type TestApp } from '../support/app.ts';
import { err } from '../support/callers.ts';
import { SUCCESS } from '../support/client.ts';
import { drainEvents, registerQueue } from '../support/events.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { solidPng } from '../support/images.ts';
import { rowsOf, sendToChannel, useClock } from '../support/messages.ts';

const INTERNAL = err('Internal server error', 'INTERNAL_SERVER_ERROR');
const STORAGE_FULL = err('The server has no room to store this change', 'STORAGE_FULL');

let t: TestApp;
beforeEach(async () => {
  t = await buildTestApp();
  useClock(t);
});
afterEach(async () => {
  setFaultHook(null);
  await t.close();
});

/** Make the next transaction that reaches `point` fail there; returns the points it saw. */
function failAt(point: string): string[] {
  const seen: string[] = [];
  let fired = false;
  setFaultHook((p) => {
    seen.push(p);
    if (p === point && !fired) {
      fired = true;
      throw new Error(`injected fault at ${point}`);
    }
  });
  return seen;
}

async function count(table: keyof DB, app: TestApp = t): Promise<number> {
  const row = await app.ctx.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function counts(...tables: Array<keyof DB>): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of tables) out[table] = await count(table);
  return out;
}

/** What the app logs as errors from now on (and still logs). */
function captureErrors(app: TestApp): Array<{ err?: { code?: string; message?: string } }> {
  const logged: Array<{ err?: { code?: string; message?: string } }> = [];
  const error = app.ctx.log.error.bind(app.ctx.log);
  app.ctx.log.error = ((obj: { err?: { code?: string; message?: string } }, ...rest: string[]) => {
    logged.push(obj);
    error(obj, ...rest);
  }) as typeof app.ctx.log.error;
  return logged;
}

async function queueFor(who: FixtureUser) {
  const client = t.as(who);
  const q = await registerQueue(client);
  return {
    events: () => drainEvents(t.ctx, client, q.queue_id, q.last_event_id),
  };
}

const newestMessageId = async (): Promise<number> => {
  const row = await t.ctx.db
    .selectFrom('messages')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirstOrThrow();
  return Number(row.id);
};

describe('a failure inside POST /messages', () => {
  for (const point of ['message-inserted', 'before-commit']) {
    test(`at ${point}: a JSON 500, no message, no rows, no event; the next send works`, async () => {
      await sendToChannel(t, t.fx.owner, 'general', 'crash', 'before the crash');
      const before = await counts('messages', 'user_messages');
      const lastId = await newestMessageId();
      const sender = await queueFor(t.fx.member);
      const recipient = await queueFor(t.fx.member2);
      const seen = failAt(point);

      const res = await t.as(t.fx.member).post('/messages', {
        type: 'stream',
        to: 'general',
        topic: 'crash',
        content: 'lost in the crash',
      });
      assert.deepEqual({ status: res.status, body: res.body }, { status: 500, body: INTERNAL });
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
      assert.doesNotMatch(res.text, /injected|at \/|INSERT|SELECT/);
      assert.ok(seen.includes(point), `the send never reached ${point}: ${seen.join(', ')}`);

      assert.deepEqual(await counts('messages', 'user_messages'), before);
      assert.deepEqual(await recipient.events(), []);
      assert.deepEqual(await sender.events(), []);

      const again = await t.as(t.fx.member).post('/messages', {
        type: 'stream',
        to: 'general',
        topic: 'crash',
        content: 'made it',
      });
      assert.deepEqual(again.body, { ...SUCCESS, id: again.body.id });
      const id = again.body.id as number;
      // SQLite reuses the rolled-back id; a PostgreSQL sequence never hands a number out twice.
      if (TEST_DATABASE_URL) assert.ok(id > lastId, `${id} after ${lastId}`);
      else assert.equal(id, lastId + 1);
      assert.equal((await count('messages')) - before.messages, 1);
      assert.deepEqual(Object.keys(await rowsOf(t, id)).length, 7);
      const events = await recipient.events();
      assert.deepEqual(
        events.map((e) => [e.type, (e.message as { id: number }).id, e.flags]),
        [['message', id, []]],
      );
      assert.deepEqual((await sender.events()).length, 1);
    });
  }

  test('a direct message failing after its row: no row for either side', async () => {
    const before = await counts('messages', 'user_messages');
    const recipient = await queueFor(t.fx.member2);
    failAt('message-inserted');
    const res = await t.as(t.fx.member).post('/messages', {
      type: 'direct',
      to: [t.fx.member2.id],
      content: 'never arrives',
    });
    assert.deepEqual({ status: res.status, body: res.body }, { status: 500, body: INTERNAL });
    assert.deepEqual(await counts('messages', 'user_messages'), before);
    assert.deepEqual(await recipient.events(), []);
    setFaultHook(null);
    const unread = await t.as(t.fx.member2).get('/messages', {
      anchor: 'newest',
      num_before: 5,
      num_after: 0,
      narrow: [{ operator: 'is', operand: 'unread' }],
    });
    assert.equal(unread.status, 200);
    assert.deepEqual(unread.body.messages, []);
  });
});

describe('a failure before the commit of other writes', () => {
  test('creating a channel: no channel, no subscription, no event; the retry creates it', async () => {
    const tables: Array<keyof DB> = ['channels', 'subscriptions', 'recipients'];
    const before = await counts(...tables);
    const other = await queueFor(t.fx.member2);
    const seen = failAt('before-commit');
    const params = { subscriptions: [{ name: 'phoenix', description: 'rises' }] };

    const res = await t.as(t.fx.member).post('/users/me/subscriptions', params);
    assert.deepEqual({ status: res.status, body: res.body }, { status: 500, body: INTERNAL });
    assert.ok(seen.includes('before-commit'));
    assert.deepEqual(await counts(...tables), before);
    assert.deepEqual(await other.events(), []);

    const again = await t.as(t.fx.member).post('/users/me/subscriptions', params);
    assert.deepEqual(again.body, {
      ...SUCCESS,
      subscribed: { [t.fx.member.id]: ['phoenix'] },
      already_subscribed: {},
    });
    assert.equal((await count('channels')) - before.channels, 1);
    assert.deepEqual(
      (await other.events()).map((e) => [e.type, e.op]),
      [
        ['stream', 'create'],
        ['subscription', 'peer_add'],
      ],
    );
  });

  test('creating a user group: no group, no members, no event; the retry creates it', async () => {
    const tables: Array<keyof DB> = ['user_groups', 'user_group_members'];
    const before = await counts(...tables);
    const other = await queueFor(t.fx.member2);
    failAt('before-commit');
    const params = { name: 'rescuers', description: '', members: [t.fx.member.id] };

    const res = await t.as(t.fx.member).post('/user_groups/create', params);
    assert.deepEqual({ status: res.status, body: res.body }, { status: 500, body: INTERNAL });
    assert.deepEqual(await counts(...tables), before);
    assert.deepEqual(await other.events(), []);

    const again = await t.as(t.fx.member).post('/user_groups/create', params);
    assert.deepEqual(again.body, { ...SUCCESS, group_id: again.body.group_id });
    const named = await t.ctx.db
      .selectFrom('user_groups')
      .select('id')
      .where('name', '=', 'rescuers')
      .execute();
    assert.deepEqual(named, [{ id: again.body.group_id }]);
    assert.deepEqual(
      (await other.events()).map((e) => [e.type, e.op]),
      [['user_group', 'add']],
    );
  });
});

describe('a full database', { skip: TEST_DATABASE_URL ? 'SQLite only' : false }, () => {
  /** Let the database grow no more (SQLite's max_page_count), or again without bound. */
  function capDatabase(capped: boolean): void {
    const sqlite = t.ctx.store.sqlite!;
    const pages = keepForLife(sqlite.prepare('PRAGMA page_count')).pluck().get() as number;
    sqlite.exec(`PRAGMA max_page_count = ${capped ? pages : 1_000_000_000}`);
  }

  test('a send that needs more room: a JSON 507, nothing stored, no event, the cause logged; then it works', async () => {
    await sendToChannel(t, t.fx.owner, 'general', 'full', 'before the disk filled');
    const before = await counts('messages', 'user_messages');
    const recipient = await queueFor(t.fx.member2);
    const logged = captureErrors(t);
    // Content over a page long needs pages of its own.
    const long = 'room '.repeat(1_900);
    capDatabase(true);

    const res = await t.as(t.fx.member).post('/messages', {
      type: 'stream',
      to: 'general',
      topic: 'full',
      content: long,
    });
    assert.deepEqual({ status: res.status, body: res.body }, { status: 507, body: STORAGE_FULL });
    assert.deepEqual(await counts('messages', 'user_messages'), before);
    assert.deepEqual(await recipient.events(), []);
    // The log names the cause, not the ROLLBACK that found SQLite had rolled back already.
    assert.deepEqual(
      logged.map((entry) => [entry.err?.code, entry.err?.message]),
      [['SQLITE_FULL', 'database or disk is full']],
    );

    capDatabase(false);
    const id = await sendToChannel(t, t.fx.member, 'general', 'full', long);
    assert.equal((await count('messages')) - before.messages, 1);
    assert.deepEqual(
      (await recipient.events()).map((e) => [e.type, (e.message as { id: number }).id]),
      [['message', id]],
    );
  });
});

describe(
  'a full disk under the uploads',
  { skip: existsSync('/dev/full') ? false : 'no /dev/full' },
  () => {
    test('an emoji upload: a JSON 507, no emoji, no event, the cause logged; then it works', async () => {
      const files = memoryFileStore();
      // Linux's /dev/full refuses every write with ENOSPC, as a full disk does.
      let full = true;
      const app = await buildTestApp({
        files: {
          ...files,
          put: (key, bytes, contentType) =>
            full ? writeFile('/dev/full', bytes) : files.put(key, bytes, contentType),
        },
      });
      try {
        const logged = captureErrors(app);
        const q = await registerQueue(app.as(app.fx.member2));
        const png = await solidPng(64, 64);
        const upload = () =>
          app
            .as(app.fx.member)
            .multipart('POST', '/realm/emoji/full_disk_parrot', {}, [
              { field: 'file', filename: 'parrot.png', contentType: 'image/png', data: png },
            ]);

        const res = await upload();
        assert.deepEqual(
          { status: res.status, body: res.body },
          { status: 507, body: STORAGE_FULL },
        );
        assert.deepEqual(
          logged.map((e) => e.err?.code),
          ['ENOSPC'],
        );
        assert.deepEqual(files.keys(), []);
        assert.deepEqual(await count('realm_emoji', app), 0);
        const drain = () =>
          drainEvents(app.ctx, app.as(app.fx.member2), q.queue_id, q.last_event_id);
        assert.deepEqual(await drain(), []);

        full = false;
        assert.deepEqual((await upload()).body, SUCCESS);
        assert.deepEqual(
          (await drain()).map((e) => e.type),
          ['realm_emoji'],
        );
      } finally {
        await app.close();
      }
    });
  },
);
