// The file store: the same contract on disk (in a temporary directory) and in memory;
// keys that could name a path outside the store are refused; disk writes are atomic.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  checkFileKey,
  diskFileStore,
  memoryFileStore,
  type FileStore,
} from '../../src/infra/files.ts';

const temps: string[] = [];
after(async () => {
  for (const dir of temps) await rm(dir, { recursive: true, force: true });
});
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'parley-files-'));
  temps.push(dir);
  return dir;
}

const BAD_KEYS = [
  '',
  '..',
  '../outside.png',
  'realms/../../outside.png',
  'realms/./icon.png',
  '/etc/passwd',
  'realms//icon.png',
  'realms/',
  '.hidden',
  'realms/.meta',
  'a\\..\\b',
  'C:/x',
  'nul\0byte',
  'spa ce',
  `${'a'.repeat(129)}`,
  `${'a/'.repeat(300)}a`,
];

const implementations: Array<[string, () => Promise<FileStore>]> = [
  ['disk', async () => diskFileStore(join(await tempDir(), 'uploads'))],
  ['memory', async () => memoryFileStore()],
];

for (const [name, make] of implementations) {
  describe(`${name} file store`, () => {
    test('put, get, replace and delete', async () => {
      const files = await make();
      assert.equal(await files.get('realms/1/icon-2.png'), null);
      await files.put('realms/1/icon-2.png', Buffer.from('first'), 'image/png');
      assert.deepEqual(await files.get('realms/1/icon-2.png'), {
        bytes: Buffer.from('first'),
        contentType: 'image/png',
      });
      await files.put('realms/1/icon-2.png', Buffer.from('second one'), 'image/webp');
      assert.deepEqual(await files.get('realms/1/icon-2.png'), {
        bytes: Buffer.from('second one'),
        contentType: 'image/webp',
      });
      await files.put('realms/1/icon-3.png', Buffer.alloc(0), 'application/octet-stream');
      assert.deepEqual(await files.get('realms/1/icon-3.png'), {
        bytes: Buffer.alloc(0),
        contentType: 'application/octet-stream',
      });
      await files.delete('realms/1/icon-2.png');
      assert.equal(await files.get('realms/1/icon-2.png'), null);
      assert.notEqual(await files.get('realms/1/icon-3.png'), null);
      // Deleting what is not there is not an error.
      await files.delete('realms/1/icon-2.png');
      await files.delete('never/stored.png');
    });

    test('the caller keeps its buffer: later changes to it do not reach the store', async () => {
      const files = await make();
      const bytes = Buffer.from('abc');
      await files.put('k', bytes, 'text/plain');
      bytes[0] = 0x7a;
      const got = await files.get('k');
      assert.deepEqual(got!.bytes, Buffer.from('abc'));
    });

    test('keys that could leave the store, and bad content types, are refused', async () => {
      const files = await make();
      for (const key of BAD_KEYS) {
        const label = JSON.stringify(key);
        await assert.rejects(
          () => files.put(key, Buffer.from('x'), 'image/png'),
          /invalid file key/,
          label,
        );
        await assert.rejects(() => files.get(key), /invalid file key/, label);
        await assert.rejects(() => files.delete(key), /invalid file key/, label);
      }
      for (const type of ['', 'image/png\r\nX-Evil: 1', 'a'.repeat(300)]) {
        await assert.rejects(
          () => files.put('ok.png', Buffer.from('x'), type),
          /invalid content type/,
          JSON.stringify(type),
        );
      }
      assert.equal(await files.get('ok.png'), null);
    });
  });
}

test('checkFileKey accepts plain relative paths', () => {
  assert.deepEqual(checkFileKey('realms/12/icon-3.png'), ['realms', '12', 'icon-3.png']);
  assert.deepEqual(checkFileKey('emoji_1.gif'), ['emoji_1.gif']);
});

describe('disk file store', () => {
  test('nothing is created until the first write; files sit at <root>/<key>', async () => {
    const root = join(await tempDir(), 'uploads');
    const files = diskFileStore(root);
    assert.equal(await files.get('a/b.png'), null);
    await files.delete('a/b.png');
    assert.equal(existsSync(root), false);
    await files.put('a/b.png', Buffer.from('bytes'), 'image/png');
    assert.deepEqual(readFileSync(join(root, 'a', 'b.png')), Buffer.from('bytes'));
    // Temporary files are renamed into place, none left behind.
    assert.deepEqual(readdirSync(join(root, '.tmp')), []);
    assert.deepEqual(readdirSync(root).sort(), ['.meta', '.tmp', 'a']);
  });

  test('a second store on the same directory sees the files (processes sharing it)', async () => {
    const root = join(await tempDir(), 'uploads');
    await diskFileStore(root).put('x/y.gif', Buffer.from('GIF89a'), 'image/gif');
    assert.deepEqual(await diskFileStore(root).get('x/y.gif'), {
      bytes: Buffer.from('GIF89a'),
      contentType: 'image/gif',
    });
  });

  test('a file without its content type record is served as octet-stream', async () => {
    const root = join(await tempDir(), 'uploads');
    const files = diskFileStore(root);
    await files.put('k.bin', Buffer.from('x'), 'image/png');
    await rm(join(root, '.meta'), { recursive: true });
    assert.deepEqual(await files.get('k.bin'), {
      bytes: Buffer.from('x'),
      contentType: 'application/octet-stream',
    });
  });

  test('a failed write leaves the old file whole and no temporary file', async () => {
    const root = join(await tempDir(), 'uploads');
    const files = diskFileStore(root);
    await files.put('d/inner.png', Buffer.from('inner'), 'image/png');
    // "d" is a directory now, so renaming a file onto it fails.
    await assert.rejects(() => files.put('d', Buffer.from('oops'), 'image/png'));
    assert.deepEqual(readdirSync(join(root, '.tmp')), []);
    assert.deepEqual(await files.get('d/inner.png'), {
      bytes: Buffer.from('inner'),
      contentType: 'image/png',
    });
  });

  test('readers see the old or the new bytes whole while a file is replaced', async () => {
    const root = join(await tempDir(), 'uploads');
    const files = diskFileStore(root);
    const versions = Array.from({ length: 20 }, (_, i) => Buffer.alloc(256 * 1024, 0x41 + i));
    await files.put('big.bin', versions[0], 'application/octet-stream');
    let writing = true;
    let reads = 0;
    const reader = (async () => {
      while (writing) {
        const got = await files.get('big.bin');
        assert.ok(got && versions.some((v) => v.equals(got.bytes)), 'a torn or missing file');
        reads++;
      }
    })();
    for (const v of versions.slice(1)) await files.put('big.bin', v, 'application/octet-stream');
    writing = false;
    await reader;
    assert.ok(reads > 0);
    assert.deepEqual((await files.get('big.bin'))!.bytes, versions.at(-1));
  });

  test('keys never reach outside the root', async () => {
    const parent = await tempDir();
    const root = join(parent, 'uploads');
    writeFileSync(join(parent, 'secret.txt'), 'secret');
    const files = diskFileStore(root);
    await assert.rejects(() => files.get('../secret.txt'), /invalid file key/);
    await assert.rejects(() => files.put('../secret.txt', Buffer.from('x'), 'text/plain'));
    await assert.rejects(() => files.delete('../secret.txt'));
    assert.equal(readFileSync(join(parent, 'secret.txt'), 'utf8'), 'secret');
    assert.deepEqual(readdirSync(parent), ['secret.txt']);
  });
});
