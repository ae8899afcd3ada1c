// A route that keeps its answers (`keepsAnswer`, GET /users/me) answers a plain GET on a
// socket from what it kept for the same caller and query, and works the answer out again
// after any change to a table it read: the answer is always the one Fastify's route gives
// at that moment (reached here through inject, which never keeps anything).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AnyRoute } from '../../src/http/route.ts';
import { usersRoutes } from '../../src/http/routes/users.ts';
import { ROLE } from '../../src/lib/roles.ts';
import { TEST_DATABASE_URL } from '../support/app.ts';
import { basicAuth } from '../support/client.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { withServer, type Live } from '../support/live.ts';

type Body = Record<string, unknown>;

/** Answers are kept on SQLite only (store/kept-values.ts): on PostgreSQL each is worked out. */
const KEPT = TEST_DATABASE_URL ? 1 : 0;

/** The route's answer on a socket, checked against Fastify's for the same request. */
async function ownUser(live: Live, who: FixtureUser, query = ''): Promise<Body> {
  const path = `/api/v1/users/me${query}`;
  const headers = { host: 'parley.test', authorization: basicAuth(who.email, who.api_key) };
  const socket = await live.raw({ method: 'GET', path, headers });
  assert.equal(socket.status, 200, socket.text);
  const injected = await live.t.app.inject({ method: 'GET', url: path, headers });
  assert.equal(socket.text, injected.body, 'the kept answer is the route answer, byte for byte');
  return JSON.parse(socket.text) as Body;
}

test('GET /users/me is kept per caller and query until a table it read changes', () =>
  withServer(async (live) => {
    const { member, member2, admin } = live.t.fx;
    const spec: AnyRoute | undefined = usersRoutes.find(
      (r) => r.method === 'GET' && r.url === '/users/me',
    );
    assert.ok(spec?.keepsAnswer);
    const handler = spec.handler;
    let runs = 0;
    spec.handler = (input: Parameters<typeof handler>[0]) => {
      runs++;
      return handler(input);
    };
    try {
      // Each call below counts the handler once for inject (Fastify keeps nothing), and once
      // more when the socket's answer was worked out rather than kept.
      const workedOut = async (who: FixtureUser, query = ''): Promise<[Body, number]> => {
        const before = runs;
        const body = await ownUser(live, who, query);
        return [body, runs - before - 1];
      };

      const [first, firstRuns] = await workedOut(member);
      assert.equal(firstRuns, 1);
      assert.equal(first.user_id, member.id);
      assert.deepEqual(await workedOut(member), [first, KEPT], 'kept');
      assert.equal((await workedOut(member2))[1], 1, 'kept per caller');
      const [unknown, unknownRuns] = await workedOut(member, '?colour=red');
      assert.equal(unknownRuns, 1, 'kept per query');
      assert.deepEqual(unknown.ignored_parameters_unsupported, ['colour']);
      assert.deepEqual(await workedOut(member, '?colour=red'), [unknown, KEPT]);

      // Each change below shows in the next answer, worked out once and then kept again.
      const changes: { name: string; change: () => Promise<void>; shows: (me: Body) => void }[] = [
        {
          name: 'own name',
          change: async () => {
            const res = await live.call(member, 'PATCH', '/settings', { full_name: 'Renamed' });
            assert.equal(res.status, 200, res.text);
          },
          shows: (me) => assert.equal(me.full_name, 'Renamed'),
        },
        {
          name: 'a profile field value',
          change: async () => {
            const field = await live.call(admin, 'POST', '/realm/profile_fields', {
              name: 'Bio',
              field_type: 2,
            });
            assert.equal(field.status, 200, field.text);
            const id = field.body.id as number;
            const res = await live.call(member, 'PATCH', '/users/me/profile_data', {
              data: JSON.stringify([{ id, value: 'hello' }]),
            });
            assert.equal(res.status, 200, res.text);
          },
          shows: (me) =>
            assert.deepEqual(Object.values(me.profile_data as Body), [
              { value: 'hello', rendered_value: '<p>hello</p>' },
            ]),
        },
        {
          name: 'a message received',
          change: async () => {
            const res = await live.call(member2, 'POST', '/messages', {
              type: 'direct',
              to: JSON.stringify([member.id]),
              content: 'hi',
            });
            assert.equal(res.status, 200, res.text);
            sent = res.body.id as number;
          },
          shows: (me) => assert.equal(me.max_message_id, sent),
        },
        {
          name: 'a role given by an administrator',
          change: async () => {
            const res = await live.call(admin, 'PATCH', `/users/${member.id}`, {
              role: ROLE.moderator,
            });
            assert.equal(res.status, 200, res.text);
          },
          shows: (me) => assert.equal(me.role, ROLE.moderator),
        },
      ];
      let sent = 0;
      for (const { name, change, shows } of changes) {
        await change();
        const [after, afterRuns] = await workedOut(member);
        assert.equal(afterRuns, 1, `${name}: worked out again`);
        shows(after);
        assert.deepEqual(await workedOut(member), [after, KEPT], `${name}: kept again`);
      }
    } finally {
      spec.handler = handler;
    }
  }));
