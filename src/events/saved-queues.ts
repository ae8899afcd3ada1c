// The file a stopping process saves its event queues to and the next one restores them from
// (SIGTERM, then start: docs/architecture.md), and the restart event restored queues get.
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import type { ClientDescriptor } from '../lib/event-client.ts';
import { SERVER_GENERATION, SVC_FEATURE_LEVEL, SVC_MERGE_BASE, SVC_VERSION } from '../version.ts';
import type { RestartEvent } from './types.ts';

const SAVE_FORMAT = 1;

/** One queue as saved; E is the queue's own event record. */
export interface SavedQueue<E> {
  id: string;
  user_id: number;
  realm_id: number;
  client: ClientDescriptor;
  events: E[];
  next_id: number;
  pruned_id: number;
  snapshot_seq: number | null;
  /** Absent in files saved before it was kept. */
  reads_public_channels?: boolean;
}

export interface SavedQueues<E> {
  queues: Array<SavedQueue<E>>;
  topic_names?: Array<{ realm_id: number; name: string; seq: number }>;
  seen_seq?: Array<{ realm_id: number; seq: number }>;
}

/** Written whole to a temporary file first, so a crash never leaves half a file behind. */
export async function writeSavedQueues<E>(file: string, saved: SavedQueues<E>): Promise<void> {
  const tmp = `${file}.tmp`;
  try {
    await writeFile(tmp, JSON.stringify({ format: SAVE_FORMAT, ...saved }));
    await rename(tmp, file);
  } catch (err) {
    // A full disk leaves no half-written temporary file behind either.
    await rm(tmp, { force: true });
    throw err;
  }
}

export async function readSavedQueues<E>(file: string): Promise<SavedQueues<E>> {
  const saved = JSON.parse(await readFile(file, 'utf8')) as
    (SavedQueues<E> & { format?: unknown }) | null;
  if (saved?.format !== SAVE_FORMAT || !Array.isArray(saved.queues)) {
    throw new Error(`${file} is not a saved event-queue file`);
  }
  return saved;
}

/** What a restored queue is told first: the server restarted, possibly on a new version. */
export function restartEvent(): RestartEvent {
  return {
    type: 'restart',
    svc_version: SVC_VERSION,
    svc_merge_base: SVC_MERGE_BASE,
    svc_feature_level: SVC_FEATURE_LEVEL,
    zulip_version: SVC_VERSION,
    zulip_merge_base: SVC_MERGE_BASE,
    zulip_feature_level: SVC_FEATURE_LEVEL,
    server_generation: SERVER_GENERATION,
  };
}
