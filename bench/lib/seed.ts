// Seed a data directory before its server starts: the default organization and its owner
// through the same action as `parley create-realm`, then many members and their
// subscriptions straight through the store, in one transaction each. (Creating 10,000 users
// one by one through the API announces each to everyone already there: quadratic, and not
// what these figures measure.) It runs in the bench's own process, on the load core, with
// the server's PARLEY_* settings: a child process per seed spent 3-4 s loading the server's
// modules on the server's core, about 35 s of a full run (docs/performance.md, Method).
import type { AppContext } from '../../src/context.ts';
import { loadConfig } from '../../src/config.ts';
import { openContext } from '../../src/main.ts';
import { closeContext } from '../../src/server.ts';
import { createOrganization } from '../../src/actions/bootstrap.ts';
import { doCreateChannel } from '../../src/actions/channels.ts';
import { withTransaction } from '../../src/actions/transaction.ts';
import { FLAG_BITS } from '../../src/lib/message-flags.ts';
import { ROLE, systemGroupForRole } from '../../src/lib/roles.ts';
import { readUserSettings, writeUserSettings } from '../../src/lib/user-settings.ts';
import * as channelsStore from '../../src/store/channels.ts';
import * as messagesStore from '../../src/store/messages.ts';
import * as groupsStore from '../../src/store/user-groups.ts';
import * as usersStore from '../../src/store/users.ts';
import { messageContent } from './common.ts';

export interface SeedSpec {
  /** Users including the owner (index 0). */
  users: number;
  /** Each channel's subscribers as user indexes; 'all' for everyone. */
  channels: Array<{
    name: string;
    subscribers: number[] | 'all';
    /**
     * Earlier messages in the channel, sent by its subscribers in turn and unread by the
     * others, each with a row for every subscriber: the history a send's rows join. A
     * channel's first message is announced to everyone who can see the channel as well,
     * which a measured send should not pay for unless that is what it measures.
     */
    history?: number;
  }>;
}

export interface SeedUser {
  id: number;
  email: string;
  apiKey: string;
}

export interface Seeded {
  realmId: number;
  users: SeedUser[];
  channels: Array<{ id: number; name: string }>;
}

const KEY_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function apiKey(i: number): string {
  let s = '';
  for (let j = 0; j < 32; j++) s += KEY_CHARS[(i * 7919 + j * 104729 + j * j * 31) % 62];
  return `${s.slice(0, 24)}${String(i).padStart(8, '0')}`;
}

/** Seed the data directory (or database) that env's PARLEY_* settings name. */
export async function seed(spec: SeedSpec, env: Record<string, string>): Promise<Seeded> {
  const ctx = await openContext(loadConfig({ ...process.env, ...env }));
  try {
    const { realm, owner } = await createOrganization(ctx, {
      name: 'Bench',
      stringId: '',
      ownerEmail: 'owner@bench.test',
      ownerFullName: 'Bench Owner',
      ownerPassword: null,
    });
    const users: SeedUser[] = [
      { id: owner.id, email: owner.delivery_email, apiKey: owner.api_key },
    ];
    const settings = writeUserSettings(readUserSettings('{}'));
    await withTransaction(ctx, realm.id, async (work) => {
      const groups = await groupsStore.listSystemGroups(work.db, realm.id);
      const members = groups.find((g) => g.name === systemGroupForRole(ROLE.member))!.id;
      const ids: number[] = [];
      for (let i = 1; i < spec.users; i++) {
        const email = `user${i}@bench.test`;
        const key = apiKey(i);
        const row = await usersStore.insertUser(work.db, {
          realm_id: realm.id,
          email,
          delivery_email: email,
          full_name: `Bench User ${i}`,
          role: ROLE.member,
          is_active: 1,
          is_bot: 0,
          bot_type: null,
          bot_owner_id: null,
          api_key: key,
          password_hash: null,
          date_joined: Math.floor(Date.now() / 1000),
          avatar_source: 'G',
          avatar_version: 1,
          settings,
        });
        ids.push(row.id);
        users.push({ id: row.id, email, apiKey: key });
      }
      for (let i = 0; i < ids.length; i += 500) {
        await groupsStore.addGroupMembers(work.db, members, ids.slice(i, i + 500));
      }
    });
    const channels: Seeded['channels'] = [];
    const histories: Array<{ channel: ChannelHistory; count: number }> = [];
    await withTransaction(ctx, realm.id, async (work) => {
      for (const c of spec.channels) {
        const row = await doCreateChannel(ctx, work, realm, owner, { name: c.name });
        channels.push({ id: row.id, name: row.name });
        const subs = c.subscribers === 'all' ? users.map((_, i) => i) : c.subscribers;
        if (c.history) {
          const subscribers = subs.map((i) => users[i].id);
          const channel = { channelId: row.id, recipientId: row.recipient_id!, subscribers };
          histories.push({ channel, count: c.history });
        }
        for (const i of subs) {
          await channelsStore.upsertSubscription(work.db, {
            user_id: users[i].id,
            channel_id: row.id,
            active: 1,
            is_muted: 0,
            pin_to_top: 0,
            color: '#76ce90',
            desktop_notifications: null,
            audible_notifications: null,
            push_notifications: null,
            email_notifications: null,
            wildcard_mentions_notify: null,
          });
        }
      }
    });
    for (const h of histories) await seedHistory(ctx, realm.id, h.channel, h.count);
    return { realmId: realm.id, users, channels };
  } finally {
    await closeContext(ctx);
  }
}

interface ChannelHistory {
  channelId: number;
  recipientId: number;
  /** User ids. */
  subscribers: number[];
}

/** History in batches of messages, one transaction each. */
async function seedHistory(
  ctx: AppContext,
  realmId: number,
  channel: ChannelHistory,
  count: number,
): Promise<void> {
  const { channelId } = channel;
  const BATCH = 20;
  for (let at = 0; at < count; at += BATCH) {
    await withTransaction(ctx, realmId, async (work) => {
      const rows = Array.from({ length: Math.min(BATCH, count - at) }, (_, i) => {
        const content = messageContent(at + i);
        return {
          realm_id: realmId,
          recipient_id: channel.recipientId,
          channel_id: channelId,
          sender_id: channel.subscribers[(at + i) % channel.subscribers.length],
          topic: 'history',
          content,
          rendered_content: `<p>${content}</p>`,
          date_sent: Math.floor(Date.now() / 1000),
          sending_client: 'bench',
          is_me_message: 0,
          last_edit_time: null,
          last_moved_time: null,
          edit_history: null,
          has_link: 0,
          has_image: 0,
          has_attachment: 0,
        };
      });
      const messages = await messagesStore.insertMessages(work.db, rows);
      await messagesStore.insertUserMessages(
        work.db,
        messages.flatMap((m) =>
          channel.subscribers.map((u) => ({
            user_id: u,
            message_id: m.id,
            flags: u === m.sender_id ? FLAG_BITS.read : 0,
          })),
        ),
      );
    });
  }
}
