// The PostgreSQL floor of figure 3: a raw `pg` client inserting the rows a channel send
// stores (one message, one row per subscriber), 100 messages per transaction, for a fixed
// time, into the database Parley's migrations made. Prints {messages, seconds, cpuSeconds}.
// Usage: pg-floor.ts <url> <channel id> <sender id> <seconds>
import pg from 'pg';

const [url, channelArg, senderArg, secondsArg] = process.argv.slice(2);
const channelId = Number(channelArg);
const senderId = Number(senderArg);
const PER_TX = 100;

const client = new pg.Client({ connectionString: url });
await client.connect();
const channel = (
  await client.query('SELECT realm_id, recipient_id FROM channels WHERE id = $1', [channelId])
).rows[0] as { realm_id: number; recipient_id: number };
const subscribers = (
  await client.query('SELECT user_id FROM subscriptions WHERE channel_id = $1 AND active = 1', [
    channelId,
  ])
).rows.map((r: { user_id: number }) => r.user_id);

const seconds = Number(secondsArg);
const t0 = performance.now();
let messages = 0;
while (performance.now() - t0 < seconds * 1000 && messages < 10_000_000) {
  const values: unknown[] = [];
  const rows: string[] = [];
  for (let i = 0; i < PER_TX; i++) {
    const content = `Benchmark message ${messages + i}: the quick brown fox jumps over the lazy dog while the team reviews the release notes, checks the dashboards and agrees on the rollout plan for today.`;
    const b = values.length;
    values.push(channel.realm_id, channel.recipient_id, channelId, senderId, content);
    values.push(`<p>${content}</p>`, Math.floor(Date.now() / 1000));
    rows.push(
      `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, 'bench', $${b + 5}, $${b + 6}, $${b + 7}, 'bench', 0, NULL, NULL, NULL, 0, 0, 0)`,
    );
  }
  await client.query('BEGIN');
  const ids = (
    await client.query(
      `INSERT INTO messages (realm_id, recipient_id, channel_id, sender_id, topic, content,
         rendered_content, date_sent, sending_client, is_me_message, last_edit_time,
         last_moved_time, edit_history, has_link, has_image, has_attachment)
       VALUES ${rows.join(', ')} RETURNING id`,
      values,
    )
  ).rows.map((r: { id: number }) => r.id);
  const um: unknown[] = [];
  const umRows: string[] = [];
  for (const id of ids) {
    for (const u of subscribers) {
      umRows.push(`($${um.length + 1}, $${um.length + 2}, $${um.length + 3})`);
      um.push(u, id, u === senderId ? 1 : 0);
    }
  }
  await client.query(
    `INSERT INTO user_messages (user_id, message_id, flags) VALUES ${umRows.join(', ')}`,
    um,
  );
  await client.query('COMMIT');
  messages += PER_TX;
}
const elapsed = (performance.now() - t0) / 1000;
await client.end();
const cpu = process.cpuUsage();
console.log(
  JSON.stringify({ messages, seconds: elapsed, cpuSeconds: (cpu.user + cpu.system) / 1e6 }),
);
