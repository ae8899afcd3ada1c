// Custom emoji: GET /realm/emoji, POST and DELETE /realm/emoji/{emoji_name}, the image files
// at their source_url and still_url, the realm_emoji event and register section, reactions
// with custom emoji, and custom emoji in rendered Markdown.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { memoryFileStore } from '../../src/infra/files.ts';
import { buildTestApp, type TestApp } from '../support/app.ts';
import type { Client } from '../support/client.ts';
import { registerQueue } from '../support/events.ts';
import { animated, COLORS, noisePng, pixel, pngClaiming, solidPng } from '../support/images.ts';
import { sendToChannel } from '../support/messages.ts';
import { captureNotices, ids, type NoticeLog } from '../support/notices.ts';
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
const INSUFFICIENT = err('Insufficient permission', 'UNAUTHORIZED_PRINCIPAL');
const everyone = () =>
  ids(t.fx.owner, t.fx.admin, t.fx.moderator, t.fx.member, t.fx.member2, t.fx.guest, t.fx.bot);

type Part = { field: string; filename: string; contentType: string; data: Buffer };
const part = (data: Buffer, filename = 'emoji.png', contentType = 'image/png'): Part => ({
  field: 'file',
  filename,
  contentType,
  data,
});
const upload = (client: Client, name: string, ...parts: Part[]) =>
  client.multipart('POST', `/realm/emoji/${encodeURIComponent(name)}`, {}, parts);
const fetchFile = (url: string, headers: Record<string, string> = {}) =>
  t.as(null).inject({ method: 'GET', url, headers });

const realmId = () => t.fx.realm.id;
const imageUrl = (id: number, ext = 'png') =>
  `/user_avatars/${realmId()}/emoji/images/${id}.${ext}`;
const stillUrl = (id: number) => `/user_avatars/${realmId()}/emoji/images/still/${id}.png`;
const entry = (
  id: number,
  name: string,
  authorId: number,
  opts: { ext?: string; animated?: boolean; deactivated?: boolean } = {},
) => ({
  id: String(id),
  name,
  source_url: imageUrl(id, opts.ext ?? 'png'),
  still_url: opts.animated ? stillUrl(id) : null,
  deactivated: opts.deactivated ?? false,
  author_id: authorId,
});
const emojiEvent = (map: Record<string, unknown>, users = everyone()) => ({
  event: { type: 'realm_emoji', op: 'update', realm_emoji: map },
  users,
});
const listEmoji = async () => {
  const res = await as('member').get('/realm/emoji');
  assert.equal(res.status, 200);
  return res.body.emoji as Record<string, unknown>;
};

async function meta(bytes: Buffer) {
  const m = await sharp(bytes, { animated: true }).metadata();
  return {
    format: m.format,
    width: m.width,
    height: m.pageHeight ?? m.height,
    pages: m.pages ?? 1,
  };
}

describe('POST /realm/emoji/{emoji_name}', () => {
  test('a member uploads a PNG: stored as 64×64, listed, served, event to everyone', async () => {
    const res = await upload(as('member'), 'Party Parrot', part(await solidPng(100, 80)));
    assert.deepEqual(res.body, OK);
    const expected = { '1': entry(1, 'party_parrot', t.fx.member.id) };
    assert.deepEqual(await bus.take(), [emojiEvent(expected)]);
    assert.deepEqual(await listEmoji(), expected);
    assert.deepEqual(files.keys(), [`realms/${realmId()}/emoji/1.png`]);

    const served = await fetchFile(imageUrl(1));
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
        nosniff: 'nosniff',
        csp: "default-src 'none'",
        cache: 'public, max-age=31536000, immutable',
        etag: `"emoji-${realmId()}-1"`,
      },
    );
    assert.deepEqual(await meta(served.rawPayload), {
      format: 'png',
      width: 64,
      height: 64,
      pages: 1,
    });
    assert.deepEqual(await pixel(served.rawPayload, 32, 32), COLORS.RED);
    const again = await fetchFile(imageUrl(1), { 'if-none-match': `"emoji-${realmId()}-1"` });
    assert.equal(again.statusCode, 304);
    // A PNG emoji has no still image, and the wrong extension finds nothing.
    assert.equal((await fetchFile(stillUrl(1))).statusCode, 404);
    assert.equal((await fetchFile(imageUrl(1, 'gif'))).statusCode, 404);
    assert.equal((await fetchFile(imageUrl(99))).statusCode, 404);
    assert.equal(
      (await fetchFile(`/user_avatars/${realmId()}/emoji/images/x.png`)).statusCode,
      404,
    );
  });

  test('an animated GIF stays animated at 64×64, with a still PNG of its first frame', async () => {
    const gif = await animated(40, 40, [COLORS.GREEN, COLORS.BLUE, COLORS.RED]);
    const res = await upload(as('admin'), 'dance', part(gif, 'dance.gif', 'image/gif'));
    assert.deepEqual(res.body, OK);
    const expected = { '1': entry(1, 'dance', t.fx.admin.id, { ext: 'gif', animated: true }) };
    assert.deepEqual(await bus.take(), [emojiEvent(expected)]);
    assert.deepEqual(await listEmoji(), expected);

    const served = await fetchFile(imageUrl(1, 'gif'));
    assert.equal(served.headers['content-type'], 'image/gif');
    assert.deepEqual(await meta(served.rawPayload), {
      format: 'gif',
      width: 64,
      height: 64,
      pages: 3,
    });
    const still = await fetchFile(stillUrl(1));
    assert.equal(still.statusCode, 200);
    assert.equal(still.headers['content-type'], 'image/png');
    assert.equal(still.headers['etag'], `"emoji-${realmId()}-1-still"`);
    assert.deepEqual(await meta(still.rawPayload), {
      format: 'png',
      width: 64,
      height: 64,
      pages: 1,
    });
    assert.deepEqual(await pixel(still.rawPayload, 32, 32), COLORS.GREEN);
  });

  test('who may upload: the members group by default (not guests)', async () => {
    const png = await solidPng(8, 8);
    let id = 0;
    for (const who of EVERY_CALLER) {
      const res = await upload(as(who), `emoji-${who}`, part(png));
      const allowed = ['owner', 'admin', 'moderator', 'member', 'bot'].includes(who);
      if (allowed) {
        id++;
        assert.deepEqual({ status: res.status, body: res.body }, { status: 200, body: OK }, who);
        const events = await bus.take();
        assert.equal(events.length, 1, who);
        assert.deepEqual(
          Object.keys((events[0].event as Record<string, unknown>).realm_emoji as object).length,
          id,
          who,
        );
      } else {
        const status = who === 'guest' ? 400 : 401;
        const body = who === 'guest' ? INSUFFICIENT : UNAUTHORIZED[who];
        assert.deepEqual({ status: res.status, body: res.body }, { status, body }, who);
        assert.deepEqual(await bus.take(), [], who);
      }
    }
    assert.equal(Object.keys(await listEmoji()).length, 5);
  });

  test('the organization setting decides: administrators only', async () => {
    const admins = await t.ctx.db
      .selectFrom('user_groups')
      .select('id')
      .where('realm_id', '=', realmId())
      .where('name', '=', 'role:administrators')
      .executeTakeFirstOrThrow();
    const patched = await as('owner').patch('/realm', {
      can_add_custom_emoji_group: { new: admins.id },
    });
    assert.equal(patched.status, 200, patched.text);
    await bus.take();
    const png = await solidPng(8, 8);
    for (const who of ['moderator', 'member'] as const) {
      const res = await upload(as(who), 'nope', part(png));
      assert.deepEqual({ status: res.status, body: res.body }, { status: 400, body: INSUFFICIENT });
    }
    assert.deepEqual((await upload(as('admin'), 'yes', part(png))).body, OK);
  });

  test('names: case-insensitive, spaces and underscores alike; built-in names need an administrator', async () => {
    const png = await solidPng(8, 8);
    assert.deepEqual((await upload(as('member'), 'My_Emoji-2', part(png))).body, OK);
    const dup = await upload(as('member2'), 'my emoji-2', part(png));
    assert.deepEqual(
      { status: dup.status, body: dup.body },
      { status: 400, body: err('A custom emoji with this name already exists.') },
    );
    const builtIn = await upload(as('member'), 'smile', part(png));
    assert.deepEqual(
      { status: builtIn.status, body: builtIn.body },
      { status: 400, body: err('Only administrators can override default emoji.') },
    );
    const extra = await upload(as('member'), 'zulip', part(png));
    assert.deepEqual(extra.body, err('Only administrators can override default emoji.'));
    assert.deepEqual((await upload(as('admin'), 'smile', part(png))).body, OK);
    assert.deepEqual(
      Object.values(await listEmoji()).map((e) => (e as { name: string }).name),
      ['my_emoji-2', 'smile'],
    );
    const bad: Array<[string, string]> = [
      ['emoji!', 'Invalid characters in emoji name'],
      ['émoji', 'Invalid characters in emoji name'],
      ['ends-', 'Emoji names must end with either a letter or digit.'],
      ['ends_', 'Emoji names must end with either a letter or digit.'],
      [' ', 'Emoji name is missing'],
      ['a'.repeat(61), 'Emoji name is too long'],
    ];
    for (const [name, msg] of bad) {
      const res = await upload(as('admin'), name, part(png));
      assert.deepEqual(
        { status: res.status, body: res.body },
        { status: 400, body: err(msg) },
        name,
      );
    }
  });

  const UNDECODABLE = err('Could not decode image; did you upload an image file?');
  const ONE_FILE = err('You must upload exactly one file.');
  const refusals: Array<[string, () => Promise<Part[]>, number, Record<string, unknown>]> = [
    ['no file', async () => [], 400, ONE_FILE],
    [
      'two files',
      async () => [part(await solidPng(4, 4)), part(await solidPng(4, 4), 'b.png')],
      400,
      ONE_FILE,
    ],
    [
      'a file over 5 MiB',
      async () => [part(Buffer.concat([await solidPng(4, 4), Buffer.alloc(5 * 1024 * 1024)]))],
      413,
      err('Uploaded file is larger than the allowed limit of 5 MiB'),
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
      'a truncated GIF',
      async () => {
        const whole = await animated(40, 40, [COLORS.RED, COLORS.BLUE]);
        return [part(whole.subarray(0, 30), 'a.gif', 'image/gif')];
      },
      400,
      UNDECODABLE,
    ],
    [
      'a text file',
      async () => [part(Buffer.from('Not an image at all.\n'), 'a.txt', 'text/plain')],
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
    test(`refused: ${label}; nothing is stored`, async () => {
      const res = await upload(as('member'), 'refused', ...(await parts()));
      assert.deepEqual({ status: res.status, body: res.body }, { status, body });
      assert.deepEqual(await bus.take(), []);
      assert.deepEqual(files.keys(), []);
      assert.deepEqual(await listEmoji(), {});
    });
  }

  test('MAX_EMOJI_FILE_SIZE_MIB lowers the limit', async () => {
    await t.close();
    files = memoryFileStore();
    t = await buildTestApp({ files, config: { maxEmojiFileSizeMib: 1 } });
    bus = captureNotices(t);
    const big = await noisePng(700, 700);
    assert.ok(big.length > 1024 * 1024, String(big.length));
    const res = await upload(as('member'), 'big', part(big));
    assert.deepEqual(
      { status: res.status, body: res.body },
      { status: 413, body: err('Uploaded file is larger than the allowed limit of 1 MiB') },
    );
  });
});

describe('DELETE /realm/emoji/{emoji_name}', () => {
  test('the author deactivates: still listed and served, event to everyone', async () => {
    await upload(as('member'), 'kitty42', part(await solidPng(8, 8)));
    await bus.take();
    const res = await as('member').delete('/realm/emoji/kitty42');
    assert.deepEqual(res.body, OK);
    const expected = { '1': entry(1, 'kitty42', t.fx.member.id, { deactivated: true }) };
    assert.deepEqual(await bus.take(), [emojiEvent(expected)]);
    assert.deepEqual(await listEmoji(), expected);
    assert.equal((await fetchFile(imageUrl(1))).statusCode, 200);
    // The name is free again; the new emoji gets a new id.
    assert.deepEqual((await upload(as('member2'), 'kitty42', part(await solidPng(8, 8)))).body, OK);
    assert.deepEqual(Object.keys(await listEmoji()), ['1', '2']);
  });

  test('who may deactivate another user’s emoji: administrators only', async () => {
    for (const who of EVERY_CALLER) {
      await upload(as('member2'), 'doggo42', part(await solidPng(8, 8)));
      await bus.take();
      const res = await as(who).delete('/realm/emoji/doggo42');
      if (who === 'owner' || who === 'admin') {
        assert.deepEqual({ status: res.status, body: res.body }, { status: 200, body: OK }, who);
        assert.equal((await bus.take()).length, 1);
      } else {
        const [status, body] = UNAUTHORIZED[who]
          ? [401, UNAUTHORIZED[who]]
          : [
              400,
              err(
                'Must be an organization administrator or emoji author',
                'UNAUTHORIZED_PRINCIPAL',
              ),
            ];
        assert.deepEqual({ status: res.status, body: res.body }, { status, body }, who);
        assert.deepEqual(await bus.take(), [], who);
        await as('admin').delete('/realm/emoji/doggo42');
        await bus.take();
      }
    }
  });

  test('a missing or already deactivated emoji: 404', async () => {
    const missing = await as('admin').delete('/realm/emoji/nothing');
    assert.deepEqual(
      { status: missing.status, body: missing.body },
      { status: 404, body: err("Emoji 'nothing' does not exist") },
    );
    await upload(as('admin'), 'gone', part(await solidPng(8, 8)));
    await as('admin').delete('/realm/emoji/gone');
    const again = await as('admin').delete('/realm/emoji/gone');
    assert.deepEqual(
      { status: again.status, body: again.body },
      { status: 404, body: err("Emoji 'gone' does not exist") },
    );
  });
});

describe('GET /realm/emoji and register', () => {
  test('every user may list; unauthenticated callers may not', async () => {
    await upload(as('member'), 'x1', part(await solidPng(8, 8)));
    const expected = { '1': entry(1, 'x1', t.fx.member.id) };
    for (const who of EVERY_CALLER) {
      const res = await as(who).get('/realm/emoji');
      if (UNAUTHORIZED[who]) {
        assert.deepEqual(
          { status: res.status, body: res.body },
          { status: 401, body: UNAUTHORIZED[who] },
        );
      } else {
        assert.deepEqual(res.body, { ...OK, emoji: expected }, who);
      }
    }
    // Another organization's emoji are its own.
    const other = await t.as({ ...t.fx.otherOwner, host: 'other.parley.test' }).get('/realm/emoji');
    assert.deepEqual(other.body, { ...OK, emoji: {} });
  });

  test('register carries realm_emoji, deactivated included', async () => {
    await upload(as('member'), 'a1', part(await solidPng(8, 8)));
    await upload(as('member'), 'a2', part(await solidPng(8, 8)));
    await as('member').delete('/realm/emoji/a2');
    const body = await registerQueue(as('guest'), { fetch_event_types: ['realm_emoji'] });
    assert.deepEqual(body.realm_emoji, {
      '1': entry(1, 'a1', t.fx.member.id),
      '2': entry(2, 'a2', t.fx.member.id, { deactivated: true }),
    });
  });
});

describe('custom emoji in reactions and messages', () => {
  test('Markdown renders an active custom emoji as an image; a deactivated one stays in old messages', async () => {
    await upload(as('member'), 'octo', part(await solidPng(8, 8)));
    const id = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'hi :octo:');
    const img = `<img alt=":octo:" class="emoji" src="${imageUrl(1)}" title="octo">`;
    const rendered = async (messageId: number) =>
      ((await as('member').get(`/messages/${messageId}`)).body.message as { content: string })
        .content;
    assert.equal(await rendered(id), `<p>hi ${img}</p>`);
    await as('member').delete('/realm/emoji/octo');
    assert.equal(await rendered(id), `<p>hi ${img}</p>`);
    const later = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'hi :octo:');
    assert.equal(await rendered(later), '<p>hi :octo:</p>');
  });

  test('reacting with a custom emoji by name or by code; deactivated ones only keep existing reactions', async () => {
    await upload(as('member'), 'octo', part(await solidPng(8, 8)));
    const msg = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'x');
    await bus.take();
    const byName = await as('member').post(`/messages/${msg}/reactions`, { emoji_name: 'octo' });
    assert.deepEqual(byName.body, OK);
    const [sent] = await bus.take();
    const event = sent.event as Record<string, unknown>;
    assert.deepEqual(
      {
        emoji_name: event.emoji_name,
        emoji_code: event.emoji_code,
        reaction_type: event.reaction_type,
      },
      { emoji_name: 'octo', emoji_code: '1', reaction_type: 'realm_emoji' },
    );
    const byCode = await as('admin').post(`/messages/${msg}/reactions`, {
      emoji_name: 'octo',
      emoji_code: '1',
      reaction_type: 'realm_emoji',
    });
    assert.deepEqual(byCode.body, OK);
    const wrongName = await as('owner').post(`/messages/${msg}/reactions`, {
      emoji_name: 'octopus',
      emoji_code: '2',
      reaction_type: 'realm_emoji',
    });
    assert.deepEqual(wrongName.body, err('Invalid custom emoji.'));

    await as('member').delete('/realm/emoji/octo');
    const msg2 = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'y');
    const fresh = await as('owner').post(`/messages/${msg2}/reactions`, {
      emoji_name: 'octo',
      emoji_code: '1',
      reaction_type: 'realm_emoji',
    });
    assert.deepEqual(fresh.body, err('Invalid custom emoji.'));
    // Joining the existing reaction on the first message still works, and it stays listed.
    const join = await as('owner').post(`/messages/${msg}/reactions`, {
      emoji_name: 'octo',
      emoji_code: '1',
      reaction_type: 'realm_emoji',
    });
    assert.deepEqual(join.body, OK);
    const message = (await as('member').get(`/messages/${msg}`)).body.message as {
      reactions: unknown;
    };
    assert.deepEqual(
      (message.reactions as Array<Record<string, unknown>>).map((r) => [
        r.emoji_code,
        r.reaction_type,
        r.user_id,
      ]),
      [
        ['1', 'realm_emoji', t.fx.member.id],
        ['1', 'realm_emoji', t.fx.admin.id],
        ['1', 'realm_emoji', t.fx.owner.id],
      ],
    );
    const removed = await as('member').delete(`/messages/${msg}/reactions`, {
      emoji_code: '1',
      reaction_type: 'realm_emoji',
    });
    assert.deepEqual(removed.body, OK);
  });

  test('a custom emoji name must match its code', async () => {
    await upload(as('member'), 'octo', part(await solidPng(8, 8)));
    const msg = await sendToChannel(t, t.fx.member, t.fx.channels.general, 't', 'x');
    const res = await as('member').post(`/messages/${msg}/reactions`, {
      emoji_name: 'smile',
      emoji_code: '1',
      reaction_type: 'realm_emoji',
    });
    assert.deepEqual(res.body, err('Invalid custom emoji name.'));
  });
});
