// Default channels (POST and DELETE /default_streams) and default channel groups (create,
// rename, describe, add or remove channels, delete), with permissions, errors and events.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { SUCCESS, type ApiResponse } from '../support/client.ts';
import { captureNotices, ids, type NoticeLog } from '../support/notices.ts';
import { assertError } from '../support/channels.ts';
import { ROLE_KEYS } from '../support/fixture.ts';

let t: TestApp;
let bus: NoticeLog;
beforeEach(async () => {
  t = await buildTestApp();
  bus = captureNotices(t);
});
afterEach(async () => {
  await t.close();
});

/** Every active user of the organization. */
const everyone = () =>
  ids(t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member, t.fx.member2, t.fx.guest, t.fx.bot);

const defaults = (streams: number[]) => ({
  event: { type: 'default_streams', default_streams: streams },
  users: everyone(),
});

async function groupId(name: string): Promise<number> {
  const row = await t.ctx.db
    .selectFrom('default_channel_groups')
    .select('id')
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  return row.id;
}

describe('POST and DELETE /default_streams', () => {
  test('an administrator adds and removes default channels; everyone hears of it', async () => {
    const design = t.fx.channels.design.id;
    const general = t.fx.channels.general.id;
    assert.deepEqual(
      (await t.as(t.fx.admin).post('/default_streams', { stream_id: design })).body,
      SUCCESS,
    );
    assert.deepEqual(
      (await t.as(t.fx.owner).post('/default_streams', { stream_id: general })).body,
      SUCCESS,
    );
    assert.deepEqual(await bus.take(), [
      defaults([design]),
      defaults([general, design].sort((a, b) => a - b)),
    ]);
    // Adding one that is already default changes nothing.
    assert.deepEqual(
      (await t.as(t.fx.admin).post('/default_streams', { stream_id: design })).body,
      SUCCESS,
    );
    assert.deepEqual(await bus.take(), []);
    assert.deepEqual(
      (await t.as(t.fx.admin).delete('/default_streams', { stream_id: design })).body,
      SUCCESS,
    );
    assert.deepEqual(await bus.take(), [defaults([general])]);
  });

  for (const role of ROLE_KEYS) {
    if (role === 'owner' || role === 'admin') continue;
    test(`${role}: may not change default channels`, async () => {
      for (const method of ['post', 'delete'] as const) {
        const client = t.as(t.fx[role]);
        const params = { stream_id: t.fx.channels.design.id };
        const res: ApiResponse =
          method === 'post'
            ? await client.post('/default_streams', params)
            : await client.delete('/default_streams', params);
        if (role === 'deactivated') {
          assert.equal(res.status, 401);
          continue;
        }
        assertError(res, 'Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
      }
    });
  }

  test('private, unknown and archived channels', async () => {
    assertError(
      await t.as(t.fx.owner).post('/default_streams', { stream_id: t.fx.channels.private.id }),
      'Private channels cannot be made default.',
    );
    // A private channel the administrator is not in is not one they may read.
    assertError(
      await t.as(t.fx.admin).post('/default_streams', { stream_id: t.fx.channels.secret.id }),
      'Invalid channel ID',
    );
    assertError(
      await t.as(t.fx.admin).post('/default_streams', { stream_id: 99999 }),
      'Invalid channel ID',
    );
    assertError(
      await t.as(t.fx.admin).post('/default_streams', { stream_id: t.fx.channels.otherGeneral.id }),
      'Invalid channel ID',
    );
    await t.as(t.fx.admin).delete(`/streams/${t.fx.channels.design.id}`);
    assertError(
      await t.as(t.fx.admin).post('/default_streams', { stream_id: t.fx.channels.design.id }),
      'Invalid channel ID',
    );
    assertError(
      await t.as(t.fx.admin).post('/default_streams', {}),
      "Missing 'stream_id' argument",
      'REQUEST_VARIABLE_MISSING',
      { var_name: 'stream_id' },
    );
    assertError(
      await t.as(t.fx.admin).post('/default_streams', { stream_id: 'design' }),
      'stream_id is not an integer',
    );
  });
});

describe('default channel groups', () => {
  const create = (params: Record<string, unknown>) =>
    t.as(t.fx.admin).post('/default_stream_groups/create', params);

  test('create: channels listed by name; everyone hears of it', async () => {
    const res = await create({
      group_name: 'Starters',
      description: 'For newcomers',
      stream_names: ['general', 'design', 'announce'],
    });
    assert.deepEqual(res.body, SUCCESS, res.text);
    const id = await groupId('Starters');
    const c = t.fx.channels;
    assert.deepEqual(await bus.take(), [
      {
        event: {
          type: 'default_stream_groups',
          default_stream_groups: [
            {
              name: 'Starters',
              description: 'For newcomers',
              id,
              streams: [c.announce.id, c.design.id, c.general.id],
            },
          ],
        },
        users: everyone(),
      },
    ]);
  });

  test('create: errors', async () => {
    await t.as(t.fx.admin).post('/default_streams', { stream_id: t.fx.channels.general.id });
    assertError(
      await create({ group_name: 'g', description: '', stream_names: ['general'] }),
      "'general' is a default channel and cannot be added to 'g'",
    );
    assertError(
      await create({ group_name: 'g', description: '', stream_names: ['nope'] }),
      "Invalid channel name 'nope'",
    );
    assertError(
      await create({ group_name: 'g', description: '', stream_names: ['secret'] }),
      "Invalid channel name 'secret'",
    );
    // Archiving takes a channel out of every group, so an archived one is not taken in.
    await t.as(t.fx.admin).delete(`/streams/${t.fx.channels.design.id}`);
    assertError(
      await create({ group_name: 'g', description: '', stream_names: ['design'] }),
      "Invalid channel name 'design'",
    );
    assertError(
      await create({ group_name: ' ', description: '', stream_names: [] }),
      "Invalid default channel group name ' '",
    );
    assertError(
      await create({ group_name: 'x'.repeat(61), description: '', stream_names: [] }),
      'Default channel group name too long (limit: 60 characters)',
    );
    assert.deepEqual(
      (await create({ group_name: 'g', description: '', stream_names: [] })).body,
      SUCCESS,
    );
    assertError(
      await create({ group_name: 'g', description: '', stream_names: [] }),
      "Default channel group 'g' already exists",
    );
    assertError(
      await t.as(t.fx.member).post('/default_stream_groups/create', {
        group_name: 'h',
        description: '',
        stream_names: [],
      }),
      'Must be an organization administrator',
      'UNAUTHORIZED_PRINCIPAL',
    );
  });

  test('rename and describe: one event per change', async () => {
    await create({ group_name: 'a', description: 'first', stream_names: ['design'] });
    const id = await groupId('a');
    await bus.take();
    const res = await t
      .as(t.fx.admin)
      .patch(`/default_stream_groups/${id}`, { new_group_name: 'b', new_description: 'second' });
    assert.deepEqual(res.body, SUCCESS, res.text);
    const group = (name: string, description: string) => ({
      event: {
        type: 'default_stream_groups',
        default_stream_groups: [{ name, description, id, streams: [t.fx.channels.design.id] }],
      },
      users: everyone(),
    });
    assert.deepEqual(await bus.take(), [group('b', 'first'), group('b', 'second')]);
    const patch = (params: Record<string, unknown>, groupIdValue = id) =>
      t.as(t.fx.admin).patch(`/default_stream_groups/${groupIdValue}`, params);
    assertError(await patch({}), 'You must pass "new_description" or "new_group_name".');
    assertError(
      await patch({ new_group_name: 'b' }),
      "This default channel group is already named 'b'",
    );
    await create({ group_name: 'c', description: '', stream_names: [] });
    assertError(await patch({ new_group_name: 'c' }), "Default channel group 'c' already exists");
    assertError(
      await patch({ new_group_name: 'x' }, 99999),
      "Default channel group with id '99999' does not exist.",
    );
  });

  test('add and remove channels', async () => {
    await create({ group_name: 'g', description: '', stream_names: ['design'] });
    const id = await groupId('g');
    await bus.take();
    const streams = (op: string, names: string[]) =>
      t.as(t.fx.admin).patch(`/default_stream_groups/${id}/streams`, { op, stream_names: names });
    assert.deepEqual((await streams('add', ['general'])).body, SUCCESS);
    const c = t.fx.channels;
    const group = (channelIds: number[]) => ({
      event: {
        type: 'default_stream_groups',
        default_stream_groups: [{ name: 'g', description: '', id, streams: channelIds }],
      },
      users: everyone(),
    });
    assert.deepEqual(await bus.take(), [group([c.design.id, c.general.id])]);
    assert.deepEqual((await streams('remove', ['design'])).body, SUCCESS);
    assert.deepEqual(await bus.take(), [group([c.general.id])]);
    assertError(
      await streams('add', ['general']),
      "Channel 'general' is already present in default channel group 'g'",
    );
    assertError(
      await streams('remove', ['design']),
      "Channel 'design' is not present in default channel group 'g'",
    );
    assertError(
      await streams('swap', ['design']),
      'Invalid value for "op". Specify one of "add" or "remove".',
    );
    await t.as(t.fx.admin).post('/default_streams', { stream_id: c.announce.id });
    assertError(
      await streams('add', ['announce']),
      "'announce' is a default channel and cannot be added to 'g'",
    );
    await t.as(t.fx.admin).delete(`/streams/${c.private.id}`);
    assertError(await streams('add', ['private']), "Invalid channel name 'private'");
  });

  test('delete', async () => {
    await create({ group_name: 'g', description: '', stream_names: [] });
    const id = await groupId('g');
    await bus.take();
    assertError(
      await t.as(t.fx.moderator).delete(`/default_stream_groups/${id}`),
      'Must be an organization administrator',
      'UNAUTHORIZED_PRINCIPAL',
    );
    assert.deepEqual((await t.as(t.fx.admin).delete(`/default_stream_groups/${id}`)).body, SUCCESS);
    assert.deepEqual(await bus.take(), [
      { event: { type: 'default_stream_groups', default_stream_groups: [] }, users: everyone() },
    ]);
    assertError(
      await t.as(t.fx.admin).delete(`/default_stream_groups/${id}`),
      `Default channel group with id '${id}' does not exist.`,
    );
  });
});
