// Channel folders: POST /channel_folders/create, GET /channel_folders, PATCH
// /channel_folders (reorder) and PATCH /channel_folders/{id} (name, description,
// archiving), administrators only, with the channel_folder events to everyone, the
// register section, and channels put in folders through folder_id.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { as, assertUnauthorized, EVERY_CALLER } from '../support/bots.ts';
import { SUCCESS } from '../support/client.ts';
import { registerQueue } from '../support/events.ts';
import type { FixtureUser } from '../support/fixture.ts';
import { captureNotices, ids, type NoticeLog } from '../support/notices.ts';
import { assertError, T0, useClock } from '../support/messages.ts';
import { channelRow } from '../support/channels.ts';

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

const everyone = () =>
  ids(t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member, t.fx.member2, t.fx.guest, t.fx.bot);
const badRequest = (res: { status: number; body: unknown }, msg: string) =>
  assertError(res as never, 400, 'BAD_REQUEST', msg);
const mustBeAdmin = (res: { status: number; body: unknown }) =>
  assertError(res as never, 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');

const createFolder = (who: FixtureUser, name: string, description = '') =>
  t.as(who).post('/channel_folders/create', { name, description });
const updateFolder = (who: FixtureUser, id: number, params: Record<string, unknown>) =>
  t.as(who).patch(`/channel_folders/${id}`, params);

async function newFolder(name: string, description = ''): Promise<number> {
  const res = await createFolder(t.fx.admin, name, description);
  assert.equal(res.status, 200, res.text);
  return res.body.channel_folder_id as number;
}

/** A folder as the API shows it, created by the admin at T0 with its id as its position. */
const folder = (id: number, name: string, fields: Record<string, unknown> = {}) => ({
  id,
  name,
  description: '',
  rendered_description: '',
  order: id,
  date_created: T0,
  creator_id: t.fx.admin.id,
  is_archived: false,
  ...fields,
});

const listFolders = async (who: FixtureUser, params: Record<string, unknown> = {}) => {
  const res = await t.as(who).get('/channel_folders', params);
  assert.equal(res.status, 200, res.text);
  return res.body;
};

const folderEvent = (event: Record<string, unknown>) => ({
  event: { type: 'channel_folder', ...event },
  users: everyone(),
});

describe('POST /channel_folders/create and GET /channel_folders', () => {
  test('an administrator creates folders; everyone hears of it and may list them', async () => {
    const res = await createFolder(t.fx.admin, 'Engineering', 'Talk about **design**');
    assert.equal(res.status, 200, res.text);
    const id = res.body.channel_folder_id as number;
    assert.deepEqual(res.body, { ...SUCCESS, channel_folder_id: id });
    const engineering = folder(id, 'Engineering', {
      description: 'Talk about **design**',
      rendered_description: '<p>Talk about <strong>design</strong></p>',
    });
    assert.deepEqual(await log.take(), [folderEvent({ op: 'add', channel_folder: engineering })]);
    const second = await newFolder('Social');
    for (const who of [t.fx.guest, t.fx.member, t.fx.bot]) {
      assert.deepEqual(await listFolders(who), {
        ...SUCCESS,
        channel_folders: [engineering, folder(second, 'Social')],
      });
    }
  });

  test('names: not empty, printable, unique regardless of case, within the limits', async () => {
    await newFolder('Engineering');
    badRequest(await createFolder(t.fx.admin, ''), "Channel folder name can't be empty.");
    badRequest(await createFolder(t.fx.admin, '   '), "Channel folder name can't be empty.");
    badRequest(await createFolder(t.fx.admin, 'ENGINEERING'), 'Channel folder name already in use');
    badRequest(
      await createFolder(t.fx.admin, 'bad\u0007name'),
      'Invalid character in channel folder name, at position 4.',
    );
    badRequest(
      await createFolder(t.fx.admin, 'n'.repeat(61)),
      'name is too long (limit: 60 characters)',
    );
    badRequest(
      await createFolder(t.fx.admin, 'Long', 'd'.repeat(1025)),
      'description is too long (limit: 1024 characters)',
    );
    assert.equal((await createFolder(t.fx.admin, 'n'.repeat(60), 'd'.repeat(1024))).status, 200);
    assert.deepEqual(
      (await t.as(t.fx.admin).post('/channel_folders/create', { name: 'No description' })).body,
      {
        result: 'error',
        msg: "Missing 'description' argument",
        code: 'REQUEST_VARIABLE_MISSING',
        var_name: 'description',
      },
    );
  });

  test('archived folders are listed only when asked for', async () => {
    const a = await newFolder('Active');
    const b = await newFolder('Old');
    assert.deepEqual((await updateFolder(t.fx.admin, b, { is_archived: true })).body, SUCCESS);
    assert.deepEqual(await listFolders(t.fx.member), {
      ...SUCCESS,
      channel_folders: [folder(a, 'Active')],
    });
    assert.deepEqual(await listFolders(t.fx.member, { include_archived: false }), {
      ...SUCCESS,
      channel_folders: [folder(a, 'Active')],
    });
    assert.deepEqual(await listFolders(t.fx.member, { include_archived: true }), {
      ...SUCCESS,
      channel_folders: [folder(a, 'Active'), folder(b, 'Old', { is_archived: true })],
    });
    badRequest(
      await t.as(t.fx.member).get('/channel_folders', { include_archived: 'maybe' }),
      'include_archived is not a boolean',
    );
    // Register holds all of them, archived ones included.
    const body = await registerQueue(t.as(t.fx.guest), { fetch_event_types: ['channel_folders'] });
    assert.deepEqual(body.channel_folders, [
      folder(a, 'Active'),
      folder(b, 'Old', { is_archived: true }),
    ]);
  });

  test("another organization's folders are not listed", async () => {
    await newFolder('Ours');
    const other = { ...t.fx.otherOwner, host: 'other.parley.test' };
    assert.deepEqual((await t.as(other).get('/channel_folders')).body, {
      ...SUCCESS,
      channel_folders: [],
    });
  });
});

describe('PATCH /channel_folders/{id}', () => {
  test('rename, describe, archive and unarchive: one event per changed field', async () => {
    const id = await newFolder('Engineering');
    await log.take();
    const update = (data: Record<string, unknown>) =>
      folderEvent({ op: 'update', channel_folder_id: id, data });
    assert.deepEqual(
      (
        await updateFolder(t.fx.owner, id, {
          name: 'Product',
          description: 'Ship *it*',
          is_archived: true,
        })
      ).body,
      SUCCESS,
    );
    assert.deepEqual(await log.take(), [
      update({ name: 'Product' }),
      update({ description: 'Ship *it*', rendered_description: '<p>Ship <em>it</em></p>' }),
      update({ is_archived: true }),
    ]);
    assert.deepEqual((await listFolders(t.fx.member, { include_archived: true })).channel_folders, [
      folder(id, 'Product', {
        description: 'Ship *it*',
        rendered_description: '<p>Ship <em>it</em></p>',
        is_archived: true,
      }),
    ]);
    // Values it already has change nothing.
    assert.deepEqual(
      (await updateFolder(t.fx.admin, id, { name: 'Product', is_archived: true })).body,
      SUCCESS,
    );
    assert.deepEqual(await log.take(), []);
    assert.deepEqual((await updateFolder(t.fx.admin, id, { is_archived: false })).body, SUCCESS);
    assert.deepEqual(await log.take(), [update({ is_archived: false })]);
    assert.deepEqual((await updateFolder(t.fx.admin, id, { description: '' })).body, SUCCESS);
    assert.deepEqual(await log.take(), [update({ description: '', rendered_description: '' })]);
  });

  test('errors: unknown folders, empty or taken names, limits', async () => {
    const id = await newFolder('Engineering');
    await newFolder('Social');
    await log.take();
    badRequest(await updateFolder(t.fx.admin, 99999, { name: 'X' }), 'Invalid channel folder ID');
    const other = { ...t.fx.otherOwner, host: 'other.parley.test' };
    const res = await t
      .as(other)
      .post('/channel_folders/create', { name: 'Theirs', description: '' });
    assert.equal(res.status, 200, res.text);
    // Only the other organization hears of its folder.
    assert.deepEqual(
      (await log.take()).map((s) => s.users),
      [[t.fx.otherOwner.id]],
    );
    badRequest(
      await updateFolder(t.fx.admin, res.body.channel_folder_id as number, { name: 'Mine' }),
      'Invalid channel folder ID',
    );
    badRequest(
      await updateFolder(t.fx.admin, id, { name: '' }),
      "Channel folder name can't be empty.",
    );
    badRequest(
      await updateFolder(t.fx.admin, id, { name: 'social' }),
      'Channel folder name already in use',
    );
    badRequest(
      await updateFolder(t.fx.admin, id, { name: 'n'.repeat(61) }),
      'name is too long (limit: 60 characters)',
    );
    badRequest(
      await updateFolder(t.fx.admin, id, { description: 'd'.repeat(1025) }),
      'description is too long (limit: 1024 characters)',
    );
    badRequest(
      await updateFolder(t.fx.admin, id, { is_archived: 'yes' }),
      'is_archived is not a boolean',
    );
    badRequest(
      await t.as(t.fx.admin).patch('/channel_folders/abc', { name: 'X' }),
      'channel_folder_id is not an integer',
    );
    // A refused request changes nothing, even the fields that were fine.
    badRequest(
      await updateFolder(t.fx.admin, id, { description: 'new', name: 'Social' }),
      'Channel folder name already in use',
    );
    assert.deepEqual(await log.take(), []);
  });

  test('a folder holding channels, archived ones too, cannot be archived', async () => {
    const id = await newFolder('Engineering');
    const design = t.fx.channels.design.id;
    assert.deepEqual(
      (await t.as(t.fx.admin).patch(`/streams/${design}`, { folder_id: id })).body,
      SUCCESS,
    );
    const refusal = 'You need to remove all the channels from this folder to archive it.';
    badRequest(await updateFolder(t.fx.admin, id, { is_archived: true }), refusal);
    assert.deepEqual((await t.as(t.fx.admin).delete(`/streams/${design}`)).body, SUCCESS);
    badRequest(await updateFolder(t.fx.admin, id, { is_archived: true }), refusal);
    assert.deepEqual(
      (await t.as(t.fx.admin).patch(`/streams/${design}`, { folder_id: null })).body,
      SUCCESS,
    );
    await log.take();
    assert.deepEqual((await updateFolder(t.fx.admin, id, { is_archived: true })).body, SUCCESS);
    assert.deepEqual(await log.take(), [
      folderEvent({ op: 'update', channel_folder_id: id, data: { is_archived: true } }),
    ]);
  });
});

describe('PATCH /channel_folders (reorder)', () => {
  test('a full list sets every position; anything else is refused', async () => {
    const a = await newFolder('A');
    const b = await newFolder('B');
    const c = await newFolder('C');
    assert.deepEqual((await updateFolder(t.fx.admin, b, { is_archived: true })).body, SUCCESS);
    await log.take();
    for (const order of [[c, a], [c, a, b, b], [c, a, b, 99999], []]) {
      badRequest(
        await t.as(t.fx.admin).patch('/channel_folders', { order }),
        'Invalid order mapping.',
      );
    }
    assert.deepEqual(await log.take(), []);
    assert.deepEqual(
      (await t.as(t.fx.admin).patch('/channel_folders', { order: [c, a, b] })).body,
      SUCCESS,
    );
    assert.deepEqual(await log.take(), [folderEvent({ op: 'reorder', order: [c, a, b] })]);
    assert.deepEqual((await listFolders(t.fx.member, { include_archived: true })).channel_folders, [
      folder(c, 'C', { order: 0 }),
      folder(a, 'A', { order: 1 }),
      folder(b, 'B', { order: 2, is_archived: true }),
    ]);
    // A new folder comes last.
    const d = await newFolder('D');
    assert.deepEqual(
      ((await listFolders(t.fx.member)).channel_folders as Array<{ id: number }>).map((f) => f.id),
      [c, a, d],
    );
    badRequest(
      await t.as(t.fx.admin).patch('/channel_folders', { order: 'x' }),
      'order is not valid JSON',
    );
  });
});

describe('permissions', () => {
  for (const who of EVERY_CALLER) {
    test(`${who}: ${['owner', 'admin'].includes(who) ? 'manages' : 'may not manage'} folders`, async () => {
      const existing = await newFolder('Existing');
      await log.take();
      const client = as(t, who);
      const created = await client.post('/channel_folders/create', {
        name: 'New',
        description: '',
      });
      const updated = await client.patch(`/channel_folders/${existing}`, { name: 'Renamed' });
      const reordered = await client.patch('/channel_folders', { order: [existing] });
      const listed = await client.get('/channel_folders');
      if (assertUnauthorized(who, created)) {
        for (const res of [updated, reordered, listed]) assertUnauthorized(who, res);
        assert.deepEqual(await log.take(), []);
        return;
      }
      assert.equal(listed.status, 200, listed.text);
      if (who === 'owner' || who === 'admin') {
        assert.equal(created.status, 200, created.text);
        assert.deepEqual(updated.body, SUCCESS);
        // The new folder was not in the list.
        badRequest(reordered, 'Invalid order mapping.');
        assert.deepEqual(
          (await log.take()).map((s) => s.event.op),
          ['add', 'update'],
        );
        return;
      }
      for (const res of [created, updated, reordered]) mustBeAdmin(res);
      assert.deepEqual(await log.take(), []);
    });
  }
});

describe('channels in folders (folder_id)', () => {
  test('PATCH /streams/{id} puts a channel in a folder and takes it out', async () => {
    const id = await newFolder('Engineering');
    await log.take();
    const design = t.fx.channels.design;
    const streamUpdate = (value: number | null) => ({
      type: 'stream',
      op: 'update',
      stream_id: design.id,
      name: design.name,
      property: 'folder_id',
      value,
    });
    assert.deepEqual(
      (await t.as(t.fx.admin).patch(`/streams/${design.id}`, { folder_id: id })).body,
      SUCCESS,
    );
    const sent = await log.take();
    assert.deepEqual(
      sent.map((s) => s.event),
      [streamUpdate(id)],
    );
    assert.equal((await channelRow(t, design.id)).folder_id, id);
    assert.deepEqual(
      (await t.as(t.fx.admin).patch(`/streams/${design.id}`, { folder_id: null })).body,
      SUCCESS,
    );
    assert.deepEqual(
      (await log.take()).map((s) => s.event),
      [streamUpdate(null)],
    );
    assert.equal((await channelRow(t, design.id)).folder_id, null);
  });

  test('unknown, foreign and archived folders are refused', async () => {
    const archived = await newFolder('Old');
    await updateFolder(t.fx.admin, archived, { is_archived: true });
    const other = { ...t.fx.otherOwner, host: 'other.parley.test' };
    const res = await t
      .as(other)
      .post('/channel_folders/create', { name: 'Theirs', description: '' });
    const foreign = res.body.channel_folder_id as number;
    await log.take();
    const design = t.fx.channels.design.id;
    for (const folderId of [99999, archived, foreign]) {
      badRequest(
        await t.as(t.fx.admin).patch(`/streams/${design}`, { folder_id: folderId }),
        'Invalid channel folder ID',
      );
      badRequest(
        await t.as(t.fx.member).post('/users/me/subscriptions', {
          subscriptions: [{ name: 'fresh' }],
          folder_id: folderId,
        }),
        'Invalid channel folder ID',
      );
    }
    assert.deepEqual(await log.take(), []);
  });

  test('a channel created with folder_id starts in the folder', async () => {
    const id = await newFolder('Engineering');
    await log.take();
    const res = await t.as(t.fx.member).post('/users/me/subscriptions', {
      subscriptions: [{ name: 'fresh' }],
      folder_id: id,
    });
    assert.equal(res.status, 200, res.text);
    const created = (await log.take()).find(
      (s) => s.event.type === 'stream' && s.event.op === 'create',
    );
    const streams = (created?.event as Record<string, unknown>).streams as Array<
      Record<string, unknown>
    >;
    assert.equal(streams[0].name, 'fresh');
    assert.equal(streams[0].folder_id, id);
    const row = await t.ctx.db
      .selectFrom('channels')
      .select('folder_id')
      .where('name', '=', 'fresh')
      .executeTakeFirstOrThrow();
    assert.equal(row.folder_id, id);
    // An existing channel named in the request keeps its folder.
    assert.equal(
      (
        await t.as(t.fx.member).post('/users/me/subscriptions', {
          subscriptions: [{ name: 'design' }],
          folder_id: id,
        })
      ).status,
      200,
    );
    assert.equal((await channelRow(t, t.fx.channels.design.id)).folder_id, null);
  });
});
