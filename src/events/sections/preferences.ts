// Register snapshot sections of the personal preferences: user_topics, the legacy
// muted_topics (only for clients that did not ask for user_topic) and alert_words.
import type { AppContext } from '../../context.ts';
import { emptyTopicDisplayName } from '../../lib/event-client.ts';
import { presentMutedTopics, presentUserTopic } from '../../lib/presenters/user-topics.ts';
import { readRealmSettings } from '../../lib/realm-settings.ts';
import * as alertWordsStore from '../../store/alert-words.ts';
import * as userTopicsStore from '../../store/user-topics.ts';
import type { SnapshotRequest, SnapshotSection } from '../initial-state.ts';

type Keys = Record<string, unknown>;

const wants = (req: SnapshotRequest, type: string): boolean =>
  req.fetch === null || req.fetch.includes(type);

async function userTopicsSection(ctx: AppContext, req: SnapshotRequest): Promise<Keys> {
  const { user, realm } = req.actor;
  const emptyName = req.client.capabilities.empty_topic_name
    ? null
    : emptyTopicDisplayName(readRealmSettings(realm.settings).empty_topic_display_name);
  const rows = await userTopicsStore.listUserTopics(ctx.db, user.id);
  // Ordered by the names as this client sees them (the empty topic may be renamed).
  const entries = rows.map((r) => presentUserTopic(r, emptyName));
  const key = (e: Keys) => String(e.topic_name);
  const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  entries.sort(
    (a, b) =>
      (a.stream_id as number) - (b.stream_id as number) ||
      byText(key(a).toLowerCase(), key(b).toLowerCase()) ||
      byText(key(a), key(b)),
  );
  return { user_topics: entries };
}

async function mutedTopicsSection(ctx: AppContext, req: SnapshotRequest): Promise<Keys> {
  const rows = await userTopicsStore.listMutedTopics(ctx.db, req.actor.user.id);
  return { muted_topics: presentMutedTopics(rows) };
}

export const PREFERENCE_SECTIONS: SnapshotSection[] = [
  { include: (req) => wants(req, 'user_topic'), build: userTopicsSection },
  {
    // A client that asks for both gets the modern form only.
    include: (req) =>
      wants(req, 'muted_topics') && (req.fetch === null || !req.fetch.includes('user_topic')),
    build: mutedTopicsSection,
  },
  {
    include: (req) => wants(req, 'alert_words'),
    build: async (ctx, req) => ({
      alert_words: await alertWordsStore.listUserAlertWords(ctx.db, req.actor.user.id),
    }),
  },
];
