// The server's log at info level never holds an API key, a password or message content:
// the real `parley serve` runs in-process with its log captured while clients log in,
// send messages, fail authentication and hit an unexpected error.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { setFaultHook } from '../../src/actions/transaction.ts';
import { runCli } from '../../src/cli/program.ts';
import { captureIo, tempDir, waitFor } from '../cli/io.ts';
import { addMember, call, type Account } from './server-process.ts';

afterEach(() => setFaultHook(null));

const unique = (what: string) => `${what}${Math.random().toString(36).slice(2, 10)}`;

test('no API key, password or message content reaches the log', async () => {
  const cap = captureIo({
    PARLEY_PORT: '0',
    PARLEY_LOG_LEVEL: 'info',
    PARLEY_RATE_LIMIT: 'off',
    PARLEY_DATA_DIR: tempDir(),
  });
  const done = runCli(['serve', '--json'], cap.io);
  await waitFor('the serve banner', () => cap.stdout().includes('\n'));
  const banner = JSON.parse(cap.stdout()) as Record<string, string>;
  const url = banner.url;
  const owner: Account = {
    id: Number(banner.user_id),
    email: banner.email,
    apiKey: banner.api_key,
  };
  const secrets: Record<string, string> = {
    'owner API key': banner.api_key,
    'owner password': banner.password,
  };

  // A user created with a password, who logs in with it.
  const password = unique('Pw-secret-');
  secrets.password = password;
  const member = await addMember(url, owner, 'logged@example.com', password);
  secrets['member API key'] = member.apiKey;

  // A failed login, and a user creation turned down.
  const wrongPassword = unique('Wrong-pw-');
  secrets['wrong password'] = wrongPassword;
  const login = await call(url, null, 'POST', '/fetch_api_key', {
    username: member.email,
    password: wrongPassword,
  });
  assert.equal(login.status, 401, JSON.stringify(login.body));
  const turnedDown = unique('Unused-pw-');
  secrets['password of a refused user'] = turnedDown;
  const refused = await call(url, owner, 'POST', '/users', {
    email: 'not an email',
    password: turnedDown,
    full_name: 'Refused',
  });
  assert.equal(refused.status, 400, JSON.stringify(refused.body));

  // A wrong API key.
  const wrongKey = unique('WrongKey').padEnd(32, 'x').slice(0, 32);
  secrets['wrong API key'] = wrongKey;
  const denied = await call(url, { ...member, apiKey: wrongKey }, 'GET', '/users/me');
  assert.equal(denied.status, 401);

  // Message content, delivered and edited.
  const content = unique('marker-content-');
  secrets['message content'] = content;
  const sent = await call(url, member, 'POST', '/messages', {
    type: 'direct',
    to: [owner.id],
    content,
  });
  assert.equal(sent.status, 200, JSON.stringify(sent.body));
  const edited = unique('marker-edit-');
  secrets['edited content'] = edited;
  const edit = await call(url, member, 'PATCH', `/messages/${sent.body.id}`, { content: edited });
  assert.equal(edit.status, 200, JSON.stringify(edit.body));

  // An unexpected error while sending; the error carries what a database driver's error
  // carries about the failed statement (PostgreSQL's detail and where quote its values).
  const failing = unique('marker-failed-');
  secrets['content of a failed send'] = failing;
  const quoted = unique('quoted-value-');
  secrets['a value quoted by the driver'] = quoted;
  setFaultHook((point) => {
    if (point !== 'message-inserted') return;
    throw Object.assign(new Error('injected driver failure'), {
      code: '22P02',
      detail: `Key (content)=(${quoted}) is not valid.`,
      where: `unnamed portal parameter $6 = '${quoted}'`,
    });
  });
  const failed = await call(url, member, 'POST', '/messages', {
    type: 'direct',
    to: [owner.id],
    content: failing,
  });
  setFaultHook(null);
  assert.deepEqual(failed, {
    status: 500,
    body: { result: 'error', msg: 'Internal server error', code: 'INTERNAL_SERVER_ERROR' },
  });

  cap.signal('SIGTERM');
  assert.equal(await done, 0, cap.stderr());
  const log = cap.stderr();
  const lines = log
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  // The log is there, and the unexpected error is in it with what helps to debug it.
  assert.ok(lines.some((l) => l.msg === 'Parley started'));
  assert.ok(lines.some((l) => l.msg === 'Parley stopped'));
  const unexpected = lines.filter((l) => l.msg === 'unexpected error');
  assert.equal(unexpected.length, 1, log);
  const logged = unexpected[0].err as Record<string, unknown>;
  assert.equal(logged.message, 'injected driver failure');
  assert.equal(logged.code, '22P02');
  assert.match(String(logged.stack), /injected driver failure/);

  for (const [what, secret] of Object.entries(secrets)) {
    assert.ok(secret.length >= 8, what);
    assert.equal(log.includes(secret), false, `the log holds: ${what}`);
  }
});
