// Uploaded files behind a small interface, so an object store can replace the local disk
// later. Keys are chosen by the server (never a client's file name) and are relative
// paths of plain segments; anything else is refused before it can name a path.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export interface StoredFile {
  bytes: Buffer;
  contentType: string;
}

export interface FileStore {
  /** Store bytes under key, replacing what was there; readers see the old or the new file whole. */
  put(key: string, bytes: Buffer, contentType: string): Promise<void>;
  get(key: string): Promise<StoredFile | null>;
  /** Remove the file; a key that holds nothing is not an error. */
  delete(key: string): Promise<void>;
}

// A segment may not start with a dot: no "..", no hidden files, and the store's own
// ".meta" and ".tmp" directories can never be named by a key.
const SEGMENT_RE = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;
const MAX_KEY_LENGTH = 512;

/** Throws unless key is a relative path of plain segments ("realms/2/icon-3.png"). */
export function checkFileKey(key: string): string[] {
  const segments = key.split('/');
  if (key.length === 0 || key.length > MAX_KEY_LENGTH || !segments.every((s) => SEGMENT_RE.test(s)))
    throw new Error(`invalid file key ${JSON.stringify(key)}`);
  return segments;
}

const CONTENT_TYPE_RE = /^[\x21-\x7e]+(; ?[\x20-\x7e]+)?$/;

function checkContentType(contentType: string): void {
  if (contentType.length > 255 || !CONTENT_TYPE_RE.test(contentType))
    throw new Error(`invalid content type ${JSON.stringify(contentType)}`);
}

const isMissing = (err: unknown): boolean => (err as { code?: string }).code === 'ENOENT';

/**
 * Files under root: the bytes at root/<key>, the content type in root/.meta/<key>.json.
 * Directories are created on first write, so a server that stores nothing creates nothing.
 */
export function diskFileStore(root: string): FileStore {
  const dataPath = (segments: string[]) => join(root, ...segments);
  const metaPath = (segments: string[]) => `${join(root, '.meta', ...segments)}.json`;

  /** Write to a temporary file on the same file system, sync it, then rename it into place. */
  async function writeAtomically(path: string, bytes: Buffer | string): Promise<void> {
    const tmpDir = join(root, '.tmp');
    await mkdir(tmpDir, { recursive: true });
    await mkdir(dirname(path), { recursive: true });
    const tmp = join(tmpDir, `${randomBytes(12).toString('hex')}.tmp`);
    try {
      const handle = await open(tmp, 'wx', 0o640);
      try {
        await handle.writeFile(bytes);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(tmp, path);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  return {
    async put(key, bytes, contentType) {
      const segments = checkFileKey(key);
      checkContentType(contentType);
      await writeAtomically(metaPath(segments), JSON.stringify({ contentType }));
      await writeAtomically(dataPath(segments), bytes);
    },
    async get(key) {
      const segments = checkFileKey(key);
      let bytes: Buffer;
      try {
        bytes = await readFile(dataPath(segments));
      } catch (err) {
        if (isMissing(err)) return null;
        throw err;
      }
      let contentType = 'application/octet-stream';
      try {
        const meta = JSON.parse(await readFile(metaPath(segments), 'utf8')) as {
          contentType?: unknown;
        };
        if (typeof meta.contentType === 'string') contentType = meta.contentType;
      } catch (err) {
        if (!isMissing(err)) throw err;
      }
      return { bytes, contentType };
    },
    async delete(key) {
      const segments = checkFileKey(key);
      await rm(dataPath(segments), { force: true });
      await rm(metaPath(segments), { force: true });
    },
  };
}

/** The same interface in memory, for tests and tools that must not touch the disk. */
export function memoryFileStore(): FileStore & { keys(): string[] } {
  const files = new Map<string, StoredFile>();
  return {
    async put(key, bytes, contentType) {
      checkFileKey(key);
      checkContentType(contentType);
      files.set(key, { bytes: Buffer.from(bytes), contentType });
    },
    async get(key) {
      checkFileKey(key);
      const file = files.get(key);
      return file ? { bytes: Buffer.from(file.bytes), contentType: file.contentType } : null;
    },
    async delete(key) {
      checkFileKey(key);
      files.delete(key);
    },
    keys: () => [...files.keys()].sort(),
  };
}
