// The SQLite floor of figure 2: raw better-sqlite3 on a copy of Parley's seeded database
// (same schema, indexes and foreign keys), with Parley's pragmas, inserting one message and
// one row per subscriber in each transaction for a fixed time, or up to a number of sends
// whose times it also reports (figure 9). Prints {tx, seconds, sendMs?}.
// Usage: sqlite-floor.ts <live db> <copy path> <channel id> <sender id> <synchronous> <seconds> [sends]
import { existsSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { keepForLife } from '../../src/store/sqlite-lifetime.ts';

const [live, copy, channelArg, senderArg, synchronous, secondsArg, sendsArg] =
  process.argv.slice(2);
const channelId = Number(channelArg);
const senderId = Number(senderArg);

if (!existsSync(copy)) {
  const src = keepForLife(new Database(live, { readonly: true }));
  keepForLife(src.prepare('VACUUM INTO ?')).run(copy);
  src.close();
}
const db = keepForLife(new Database(copy));
// Through exec: pragma() drops the statement it prepares (src/store/sqlite-lifetime.ts).
db.exec('PRAGMA journal_mode = WAL');
db.exec(`PRAGMA synchronous = ${synchronous}`);
db.exec('PRAGMA foreign_keys = ON');
db.exec('PRAGMA busy_timeout = 5000');
// Figure 9's second floor: the rows alone, with no checkpoint in any commit.
if (process.env.BENCH_FLOOR_NO_CHECKPOINTS === '1') db.exec('PRAGMA wal_autocheckpoint = 0');

const channel = keepForLife(
  db.prepare('SELECT realm_id, recipient_id FROM channels WHERE id = ?'),
).get(channelId) as {
  realm_id: number;
  recipient_id: number;
};
const subscribers = (
  keepForLife(
    db.prepare('SELECT user_id FROM subscriptions WHERE channel_id = ? AND active = 1'),
  ).all(channelId) as Array<{ user_id: number }>
).map((r) => r.user_id);
const insertMessage = db.prepare(
  `INSERT INTO messages (realm_id, recipient_id, channel_id, sender_id, topic, content,
     rendered_content, date_sent, sending_client, is_me_message, last_edit_time,
     last_moved_time, edit_history, has_link, has_image, has_attachment)
   VALUES (?, ?, ?, ?, 'bench', ?, ?, ?, 'bench', 0, NULL, NULL, NULL, 0, 0, 0)`,
);
const insertUserMessage = db.prepare(
  'INSERT INTO user_messages (user_id, message_id, flags) VALUES (?, ?, ?)',
);
const send = db.transaction((n: number) => {
  const content = `Benchmark message ${n}: the quick brown fox jumps over the lazy dog while the team reviews the release notes, checks the dashboards and agrees on the rollout plan for today.`;
  const { lastInsertRowid } = insertMessage.run(
    channel.realm_id,
    channel.recipient_id,
    channelId,
    senderId,
    content,
    `<p>${content}</p>`,
    Math.floor(Date.now() / 1000),
  );
  for (const u of subscribers) insertUserMessage.run(u, lastInsertRowid, u === senderId ? 1 : 0);
});

const seconds = Number(secondsArg);
const sends = sendsArg === undefined ? 10_000_000 : Number(sendsArg);
const sendMs: number[] = [];
const t0 = performance.now();
let tx = 0;
while (performance.now() - t0 < seconds * 1000 && tx < sends) {
  const started = performance.now();
  send(tx++);
  if (sendsArg !== undefined) sendMs.push(performance.now() - started);
}
const elapsed = (performance.now() - t0) / 1000;
db.close();
if (process.env.BENCH_FLOOR_KEEP !== '1') rmSync(copy, { force: true });
const cpu = process.cpuUsage();
console.log(
  JSON.stringify({
    tx,
    seconds: elapsed,
    subscribers: subscribers.length,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    ...(sendsArg !== undefined && { sendMs }),
  }),
);
