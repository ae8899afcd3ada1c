// Event contract of drafts (the user's own clients only) and channel folders (everyone),
// including channels put in folders and drafts dropped when synchronization stops.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestApp } from '../support/app.ts';
import { ALL_VIEWERS, ok, runContract } from './harness.ts';

const draft = (t: TestApp, content: string, extra: Record<string, unknown> = {}) => ({
  type: 'stream',
  to: [t.fx.channels.general.id],
  topic: 'plans',
  content,
  ...extra,
});

async function draftId(t: TestApp, content: string): Promise<number> {
  const row = await t.ctx.db
    .selectFrom('drafts')
    .select('id')
    .where('content', '=', content)
    .executeTakeFirstOrThrow();
  return row.id;
}

async function folderId(t: TestApp, name: string): Promise<number> {
  const row = await t.ctx.db
    .selectFrom('channel_folders')
    .select('id')
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  return row.id;
}

const withDrafts = (t: TestApp) =>
  ok(
    t.as(t.fx.member).post('/drafts', {
      drafts: [draft(t, 'old', { timestamp: 1000 }), draft(t, 'older', { timestamp: 500 })],
    }),
  );

test('POST /drafts: the new drafts reach only the user', async () => {
  await runContract({
    changes: ['member'],
    setup: withDrafts,
    act: (t) =>
      ok(
        t.as(t.fx.member).post('/drafts', {
          drafts: [
            draft(t, 'new'),
            { type: 'private', to: [t.fx.owner.id], topic: '', content: 'dm' },
          ],
        }),
      ),
  });
});

test('PATCH /drafts/{id}: the edit reaches only the user', async () => {
  await runContract({
    changes: ['member'],
    setup: withDrafts,
    act: async (t) =>
      ok(
        t.as(t.fx.member).patch(`/drafts/${await draftId(t, 'older')}`, {
          draft: draft(t, 'edited', { timestamp: 2000 }),
        }),
      ),
  });
});

test('DELETE /drafts/{id}: the removal reaches only the user', async () => {
  await runContract({
    changes: ['member'],
    setup: withDrafts,
    act: async (t) => ok(t.as(t.fx.member).delete(`/drafts/${await draftId(t, 'old')}`)),
  });
});

test('PATCH /settings: stopping draft synchronization empties the drafts', async () => {
  await runContract({
    changes: ['member'],
    setup: withDrafts,
    act: (t) => ok(t.as(t.fx.member).patch('/settings', { enable_drafts_synchronization: false })),
  });
});

const withFolders = async (t: TestApp) => {
  for (const name of ['Engineering', 'Social', 'Old']) {
    await ok(t.as(t.fx.admin).post('/channel_folders/create', { name, description: '' }));
  }
  await ok(
    t.as(t.fx.admin).patch(`/channel_folders/${await folderId(t, 'Old')}`, { is_archived: true }),
  );
};

test('POST /channel_folders/create: everyone hears of the folder', async () => {
  const seen = await runContract({
    changes: ALL_VIEWERS,
    setup: withFolders,
    act: (t) =>
      ok(t.as(t.fx.admin).post('/channel_folders/create', { name: 'New', description: '*hi*' })),
  });
  assert.deepEqual(
    seen.get('guest')!.map((e) => [e.type, e.op]),
    [['channel_folder', 'add']],
  );
});

test('PATCH /channel_folders/{id}: renaming, describing and archiving', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    setup: withFolders,
    act: async (t) =>
      ok(
        t.as(t.fx.admin).patch(`/channel_folders/${await folderId(t, 'Social')}`, {
          name: 'Fun',
          description: 'Games **and** chat',
          is_archived: true,
        }),
      ),
  });
});

test('PATCH /channel_folders/{id}: unarchiving', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    setup: withFolders,
    act: async (t) =>
      ok(
        t
          .as(t.fx.admin)
          .patch(`/channel_folders/${await folderId(t, 'Old')}`, { is_archived: false }),
      ),
  });
});

test('PATCH /channel_folders: reordering', async () => {
  await runContract({
    changes: ALL_VIEWERS,
    setup: withFolders,
    act: async (t) => {
      const order = [
        await folderId(t, 'Old'),
        await folderId(t, 'Engineering'),
        await folderId(t, 'Social'),
      ];
      await ok(t.as(t.fx.admin).patch('/channel_folders', { order }));
    },
  });
});

test('PATCH /streams/{id}: putting a channel in a folder', async () => {
  await runContract({
    // Those who can see the design channel.
    changes: ['owner', 'admin', 'moderator', 'member', 'member2', 'bot'],
    setup: withFolders,
    act: async (t) =>
      ok(
        t.as(t.fx.admin).patch(`/streams/${t.fx.channels.design.id}`, {
          folder_id: await folderId(t, 'Engineering'),
        }),
      ),
  });
});
