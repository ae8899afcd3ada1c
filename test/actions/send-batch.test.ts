// Channel sends on PostgreSQL that arrive while a batch of their organization is written
// share the next batch's transaction (actions/messages.ts, writeSends). To make sends queue
// behind a batch, another connection holds the messages table until the first batch waits
// for it: the sends made meanwhile are planned (their reads are not blocked) and queue.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { sql } from 'kysely';
import { setFaultHook } from '../../src/actions/transaction.ts';
import { buildTestApp, POSTGRES_SKIP, TEST_DATABASE_URL, type TestApp } from '../support/app.ts';
import { err } from '../support/callers.ts';
import { drainEvents, registerQueue, type Event } from '../support/events.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { rowsOf, useClock } from '../support/messages.ts';

let t: TestApp;
beforeEach(async () => {
  t = await buildTestApp();
  useClock(t);
});
afterEach(async () => {
  setFaultHook(null);
  await t.close();
});

/** Another connection's lock on a table, held until release(). */
async function holdTable(table: string) {
  const client = new pg.Client({
    connectionString: TEST_DATABASE_URL!,
    options: `-c search_path=${t.ctx.store.schema}`,
  });
  await client.connect();
  await client.query('begin');
  await client.query(`lock table ${table} in exclusive mode`);
  return {
    /** Resolves once some other session waits for the lock. */
    async waitForWaiter(): Promise<void> {
      for (let i = 0; i < 500; i++) {
        const { rows } = await client.query<{ n: number }>(
          `select count(*)::int as n from pg_locks where not granted and relation = $1::regclass`,
          [table],
        );
        if (rows[0].n > 0) return;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error(`no one waited for ${table}`);
    },
    async release(): Promise<void> {
      await client.query('commit');
      await client.end();
    },
  };
}

function send(who: FixtureUser, to: string, content: string) {
  return t
    .as(who)
    .post('/messages', { type: 'stream', to, topic: 'batch', content, read_by_sender: true });
}

/**
 * The first send's batch waits for the held table; the other sends are made meanwhile and
 * given time to queue; then the table is let go. Returns the answers in the order sent.
 */
async function sendBehindHeldTable(sends: Array<[FixtureUser, string, string]>) {
  const held = await holdTable('messages');
  try {
    const first = send(...sends[0]);
    await held.waitForWaiter();
    const rest = sends.slice(1).map((s) => send(...s));
    // Planning a send is a few reads, none blocked by the lock.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await held.release();
    return await Promise.all([first, ...rest]);
  } catch (e) {
    await held.release().catch(() => undefined);
    throw e;
  }
}

const messageEvents = (events: Event[]) =>
  events.map((e) => {
    const m = e.message as { id: number; content: string };
    return [e.type, m.id, m.content, e.flags];
  });

describe('channel sends on PostgreSQL, written in batches', { skip: POSTGRES_SKIP }, () => {
  test('sends made together share a transaction; each has its rows and its event', async () => {
    const reader = t.as(t.fx.member2);
    const q = await registerQueue(reader, { event_types: ['message'] });
    const senders = [t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member, t.fx.owner];
    const answers = await sendBehindHeldTable(
      senders.map((u, i) => [u, 'general', `batched ${i}`] as [FixtureUser, string, string]),
    );
    for (const a of answers) {
      assert.deepEqual(
        { status: a.status, body: a.body },
        { status: 200, body: { result: 'success', msg: '', id: a.body.id } },
      );
    }
    const ids = answers.map((a) => a.body.id as number);
    assert.equal(new Set(ids).size, 5);

    // The first send committed alone; the four queued behind it fewer times than four.
    const { rows } = await sql<{ n: number }>`
      select count(distinct xmin::text)::int as n from messages where id in (${sql.join(ids.slice(1))})`.execute(
      t.ctx.db,
    );
    assert.ok(rows[0].n < 4, `the queued sends took ${rows[0].n} transactions`);

    const subscribers = Object.keys(await rowsOf(t, ids[0])).length;
    assert.ok(subscribers > 1);
    for (const [i, id] of ids.entries()) {
      const mine = await rowsOf(t, id);
      assert.equal(Object.keys(mine).length, subscribers, `rows of message ${i}`);
      // Each send's own flags: read for its sender (read_by_sender), unread for the others.
      for (const [user, flags] of Object.entries(mine)) {
        assert.equal(flags, Number(user) === senders[i].id ? 1 : 0, `user ${user}, message ${i}`);
      }
    }

    // The reader's queue has every message once, in the order of their ids.
    const byId = [...ids.entries()].sort((a, b) => a[1] - b[1]);
    assert.deepEqual(
      messageEvents(await drainEvents(t.ctx, reader, q.queue_id, q.last_event_id)),
      byId.map(([i, id]) => ['message', id, `batched ${i}`, []]),
    );
  });

  test('one send the database refuses fails alone; the others of its batch are stored', async () => {
    // A real refusal of one row by the database, not an injected fault.
    await sql`create function refuse_poison() returns trigger language plpgsql as $$
      begin
        if new.content = 'poison' then raise exception 'refused'; end if;
        return new;
      end $$`.execute(t.ctx.db);
    await sql`create trigger refuse_poison before insert on messages
      for each row execute function refuse_poison()`.execute(t.ctx.db);
    const reader = t.as(t.fx.member2);
    const q = await registerQueue(reader, { event_types: ['message'] });
    const before = await t.ctx.db
      .selectFrom('messages')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();

    const answers = await sendBehindHeldTable([
      [t.fx.owner, 'general', 'first'],
      [t.fx.admin, 'general', 'second'],
      [t.fx.member, 'general', 'poison'],
      [t.fx.moderator, 'general', 'fourth'],
    ]);
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 500, 200],
    );
    assert.deepEqual(answers[2].body, err('Internal server error', 'INTERNAL_SERVER_ERROR'));
    const ids = [0, 1, 3].map((i) => answers[i].body.id as number);

    const after = await t.ctx.db
      .selectFrom('messages')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(after.n) - Number(before.n), 3);
    const rows = await t.ctx.db
      .selectFrom('user_messages')
      .select('message_id')
      .where('message_id', 'not in', ids)
      .where('message_id', '>', Math.min(...ids))
      .execute();
    assert.deepEqual(rows, [], 'no rows of the refused message');

    const contents = ['first', 'second', 'fourth'];
    const byId = [...ids.entries()].sort((a, b) => a[1] - b[1]);
    assert.deepEqual(
      messageEvents(await drainEvents(t.ctx, reader, q.queue_id, q.last_event_id)),
      byId.map(([i, id]) => ['message', id, contents[i], []]),
    );
  });

  test("a channel's first message is announced once, with the first id", async () => {
    const design = t.fx.channels.design;
    const none = await t.ctx.db
      .selectFrom('messages')
      .select('id')
      .where('channel_id', '=', design.id)
      .execute();
    assert.deepEqual(none, []);
    const watcher = t.as(t.fx.admin);
    const q = await registerQueue(watcher, { event_types: ['stream'] });

    // The first send (to general) holds the first batch; the three to design queue.
    const answers = await sendBehindHeldTable([
      [t.fx.owner, 'general', 'elsewhere'],
      [t.fx.admin, 'design', 'one'],
      [t.fx.member, 'design', 'two'],
      [t.fx.admin, 'design', 'three'],
    ]);
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 200, 200],
    );
    const first = Math.min(...answers.slice(1).map((a) => a.body.id as number));
    const firstOf = (channel: { id: number; name: string }, value: number) => ({
      type: 'stream',
      op: 'update',
      stream_id: channel.id,
      name: channel.name,
      property: 'first_message_id',
      value,
    });
    // general had no message either: its first is the send that held the first batch.
    assert.deepEqual(
      (await drainEvents(t.ctx, watcher, q.queue_id, q.last_event_id)).map(
        ({ id: _id, ...e }) => e,
      ),
      [firstOf(t.fx.channels.general, answers[0].body.id as number), firstOf(design, first)],
    );
  });
});
