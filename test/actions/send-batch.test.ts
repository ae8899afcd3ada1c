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
import { rowsOf, sendDirect, sendToChannel, useClock } from '../support/messages.ts';

let t: TestApp;
beforeEach(async () => {
  t = await buildTestApp();
  useClock(t);
});
afterEach(async () => {
  setFaultHook(null);
  await t.close();
});

/** A lock another connection takes (by `statement`) and holds until release(). */
async function holdLock(statement: string, parameters: unknown[] = []) {
  const client = new pg.Client({
    connectionString: TEST_DATABASE_URL!,
    options: `-c search_path=${t.ctx.store.schema}`,
  });
  await client.connect();
  try {
    await client.query('begin');
    await client.query(statement, parameters);
  } catch (e) {
    await client.end();
    throw e;
  }
  // The sessions waiting for this lock, or for one that waits for it; pg_locks is read live
  // (pg_stat_activity would be read once per transaction), and other test files' sessions
  // waiting for their own locks are not counted.
  const waiters = async (): Promise<number> =>
    (
      await client.query<{ n: number }>(
        `with recursive waiting as (select distinct pid from pg_locks where not granted),
           blocked(pid) as (
             select pid from waiting where pg_backend_pid() = any(pg_blocking_pids(pid))
             union
             select w.pid from waiting w join blocked b on b.pid = any(pg_blocking_pids(w.pid)))
         select count(*)::int as n from blocked`,
      )
    ).rows[0].n;
  let released = false;
  return {
    waiters,
    /** Resolves once this many other sessions wait for a lock. */
    async waitForWaiters(count: number): Promise<void> {
      for (let i = 0; i < 500; i++) {
        if ((await waiters()) >= count) return;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error(`${count} sessions never waited for ${statement}`);
    },
    /** Lets the lock go; again later, does nothing. */
    async release(): Promise<void> {
      if (released) return;
      released = true;
      await client.query('commit');
      await client.end();
    },
  };
}

const holdTable = (table: string) => holdLock(`lock table ${table} in exclusive mode`);

/** The organization's commit sequence: every evented commit waits for it. */
const holdCommitSequence = () =>
  holdLock('select event_seq from realm_event_seqs where realm_id = $1 for update', [
    t.fx.realm.id,
  ]);

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type HeldLock = Awaited<ReturnType<typeof holdLock>>;

/** Run body with the lock held; body lets it go, and so does a failure. */
async function whileHeld<T>(held: HeldLock, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } finally {
    await held.release();
  }
}

async function messageCount(): Promise<number> {
  const row = await t.ctx.db
    .selectFrom('messages')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The event telling that a channel's first message is now this one. */
const firstMessageEvent = (channel: { id: number; name: string }, value: number) => ({
  type: 'stream',
  op: 'update',
  stream_id: channel.id,
  name: channel.name,
  property: 'first_message_id',
  value,
});

/** A channel name sends to the channel's topic "batch"; users, a direct message. */
type Destination = string | FixtureUser[];

function send(who: FixtureUser, to: Destination, content: string) {
  return t
    .as(who)
    .post(
      '/messages',
      typeof to === 'string'
        ? { type: 'stream', to, topic: 'batch', content, read_by_sender: true }
        : { type: 'direct', to: to.map((u) => u.id), content, read_by_sender: true },
    );
}

/** How many transactions wrote these messages. */
async function transactionsOf(ids: number[]): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(distinct xmin::text)::int as n from messages where id in (${sql.join(ids)})`.execute(
    t.ctx.db,
  );
  return rows[0].n;
}

/**
 * The first send's batch waits for the held table; the other sends are made meanwhile and
 * given time to queue; then the table is let go. Returns the answers in the order sent.
 */
async function sendBehindHeldTable(sends: Array<[FixtureUser, Destination, string]>) {
  const held = await holdTable('messages');
  return whileHeld(held, async () => {
    const first = send(...sends[0]);
    await held.waitForWaiters(1);
    const rest = sends.slice(1).map((s) => send(...s));
    // Planning a send is a few reads, none blocked by the lock.
    await pause(300);
    await held.release();
    return Promise.all([first, ...rest]);
  });
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
      senders.map((u, i) => [u, 'general', `batched ${i}`] as [FixtureUser, Destination, string]),
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
    const queuedTransactions = await transactionsOf(ids.slice(1));
    assert.ok(queuedTransactions < 4, `the queued sends took ${queuedTransactions} transactions`);

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
    const before = await messageCount();

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

    assert.equal((await messageCount()) - before, 3);
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
    // general had no message either: its first is the send that held the first batch.
    assert.deepEqual(
      (await drainEvents(t.ctx, watcher, q.queue_id, q.last_event_id)).map(
        ({ id: _id, ...e }) => e,
      ),
      [
        firstMessageEvent(t.fx.channels.general, answers[0].body.id as number),
        firstMessageEvent(design, first),
      ],
    );
  });

  test('the next batch is written while the previous one commits, and commits after it', async () => {
    await sendToChannel(t, t.fx.owner, 'general', 'batch', 'not the first any more');
    const reader = t.as(t.fx.member2);
    const q = await registerQueue(reader, { event_types: ['message'] });
    const held = await holdCommitSequence();
    const answers = await whileHeld(held, async () => {
      const first = send(t.fx.owner, 'general', 'one');
      await held.waitForWaiters(1);
      // The first batch waits to commit; the second is inserted meanwhile and waits too.
      const second = send(t.fx.admin, 'general', 'two');
      await held.waitForWaiters(2);
      await held.release();
      return Promise.all([first, second]);
    });
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200],
    );
    const [one, two] = answers.map((a) => a.body.id as number);
    assert.ok(one < two, `${one} before ${two}`);
    assert.deepEqual(messageEvents(await drainEvents(t.ctx, reader, q.queue_id, q.last_event_id)), [
      ['message', one, 'one', []],
      ['message', two, 'two', []],
    ]);
    // A register now sees both, and its queue repeats neither.
    const later = await registerQueue(reader, { event_types: ['message'] });
    assert.equal(later.max_message_id, two);
    await sendToChannel(t, t.fx.owner, 'general', 'batch', 'three');
    assert.deepEqual(
      messageEvents(await drainEvents(t.ctx, reader, later.queue_id, later.last_event_id)).map(
        (e) => e[2],
      ),
      ['three'],
    );
  });

  test('a batch giving a channel its first message commits before the next starts', async () => {
    const design = t.fx.channels.design;
    const watcher = t.as(t.fx.admin);
    const q = await registerQueue(watcher, { event_types: ['stream'] });
    const held = await holdCommitSequence();
    const answers = await whileHeld(held, async () => {
      const first = send(t.fx.admin, 'design', 'first ever');
      await held.waitForWaiters(1);
      const second = send(t.fx.member, 'design', 'second');
      // Had the second batch started, its reading of the first message would miss the
      // first batch's, uncommitted, and it would announce itself as the first.
      await pause(300);
      assert.equal(await held.waiters(), 1);
      await held.release();
      return Promise.all([first, second]);
    });
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200],
    );
    assert.deepEqual(
      (await drainEvents(t.ctx, watcher, q.queue_id, q.last_event_id)).map(
        ({ id: _id, ...e }) => e,
      ),
      [firstMessageEvent(design, answers[0].body.id as number)],
    );
  });

  test('direct messages join the batches; one that starts a conversation is written alone', async () => {
    const { owner, admin, member, member2, moderator } = t.fx;
    // The conversations of the first two exist already.
    await sendDirect(t, owner, [member2], 'hello');
    await sendDirect(t, admin, [member2], 'hello');
    const reader = t.as(member2);
    const q = await registerQueue(reader, { event_types: ['message'] });

    const answers = await sendBehindHeldTable([
      [owner, 'general', 'holds the first batch'],
      [owner, [member2], 'dm one'],
      [admin, [member2], 'dm two'],
      [member, [moderator], 'a new conversation'],
      [admin, 'general', 'to the channel'],
    ]);
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 200, 200, 200],
    );
    const ids = answers.map((a) => a.body.id as number);
    const queued = [ids[1], ids[2], ids[4]];
    assert.ok((await transactionsOf(queued)) < 3, 'the queued sends shared a transaction');
    assert.equal(await transactionsOf([...queued, ids[3]]), (await transactionsOf(queued)) + 1);

    assert.deepEqual(await rowsOf(t, ids[1]), { [owner.id]: 1, [member2.id]: 0 });
    assert.deepEqual(await rowsOf(t, ids[2]), { [admin.id]: 1, [member2.id]: 0 });
    assert.deepEqual(await rowsOf(t, ids[3]), { [member.id]: 1, [moderator.id]: 0 });
    const contents = ['holds the first batch', 'dm one', 'dm two', '', 'to the channel'];
    assert.deepEqual(
      messageEvents(await drainEvents(t.ctx, reader, q.queue_id, q.last_event_id)),
      [...ids.entries()]
        .filter(([i]) => i !== 3)
        .sort((a, b) => a[1] - b[1])
        .map(([i, id]) => ['message', id, contents[i], []]),
    );
  });
});
