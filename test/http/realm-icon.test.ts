// POST and DELETE /realm/icon, and the icon file served at /user_avatars/<realm>/realm/icon.png:
// who may change it, what is accepted, the realm event, the URLs in server_settings and
// register, and the served bytes and headers.
import { after, afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { diskFileStore, memoryFileStore, type FileStore } from '../../src/infra/files.ts';
import { getRealmById, updateRealm } from '../../src/store/realms.ts';
import { buildTestApp, type TestApp } from '../support/app.ts';
import type { Client } from '../support/client.ts';
import { registerQueue } from '../support/events.ts';
import {
  animated,
  COLORS,
  noisePng,
  pixel,
  pngClaiming,
  solidJpeg,
  solidPng,
} from '../support/images.ts';
import { captureNotices, ids, type NoticeLog } from '../support/notices.ts';
import { ALL_VIEWERS, ok, runContract } from '../contract/harness.ts';
import { callerFor, err, EVERY_CALLER, OK, UNAUTHORIZED, type Who } from '../support/callers.ts';

let t: TestApp;
let bus: NoticeLog;
let files: ReturnType<typeof memoryFileStore>;
beforeEach(async () => {
  files = memoryFileStore();
  t = await buildTestApp({ files });
  bus = captureNotices(t);
});
afterEach(async () => {
  await t.close();
});

const as = (who: Who): Client => callerFor(t, who);
const MUST_BE_ADMIN = err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
const ONE_ICON = err('You must upload exactly one icon.');
const NOT_FOUND = err('Not Found');
const everyone = () =>
  ids(t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member, t.fx.member2, t.fx.guest, t.fx.bot);

const uploadedUrl = (version: number, realmId = t.fx.realm.id) =>
  `/user_avatars/${realmId}/realm/icon.png?version=${version}`;
const generatedUrl = (version: number, realm = t.fx.realm) =>
  `https://secure.gravatar.com/avatar/${createHash('md5')
    .update(`realm-${realm.id}-${realm.string_id}`)
    .digest('hex')}?d=identicon&version=${version}`;
const iconEvent = (iconUrl: string, source: 'U' | 'G', users = everyone()) => ({
  event: {
    type: 'realm',
    op: 'update_dict',
    property: 'icon',
    data: { icon_url: iconUrl, icon_source: source },
  },
  users,
});

type Part = { field: string; filename: string; contentType: string; data: Buffer };
const part = (data: Buffer, filename = 'icon.png', contentType = 'image/png'): Part => ({
  field: 'file',
  filename,
  contentType,
  data,
});
const upload = (client: Client, ...parts: Part[]) =>
  client.multipart('POST', '/realm/icon', {}, parts);
const fetchIcon = (url: string, headers: Record<string, string> = {}) =>
  t.as(null).inject({ method: 'GET', url, headers });

async function iconState(realmId = t.fx.realm.id) {
  const realm = (await getRealmById(t.ctx.db, realmId))!;
  return { icon_source: realm.icon_source, icon_version: realm.icon_version };
}
const iconKey = (version: number, realmId = t.fx.realm.id) =>
  `realms/${realmId}/icon-${version}.png`;

/** Fails unless the bytes are a 100×100 single-frame PNG. */
async function assertIconPng(bytes: Buffer): Promise<void> {
  const meta = await sharp(bytes).metadata();
  assert.deepEqual(
    { format: meta.format, width: meta.width, height: meta.height, pages: meta.pages ?? 1 },
    { format: 'png', width: 100, height: 100, pages: 1 },
  );
}

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'",
};

describe('POST /realm/icon', () => {
  test('an administrator uploads a PNG: a 100×100 PNG is served at the new versioned URL', async () => {
    const res = await upload(as('admin'), part(await solidPng(40, 30, COLORS.RED)));
    assert.deepEqual(res.body, { ...OK, icon_url: uploadedUrl(2) });
    assert.deepEqual(await bus.take(), [iconEvent(uploadedUrl(2), 'U')]);
    assert.deepEqual(await iconState(), { icon_source: 'U', icon_version: 2 });
    assert.deepEqual(files.keys(), [iconKey(2)]);

    const served = await fetchIcon(uploadedUrl(2));
    assert.equal(served.statusCode, 200);
    assert.deepEqual(
      {
        type: served.headers['content-type'],
        nosniff: served.headers['x-content-type-options'],
        csp: served.headers['content-security-policy'],
        cache: served.headers['cache-control'],
        etag: served.headers['etag'],
      },
      {
        type: 'image/png',
        nosniff: SECURITY_HEADERS['x-content-type-options'],
        csp: SECURITY_HEADERS['content-security-policy'],
        cache: 'public, max-age=31536000, immutable',
        etag: `"realm-icon-${t.fx.realm.id}-2"`,
      },
    );
    await assertIconPng(served.rawPayload);
    assert.deepEqual(await pixel(served.rawPayload, 50, 50), COLORS.RED);
  });

  test('JPEG and animated GIF icons are stored as still 100×100 PNGs; the old file goes', async () => {
    const inputs: Array<[Part, string]> = [
      [part(await solidJpeg(300, 200, COLORS.BLUE), 'photo.jpg', 'image/jpeg'), 'b'],
      [part(await animated(64, 64, [COLORS.GREEN, COLORS.RED]), 'anim.gif', 'image/gif'), 'g'],
      // The client's name and type for the file do not matter, only its bytes.
      [part(await solidPng(10, 10, COLORS.RED), 'notes.txt', 'text/plain'), 'r'],
    ];
    let version = 1;
    for (const [file, color] of inputs) {
      version++;
      const res = await upload(as('owner'), file);
      assert.deepEqual(res.body, { ...OK, icon_url: uploadedUrl(version) }, file.filename);
      assert.deepEqual(await bus.take(), [iconEvent(uploadedUrl(version), 'U')]);
      assert.deepEqual(files.keys(), [iconKey(version)]);
      const served = await fetchIcon(uploadedUrl(version));
      assert.equal(served.headers['content-type'], 'image/png');
      await assertIconPng(served.rawPayload);
      const center = await pixel(served.rawPayload, 50, 50);
      const strongest = (['r', 'g', 'b'] as const).reduce((a, k) =>
        center[k] > center[a] ? k : a,
      );
      assert.equal(strongest, color, file.filename);
    }
  });

  test('a valid image over 1 MiB (the form body limit) is accepted up to the icon limit', async () => {
    const big = await noisePng(700, 700);
    assert.ok(big.length > 1024 * 1024 && big.length < 5 * 1024 * 1024, String(big.length));
    const res = await upload(as('admin'), part(big));
    assert.deepEqual(res.body, { ...OK, icon_url: uploadedUrl(2) });
  });

  test('server_settings and register show the uploaded icon, then the generated one', async () => {
    const settings = async () => (await t.as(null).get('/server_settings')).body.realm_icon;
    const snapshot = async () => {
      const body = await registerQueue(as('member'), { fetch_event_types: ['realm'] });
      return { url: body.realm_icon_url, source: body.realm_icon_source };
    };
    assert.equal(await settings(), generatedUrl(1));
    assert.deepEqual(await snapshot(), { url: generatedUrl(1), source: 'G' });

    await upload(as('admin'), part(await solidPng(8, 8)));
    assert.equal(await settings(), uploadedUrl(2));
    assert.deepEqual(await snapshot(), { url: uploadedUrl(2), source: 'U' });
    // The URL clients are given is the one that serves the icon.
    assert.equal((await fetchIcon(String(await settings()))).statusCode, 200);

    await as('admin').delete('/realm/icon');
    assert.equal(await settings(), generatedUrl(3));
    assert.deepEqual(await snapshot(), { url: generatedUrl(3), source: 'G' });
  });

  test('who may upload: owners and administrators', async () => {
    const png = await solidPng(20, 20);
    let version = 1;
    for (const who of EVERY_CALLER) {
      const res = await upload(as(who), part(png));
      if (who === 'owner' || who === 'admin') {
        version++;
        assert.deepEqual(
          { status: res.status, body: res.body },
          {
            status: 200,
            body: { ...OK, icon_url: uploadedUrl(version) },
          },
          who,
        );
        assert.deepEqual(await bus.take(), [iconEvent(uploadedUrl(version), 'U')], who);
      } else {
        const unauthorized = UNAUTHORIZED[who];
        assert.deepEqual(
          { status: res.status, body: res.body },
          { status: unauthorized ? 401 : 400, body: unauthorized ?? MUST_BE_ADMIN },
          who,
        );
        assert.deepEqual(await bus.take(), [], who);
      }
    }
    assert.deepEqual(await iconState(), { icon_source: 'U', icon_version: 3 });
    assert.deepEqual(files.keys(), [iconKey(3)]);
  });

  const UNDECODABLE = err('Could not decode image; did you upload an image file?');
  const refusals: Array<[string, () => Promise<Part[]>, number, Record<string, unknown>]> = [
    ['no file', async () => [], 400, ONE_ICON],
    [
      'two files',
      async () => [part(await solidPng(4, 4)), part(await solidPng(4, 4), 'second.png')],
      400,
      ONE_ICON,
    ],
    [
      'a file over 5 MiB',
      async () => [part(Buffer.concat([await solidPng(4, 4), Buffer.alloc(5 * 1024 * 1024)]))],
      413,
      err('Uploaded file is larger than the allowed limit of 5 MiB'),
    ],
    [
      'a file of exactly 5 MiB that is no image',
      async () => [part(Buffer.alloc(5 * 1024 * 1024, 0x20))],
      400,
      err('Invalid image format'),
    ],
    [
      'a truncated PNG',
      async () => {
        const whole = await noisePng(200, 200);
        return [part(whole.subarray(0, Math.floor(whole.length / 2)))];
      },
      400,
      UNDECODABLE,
    ],
    [
      'a PNG cut inside its header',
      async () => [part((await solidPng(9, 9)).subarray(0, 20))],
      400,
      UNDECODABLE,
    ],
    [
      'a text file called icon.png sent as image/png',
      async () => [part(Buffer.from('Not an image at all.\n'))],
      400,
      err('Invalid image format'),
    ],
    [
      'an SVG',
      async () => [
        part(
          Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
          'icon.svg',
          'image/svg+xml',
        ),
      ],
      400,
      err('Invalid image format'),
    ],
    [
      'a PNG header claiming 100000×100000 pixels',
      async () => [part(pngClaiming(100_000, 100_000))],
      400,
      err('Image size exceeds limit.'),
    ],
  ];
  for (const [label, parts, status, body] of refusals) {
    test(`refused: ${label}; nothing changes`, async () => {
      const res = await upload(as('admin'), ...(await parts()));
      assert.deepEqual({ status: res.status, body: res.body }, { status, body });
      assert.deepEqual(await iconState(), { icon_source: 'G', icon_version: 1 });
      assert.deepEqual(await bus.take(), []);
      assert.deepEqual(files.keys(), []);
    });
  }

  test('refused: a form-encoded request, or multipart with fields only', async () => {
    const plain = await as('admin').post('/realm/icon');
    assert.deepEqual({ status: plain.status, body: plain.body }, { status: 400, body: ONE_ICON });
    const fieldsOnly = await as('admin').multipart('POST', '/realm/icon', { icon: 'x' });
    assert.deepEqual(
      { status: fieldsOnly.status, body: fieldsOnly.body },
      { status: 400, body: ONE_ICON },
    );
    assert.deepEqual(await iconState(), { icon_source: 'G', icon_version: 1 });
  });

  test("another organization's icon is its own", async () => {
    const other = t.as({ ...t.fx.otherOwner, host: 'other.parley.test' });
    const res = await upload(other, part(await solidPng(30, 30)));
    assert.deepEqual(res.body, { ...OK, icon_url: uploadedUrl(2, t.fx.other.id) });
    assert.deepEqual(await bus.take(), [
      iconEvent(uploadedUrl(2, t.fx.other.id), 'U', [t.fx.otherOwner.id]),
    ]);
    assert.deepEqual(await iconState(), { icon_source: 'G', icon_version: 1 });
    assert.equal((await fetchIcon(uploadedUrl(2, t.fx.other.id))).statusCode, 200);
    assert.equal((await fetchIcon(uploadedUrl(2))).statusCode, 404);
  });
});

describe('DELETE /realm/icon', () => {
  test('back to the generated icon; the uploaded file is deleted', async () => {
    await upload(as('admin'), part(await solidPng(20, 20)));
    await bus.take();
    const res = await as('owner').delete('/realm/icon');
    assert.deepEqual(res.body, { ...OK, icon_url: generatedUrl(3) });
    assert.deepEqual(await bus.take(), [iconEvent(generatedUrl(3), 'G')]);
    assert.deepEqual(await iconState(), { icon_source: 'G', icon_version: 3 });
    assert.deepEqual(files.keys(), []);
    const served = await fetchIcon(uploadedUrl(2));
    assert.deepEqual(
      { status: served.statusCode, body: served.json() },
      {
        status: 404,
        body: NOT_FOUND,
      },
    );
  });

  test('without an uploaded icon it still advances the version, as the reference does', async () => {
    const res = await as('admin').delete('/realm/icon');
    assert.deepEqual(res.body, { ...OK, icon_url: generatedUrl(2) });
    assert.deepEqual(await bus.take(), [iconEvent(generatedUrl(2), 'G')]);
    assert.deepEqual(await iconState(), { icon_source: 'G', icon_version: 2 });
  });

  test('who may delete: owners and administrators', async () => {
    let version = 1;
    for (const who of EVERY_CALLER) {
      const res = await as(who).delete('/realm/icon');
      if (who === 'owner' || who === 'admin') {
        version++;
        assert.deepEqual(
          { status: res.status, body: res.body },
          {
            status: 200,
            body: { ...OK, icon_url: generatedUrl(version) },
          },
          who,
        );
        assert.deepEqual(await bus.take(), [iconEvent(generatedUrl(version), 'G')], who);
      } else {
        const unauthorized = UNAUTHORIZED[who];
        assert.deepEqual(
          { status: res.status, body: res.body },
          { status: unauthorized ? 401 : 400, body: unauthorized ?? MUST_BE_ADMIN },
          who,
        );
        assert.deepEqual(await bus.take(), [], who);
      }
    }
    assert.deepEqual(await iconState(), { icon_source: 'G', icon_version: 3 });
  });
});

describe('the served icon file', () => {
  test('conditional requests, unversioned URLs and HEAD', async () => {
    await upload(as('admin'), part(await solidPng(20, 20)));
    const path = `/user_avatars/${t.fx.realm.id}/realm/icon.png`;
    const etag = `"realm-icon-${t.fx.realm.id}-2"`;
    for (const url of [path, `${path}?version=1`]) {
      const res = await fetchIcon(url);
      assert.deepEqual(
        [res.statusCode, res.headers['cache-control'], res.headers['etag']],
        [200, 'public, max-age=0, must-revalidate', etag],
        url,
      );
    }
    for (const header of [etag, `"other", W/${etag}`, '*']) {
      const notModified = await fetchIcon(uploadedUrl(2), { 'if-none-match': header });
      assert.deepEqual(
        [notModified.statusCode, notModified.rawPayload.length, notModified.headers['etag']],
        [304, 0, etag],
        header,
      );
    }
    const changed = await fetchIcon(uploadedUrl(2), { 'if-none-match': '"realm-icon-1-1"' });
    assert.equal(changed.statusCode, 200);
    const head = await t.as(null).inject({ method: 'HEAD', url: uploadedUrl(2) });
    assert.deepEqual(
      [head.statusCode, head.headers['content-type'], head.rawPayload.length],
      [200, 'image/png', 0],
    );
    const post = await t.as(t.fx.admin).inject({ method: 'POST', url: path });
    assert.deepEqual(
      { status: post.statusCode, body: post.json() },
      {
        status: 405,
        body: { ...err('Method Not Allowed'), allowed_methods: ['GET'] },
      },
    );
  });

  test('not found: no icon, unknown or malformed organization ids, deactivated organizations', async () => {
    await upload(as('admin'), part(await solidPng(20, 20)));
    const urls = [
      uploadedUrl(1, t.fx.other.id),
      '/user_avatars/999999/realm/icon.png',
      '/user_avatars/0/realm/icon.png',
      `/user_avatars/0${t.fx.realm.id}/realm/icon.png`,
      '/user_avatars/abc/realm/icon.png',
      `/user_avatars/${t.fx.realm.id}/realm/other.png`,
    ];
    for (const url of urls) {
      const res = await fetchIcon(url);
      assert.deepEqual(
        { status: res.statusCode, body: res.json() },
        { status: 404, body: NOT_FOUND },
        url,
      );
    }
    await updateRealm(t.ctx.db, t.fx.realm.id, { deactivated: 1 });
    const res = await fetchIcon(uploadedUrl(2));
    assert.deepEqual(
      { status: res.statusCode, body: res.json() },
      { status: 404, body: NOT_FOUND },
    );
  });
});

test('event contract: upload and delete', async () => {
  const png = await solidPng(16, 16);
  await runContract({
    changes: ALL_VIEWERS,
    act: (c) => ok(upload(c.as(c.fx.admin), part(png))),
  });
  await runContract({
    changes: ALL_VIEWERS,
    setup: (c) => ok(upload(c.as(c.fx.admin), part(png))),
    act: (c) => ok(c.as(c.fx.owner).delete('/realm/icon')),
  });
});

describe('file store failures', () => {
  test('a failed write changes nothing and sends nothing', async () => {
    const failing: FileStore = {
      ...memoryFileStore(),
      put: async () => {
        throw new Error('disk full');
      },
    };
    const f = await buildTestApp({ files: failing });
    try {
      const log = captureNotices(f);
      const res = await f
        .as(f.fx.admin)
        .multipart('POST', '/realm/icon', {}, [part(await solidPng(5, 5))]);
      assert.deepEqual(
        { status: res.status, body: res.body },
        {
          status: 500,
          body: err('Internal server error', 'INTERNAL_SERVER_ERROR'),
        },
      );
      const realm = (await getRealmById(f.ctx.db, f.fx.realm.id))!;
      assert.deepEqual([realm.icon_source, realm.icon_version], ['G', 1]);
      assert.deepEqual(await log.take(), []);
    } finally {
      await f.close();
    }
  });

  test('a failed delete of the replaced file does not fail the change', async () => {
    const store = memoryFileStore();
    const f = await buildTestApp({
      files: {
        ...store,
        delete: async () => {
          throw new Error('read-only');
        },
      },
    });
    try {
      const admin = f.as(f.fx.admin);
      await admin.multipart('POST', '/realm/icon', {}, [part(await solidPng(5, 5))]);
      const res = await admin.multipart('POST', '/realm/icon', {}, [part(await solidPng(6, 6))]);
      assert.deepEqual(res.body, { ...OK, icon_url: uploadedUrl(3, f.fx.realm.id) });
      assert.deepEqual(store.keys(), [iconKey(2, f.fx.realm.id), iconKey(3, f.fx.realm.id)]);
    } finally {
      await f.close();
    }
  });
});

describe('on disk', () => {
  const temps: string[] = [];
  after(async () => {
    for (const dir of temps) await rm(dir, { recursive: true, force: true });
  });

  test('icons are files under the uploads directory; replaced ones are removed', async () => {
    const root = await mkdtemp(join(tmpdir(), 'parley-icons-'));
    temps.push(root);
    const f = await buildTestApp({ files: diskFileStore(root) });
    try {
      const admin = f.as(f.fx.admin);
      const path = (v: number) => join(root, 'realms', String(f.fx.realm.id), `icon-${v}.png`);
      await admin.multipart('POST', '/realm/icon', {}, [part(await solidJpeg(50, 50))]);
      assert.equal(existsSync(path(2)), true);
      await assertIconPng(await sharp(path(2)).png().toBuffer());
      await admin.multipart('POST', '/realm/icon', {}, [part(await solidPng(50, 50))]);
      assert.deepEqual([existsSync(path(2)), existsSync(path(3))], [false, true]);
      const served = await f.as(null).inject({ method: 'GET', url: uploadedUrl(3, f.fx.realm.id) });
      assert.equal(served.headers['content-type'], 'image/png');
      await assertIconPng(served.rawPayload);
      await admin.delete('/realm/icon');
      assert.equal(existsSync(path(3)), false);
    } finally {
      await f.close();
    }
  });
});
