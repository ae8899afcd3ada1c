// A client without archived_channels was told of an archiving as the channel's deletion, and
// one without include_deactivated_groups of a group's deactivation as its removal. Neither
// then hears about the channel or the group again; a client that shows them does.
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { SUCCESS } from '../support/client.ts';
import { drainEvents, registerQueue, withoutIds } from '../support/events.ts';
import type { FixtureUser } from '../support/fixture.ts';

let t: TestApp;
beforeEach(async () => {
  t = await buildTestApp();
});
afterEach(async () => {
  await t.close();
});

/** Two queues of one user, with and without a capability; drains both after act. */
async function eventsWithAndWithout(
  who: FixtureUser,
  capability: string,
  eventTypes: string[],
  act: () => Promise<void>,
): Promise<{ aware: unknown[]; unaware: unknown[] }> {
  const client = t.as(who);
  const aware = await registerQueue(client, {
    event_types: eventTypes,
    client_capabilities: { notification_settings_null: false, [capability]: true },
  });
  const unaware = await registerQueue(client, { event_types: eventTypes });
  await act();
  const drain = async (q: typeof aware) =>
    withoutIds(await drainEvents(t.ctx, client, q.queue_id, q.last_event_id));
  return { aware: await drain(aware), unaware: await drain(unaware) };
}

const ok = async (res: Promise<{ status: number; text: string }>) => {
  const r = await res;
  assert.equal(r.status, 200, r.text);
};

test('an archived channel renamed: only clients that show archived channels hear of it', async () => {
  const id = t.fx.channels.design.id;
  await ok(t.as(t.fx.admin).delete(`/streams/${id}`));
  const got = await eventsWithAndWithout(t.fx.member, 'archived_channels', ['stream'], () =>
    ok(t.as(t.fx.admin).patch(`/streams/${id}`, { new_name: 'old design' })),
  );
  assert.deepEqual(got, {
    aware: [
      {
        type: 'stream',
        op: 'update',
        stream_id: id,
        name: 'design',
        property: 'name',
        value: 'old design',
      },
    ],
    unaware: [],
  });
});

test('a user of an archived channel deactivated: its peer_remove only for clients that show it', async () => {
  const id = t.fx.channels.design.id;
  await ok(t.as(t.fx.admin).delete(`/streams/${id}`));
  // member is subscribed to design, with the admin; the admin watches.
  const got = await eventsWithAndWithout(t.fx.admin, 'archived_channels', ['subscription'], () =>
    ok(t.as(t.fx.admin).delete(`/users/${t.fx.member.id}`)),
  );
  const aboutDesign = (events: unknown[]) =>
    events.filter((e) => (e as { stream_ids?: number[] }).stream_ids?.includes(id));
  assert.deepEqual(aboutDesign(got.aware), [
    { type: 'subscription', op: 'peer_remove', stream_ids: [id], user_ids: [t.fx.member.id] },
  ]);
  assert.deepEqual(aboutDesign(got.unaware), []);
  // The channels it still shows are told as before.
  assert.deepEqual(got.unaware.length, got.aware.length - 1, JSON.stringify(got));
});

test('a deactivated group renamed: only clients that show deactivated groups hear of it', async () => {
  const admin = t.as(t.fx.admin);
  const created = await admin.post('/user_groups/create', {
    name: 'Old team',
    description: '',
    members: [t.fx.member.id],
  });
  assert.equal(created.status, 200, created.text);
  const groupId = created.body.group_id as number;
  assert.deepEqual((await admin.post(`/user_groups/${groupId}/deactivate`)).body, SUCCESS);
  const got = await eventsWithAndWithout(
    t.fx.member,
    'include_deactivated_groups',
    ['user_group'],
    () => ok(admin.patch(`/user_groups/${groupId}`, { name: 'Older team' })),
  );
  assert.deepEqual(got, {
    aware: [{ type: 'user_group', op: 'update', group_id: groupId, data: { name: 'Older team' } }],
    unaware: [],
  });
});

test('leaving an archived channel: only clients that show archived channels hear of it', async () => {
  const id = t.fx.channels.design.id;
  await ok(t.as(t.fx.admin).delete(`/streams/${id}`));
  const got = await eventsWithAndWithout(t.fx.member, 'archived_channels', ['subscription'], () =>
    ok(t.as(t.fx.member).delete('/users/me/subscriptions', { subscriptions: ['design'] })),
  );
  assert.deepEqual(got, {
    aware: [
      {
        type: 'subscription',
        op: 'remove',
        subscriptions: [{ name: 'design', stream_id: id }],
      },
    ],
    unaware: [],
  });
});

test('unarchiving: an update for clients that kept the channel, its creation and subscription for the others', async () => {
  const id = t.fx.channels.design.id;
  await ok(t.as(t.fx.admin).delete(`/streams/${id}`));
  const got = await eventsWithAndWithout(
    t.fx.member,
    'archived_channels',
    ['stream', 'subscription'],
    () => ok(t.as(t.fx.admin).patch(`/streams/${id}`, { is_archived: false })),
  );
  const kinds = (events: unknown[]) =>
    events.map((e) => {
      const { type, op, property } = e as Record<string, unknown>;
      return [type, op, property].filter((x) => x !== undefined).join(' ');
    });
  assert.deepEqual(kinds(got.aware), ['stream update is_archived']);
  assert.deepEqual(kinds(got.unaware), ['stream create', 'subscription add']);
});
