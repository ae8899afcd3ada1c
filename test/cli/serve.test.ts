// parley serve: first start, later starts, graceful stop, event-queue persistence and the
// errors a start can meet. In-process through runCli with fake signals, and as a real
// process over real HTTP.
import { after, afterEach, describe, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import pino from 'pino';
import { runCli } from '../../src/cli/program.ts';
import { untilStopped } from '../../src/cli/signals.ts';
import { EventQueues } from '../../src/events/queues.ts';
import { QUEUES_FILE } from '../../src/main.ts';
import { captureIo, tempDir, waitFor, type CapturedIo } from './io.ts';

const KEY_RE = /^[A-Za-z0-9]{32}$/;
const basic = (email: string, key: string) =>
  `Basic ${Buffer.from(`${email}:${key}`).toString('base64')}`;

/** Start serve in-process; resolves once it printed its first line. */
async function startInProcess(env: Record<string, string>, args: string[] = ['--json']) {
  const cap = captureIo({ PARLEY_PORT: '0', PARLEY_LOG_LEVEL: 'silent', ...env });
  const done = runCli(['serve', ...args], cap.io);
  let finished: number | null = null;
  void done.then((code) => {
    finished = code;
  });
  await waitFor('the serve banner', () => cap.stdout().includes('\n') || finished !== null);
  assert.equal(finished, null, `serve ended early: ${cap.stderr()}`);
  return { cap, done };
}

async function stopInProcess(run: { cap: CapturedIo; done: Promise<number> }) {
  run.cap.signal('SIGTERM');
  assert.equal(await run.done, 0, run.cap.stderr());
  assert.deepEqual(run.cap.exits, []);
}

describe('serve in-process', () => {
  afterEach(() => mock.restoreAll());

  test('first start creates the owner once; the credentials work over HTTP', async () => {
    const dir = tempDir();
    const first = await startInProcess({ PARLEY_DATA_DIR: dir });
    const banner = JSON.parse(first.cap.stdout()) as Record<string, unknown>;
    const url = String(banner.url);
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(String(banner.api_key), KEY_RE);
    assert.match(String(banner.password), /^[A-Za-z0-9]{20}$/);
    assert.deepEqual(banner, {
      url,
      realm_id: 1,
      user_id: 1,
      email: 'owner@127.0.0.1',
      api_key: banner.api_key,
      password: banner.password,
    });
    const me = await fetch(`${url}/api/v1/users/me`, {
      headers: { authorization: basic('owner@127.0.0.1', String(banner.api_key)) },
    });
    assert.equal(me.status, 200);
    const body = (await me.json()) as Record<string, unknown>;
    assert.equal(body.user_id, 1);
    assert.equal(body.email, 'owner@127.0.0.1');
    assert.equal(body.role, 100);
    const login = await fetch(`${url}/api/v1/fetch_api_key`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: 'owner@127.0.0.1', password: String(banner.password) }),
    });
    assert.equal(login.status, 200);
    assert.equal(((await login.json()) as Record<string, unknown>).api_key, banner.api_key);
    // The default external URL follows the bound port.
    const settings = (await (await fetch(`${url}/api/v1/server_settings`)).json()) as Record<
      string,
      unknown
    >;
    assert.equal(settings.realm_url, url);
    await stopInProcess(first);

    const again = await startInProcess({ PARLEY_DATA_DIR: dir });
    const later = JSON.parse(again.cap.stdout()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(later), ['url']);
    assert.equal(again.cap.stdout(), `${JSON.stringify(later)}\n`);
    await stopInProcess(again);
  });

  test('an organization made with create-realm means no first-start owner', async () => {
    const dir = tempDir();
    const env = { PARLEY_DATA_DIR: dir, PARLEY_LOG_LEVEL: 'silent' };
    const cap = captureIo(env);
    const code = await runCli(
      [
        'create-realm',
        '--name',
        'Acme',
        '--subdomain',
        'acme',
        '--owner-email',
        'boss@acme.test',
        '--owner-name',
        'Bea Boss',
      ],
      cap.io,
    );
    assert.equal(code, 0, cap.stderr());
    const run = await startInProcess(env, []);
    assert.match(run.cap.stdout(), /^Parley is running at http:\/\/127\.0\.0\.1:\d+\n$/);
    await stopInProcess(run);
  });

  test('an event queue survives a restart and gets a restart event', async () => {
    const dir = tempDir();
    const first = await startInProcess({ PARLEY_DATA_DIR: dir });
    const banner = JSON.parse(first.cap.stdout()) as Record<string, string>;
    const auth = { authorization: basic(banner.email, banner.api_key) };
    const registered = await fetch(`${banner.url}/api/v1/register`, {
      method: 'POST',
      headers: auth,
    });
    assert.equal(registered.status, 200);
    const queueId = ((await registered.json()) as Record<string, unknown>).queue_id as string;
    await stopInProcess(first);
    assert.ok(existsSync(join(dir, QUEUES_FILE)));

    const second = await startInProcess({ PARLEY_DATA_DIR: dir });
    const url = JSON.parse(second.cap.stdout()).url as string;
    const query = new URLSearchParams({
      queue_id: queueId,
      last_event_id: '-1',
      dont_block: 'true',
    });
    const polled = await fetch(`${url}/api/v1/events?${query}`, { headers: auth });
    assert.equal(polled.status, 200);
    const events = ((await polled.json()) as { events: Array<{ type: string }> }).events;
    assert.deepEqual(
      events.map((e) => e.type),
      ['restart'],
    );
    await stopInProcess(second);
  });

  test(
    'a stop answers a parked long-poll instead of waiting for its heartbeat',
    { timeout: 30_000 },
    async () => {
      const run = await startInProcess({ PARLEY_DATA_DIR: tempDir() });
      const banner = JSON.parse(run.cap.stdout()) as Record<string, string>;
      const auth = { authorization: basic(banner.email, banner.api_key) };
      const registered = await fetch(`${banner.url}/api/v1/register`, {
        method: 'POST',
        headers: auth,
      });
      const queueId = ((await registered.json()) as Record<string, unknown>).queue_id as string;
      const query = new URLSearchParams({ queue_id: queueId, last_event_id: '-1' });
      const poll = fetch(`${banner.url}/api/v1/events?${query}`, { headers: auth });
      // Let the poll park (the heartbeat is 45 s away).
      await new Promise((r) => setTimeout(r, 300));
      await stopInProcess(run);
      const answered = await poll;
      assert.equal(answered.status, 200);
      assert.equal(((await answered.json()) as Record<string, unknown>).result, 'success');
    },
  );

  test('queues saved by a stop are restored at the next start and the file removed', async () => {
    const dir = tempDir();
    const file = join(dir, QUEUES_FILE);
    const saved: string[] = [];
    const restored: string[] = [];
    mock.method(EventQueues.prototype, 'saveTo', async (path: string) => {
      saved.push(path);
      writeFileSync(path, '{"queues":[]}');
    });
    mock.method(EventQueues.prototype, 'restoreFrom', async (path: string) => {
      restored.push(path);
      return 0;
    });
    const first = await startInProcess({ PARLEY_DATA_DIR: dir });
    assert.deepEqual(restored, []);
    await stopInProcess(first);
    assert.deepEqual(saved, [file]);
    assert.ok(existsSync(file));

    const second = await startInProcess({ PARLEY_DATA_DIR: dir });
    assert.deepEqual(restored, [file]);
    assert.equal(existsSync(file), false);
    await stopInProcess(second);
  });

  test('a queue file that cannot be restored is set aside and the start goes on', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, QUEUES_FILE), 'not json');
    mock.method(EventQueues.prototype, 'restoreFrom', async () => {
      throw new Error('unreadable');
    });
    const run = await startInProcess({ PARLEY_DATA_DIR: dir }, []);
    assert.match(run.cap.stdout(), /^Parley is running at /);
    const files = readdirSync(dir).filter((f) => f.startsWith(QUEUES_FILE));
    assert.equal(files.length, 1);
    assert.match(files[0], /^event-queues\.json\.unreadable-\d+$/);
    await stopInProcess(run);
  });

  test('a second stop signal exits at once with code 1', async () => {
    const run = await startInProcess({ PARLEY_DATA_DIR: tempDir() });
    run.cap.signal('SIGTERM');
    run.cap.signal('SIGINT');
    assert.deepEqual(run.cap.exits, [1]);
    assert.equal(await run.done, 0);
  });

  test(
    'the listening socket has the backlog PARLEY_LISTEN_BACKLOG asks for',
    { skip: spawnSync('ss', ['-V']).status === 0 ? false : 'ss (iproute2) is not installed' },
    async () => {
      const run = await startInProcess({
        PARLEY_DATA_DIR: tempDir(),
        PARLEY_LISTEN_BACKLOG: '1234',
      });
      try {
        const port = new URL(String(JSON.parse(run.cap.stdout()).url)).port;
        // For a listening socket, ss shows the backlog as its Send-Q.
        const listening = spawnSync('ss', ['-ltnH', `sport = :${port}`], { encoding: 'utf8' });
        assert.deepEqual(listening.stdout.trim().split(/\s+/).slice(0, 4), [
          'LISTEN',
          '0',
          '1234',
          `127.0.0.1:${port}`,
        ]);
      } finally {
        await stopInProcess(run);
      }
    },
  );

  test('the start log says whether idle garbage collection runs (PARLEY_IDLE_GC)', async () => {
    const started = async (env: Record<string, string>) => {
      const run = await startInProcess({
        PARLEY_DATA_DIR: tempDir(),
        PARLEY_LOG_LEVEL: 'info',
        ...env,
      });
      await stopInProcess(run);
      const lines = run.cap
        .stderr()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      return lines.find((l) => l.msg === 'Parley started')?.idleGc;
    };
    assert.equal(await started({}), true);
    assert.equal(await started({ PARLEY_IDLE_GC: 'off' }), false);
  });

  test('a server on SQLite leaves checkpoints to a worker thread and says so', async () => {
    const dir = tempDir();
    const run = await startInProcess({ PARLEY_DATA_DIR: dir, PARLEY_LOG_LEVEL: 'info' });
    await stopInProcess(run);
    const started = run.cap
      .stderr()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === 'Parley started');
    assert.equal(started?.backgroundCheckpoints, true);
    // The stop closed both connections; the last one to close removed the WAL.
    assert.equal(existsSync(join(dir, 'parley.sqlite3-wal')), false);
  });

  test('a port in use stops the start with one line naming PARLEY_PORT', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    after(() => blocker.close());
    const port = (blocker.address() as AddressInfo).port;
    const cap = captureIo({
      PARLEY_PORT: String(port),
      PARLEY_DATA_DIR: tempDir(),
      PARLEY_LOG_LEVEL: 'silent',
    });
    assert.equal(await runCli(['serve'], cap.io), 1);
    assert.equal(cap.stdout(), '');
    assert.equal(cap.stderr(), `error: PARLEY_PORT: 127.0.0.1:${port} is already in use\n`);
  });

  test('a data directory that cannot be created names PARLEY_DATA_DIR', async () => {
    const file = join(tempDir(), 'a-file');
    writeFileSync(file, '');
    const cap = captureIo({ PARLEY_PORT: '0', PARLEY_DATA_DIR: join(file, 'data') });
    assert.equal(await runCli(['serve'], cap.io), 1);
    assert.equal(cap.stdout(), '');
    assert.match(
      cap.stderr(),
      new RegExp(
        `^error: PARLEY_DATA_DIR: cannot write to "${join(file, 'data')}" \\(ENOTDIR[^\\n]*\\)\\n$`,
      ),
    );
  });

  test('an unreachable database names PARLEY_DATABASE_URL', async () => {
    const cap = captureIo({
      PARLEY_PORT: '0',
      PARLEY_DATA_DIR: tempDir(),
      PARLEY_DATABASE_URL: 'postgres://parley@127.0.0.1:1/parley',
      PARLEY_LOG_LEVEL: 'silent',
    });
    assert.equal(await runCli(['serve'], cap.io), 1);
    assert.equal(cap.stdout(), '');
    assert.equal(
      cap.stderr(),
      'error: PARLEY_DATABASE_URL: cannot use the database (connect ECONNREFUSED 127.0.0.1:1)\n',
    );
  });
});

test('an unreachable Redis names PARLEY_REDIS_URL', async () => {
  const cap = captureIo({
    PARLEY_PORT: '0',
    PARLEY_DATA_DIR: tempDir(),
    PARLEY_REDIS_URL: 'redis://127.0.0.1:1',
    PARLEY_LOG_LEVEL: 'silent',
  });
  assert.equal(await runCli(['serve'], cap.io), 1);
  assert.equal(cap.stdout(), '');
  assert.equal(
    cap.stderr(),
    'error: PARLEY_REDIS_URL: cannot connect to Redis (connect ECONNREFUSED 127.0.0.1:1)\n',
  );
});

describe('untilStopped', () => {
  const log = pino({ level: 'silent' });
  const signals = () => {
    let handler: ((s: string) => void) | null = null;
    return {
      onStopSignal(h: (s: string) => void) {
        handler = h;
        return () => {
          handler = null;
        };
      },
      send: (s = 'SIGTERM') => handler?.(s),
      listening: () => handler !== null,
    };
  };

  test('resolves after a clean stop and stops listening', async () => {
    const sig = signals();
    const exits: number[] = [];
    let stops = 0;
    const done = untilStopped({
      stop: async () => {
        stops++;
      },
      onStopSignal: sig.onStopSignal,
      exit: (c) => exits.push(c),
      log,
    });
    sig.send();
    await done;
    assert.equal(stops, 1);
    assert.deepEqual(exits, []);
    assert.equal(sig.listening(), false);
  });

  test('a stop that overruns the deadline forces exit(1)', async () => {
    const sig = signals();
    const exits: number[] = [];
    void untilStopped({
      stop: () => new Promise<void>(() => undefined),
      onStopSignal: sig.onStopSignal,
      exit: (c) => exits.push(c),
      log,
      deadlineMs: 5,
    });
    sig.send();
    await waitFor('the forced exit', () => exits.length > 0, 5000);
    assert.deepEqual(exits, [1]);
  });

  test('a failing stop rejects', async () => {
    const sig = signals();
    const done = untilStopped({
      stop: async () => {
        throw new Error('disk full');
      },
      onStopSignal: sig.onStopSignal,
      exit: () => assert.fail('no forced exit'),
      log,
    });
    sig.send();
    await assert.rejects(done, { message: 'disk full' });
  });
});

describe('serve as a real process', () => {
  const children: ChildProcess[] = [];
  after(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  });

  function spawnCli(args: string[], env: Record<string, string>) {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    let status: { code: number | null; signal: string | null } | null = null;
    void exited.then((s) => (status = s));
    return {
      child,
      stdout: () => stdout,
      stderr: () => stderr,
      status: () => status,
      async exit(timeoutMs = 30_000) {
        await waitFor('the process to exit', () => status, timeoutMs);
        return status!;
      },
    };
  }

  test(
    'prints the banner once, serves the printed credentials, stops on SIGTERM',
    {
      timeout: 120_000,
    },
    async () => {
      const env = { PARLEY_PORT: '0', PARLEY_DATA_DIR: tempDir(), PARLEY_LOG_LEVEL: 'warn' };
      const first = spawnCli(['serve'], env);
      await waitFor(
        'the first-start banner',
        () => first.stdout().includes('/api/v1/users/me\n') || first.status(),
        60_000,
      );
      const lines = first.stdout().split('\n');
      const url = /^Parley is running at (http:\/\/127\.0\.0\.1:\d+)$/.exec(lines[0])?.[1];
      assert.ok(url, first.stdout() + first.stderr());
      const key = /^ {2}API key: {2}([A-Za-z0-9]{32})$/.exec(lines[4])?.[1];
      const password = /^ {2}password: ([A-Za-z0-9]{20})$/.exec(lines[5])?.[1];
      assert.ok(key && password, first.stdout());
      assert.deepEqual(lines, [
        `Parley is running at ${url}`,
        '',
        'Created the organization "Parley" and its owner. This is shown only once:',
        '  email:    owner@127.0.0.1',
        `  API key:  ${key}`,
        `  password: ${password}`,
        '',
        'Try it:',
        `  curl -sSu owner@127.0.0.1:${key} ${url}/api/v1/users/me`,
        '',
      ]);
      // The curl line's credentials and URL, as curl would send them.
      const [, , userPass, target] = lines[8].trim().split(' ');
      const me = await fetch(target, {
        headers: { authorization: `Basic ${Buffer.from(userPass).toString('base64')}` },
      });
      assert.equal(me.status, 200);
      const body = (await me.json()) as Record<string, unknown>;
      assert.equal(body.result, 'success');
      assert.equal(body.email, 'owner@127.0.0.1');
      assert.equal(body.role, 100);

      // Pasted into a shell, where curl is installed.
      if (spawnSync('curl', ['--version']).status === 0) {
        const pasted = spawnSync('sh', ['-c', lines[8].trim()], {
          encoding: 'utf8',
          timeout: 30_000,
        });
        assert.equal(pasted.status, 0, pasted.stderr);
        assert.equal(
          (JSON.parse(pasted.stdout) as Record<string, unknown>).email,
          'owner@127.0.0.1',
        );
      }

      first.child.kill('SIGTERM');
      assert.deepEqual(await first.exit(), { code: 0, signal: null });
      assert.equal(first.stderr(), '');

      const second = spawnCli(['serve'], env);
      await waitFor(
        'the second start',
        () => second.stdout().includes('\n') || second.status(),
        60_000,
      );
      second.child.kill('SIGTERM');
      assert.deepEqual(await second.exit(), { code: 0, signal: null });
      assert.match(second.stdout(), /^Parley is running at http:\/\/127\.0\.0\.1:\d+\n$/);
      assert.equal(second.stderr(), '');
    },
  );

  test(
    'npm start runs the server, and SIGTERM to npm stops it gracefully',
    { timeout: 120_000 },
    async () => {
      // Under `npm test` npm_execpath names the npm that runs us; otherwise npm on the PATH.
      const npm = process.env.npm_execpath;
      const child = spawn(npm ? process.execPath : 'npm', npm ? [npm, 'start'] : ['start'], {
        env: {
          PATH: process.env.PATH ?? '',
          PARLEY_PORT: '0',
          PARLEY_DATA_DIR: tempDir(),
          PARLEY_LOG_LEVEL: 'info',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      let status: { code: number | null; signal: string | null } | null = null;
      child.on('exit', (code, signal) => (status = { code, signal }));
      const url = await waitFor(
        'the banner of npm start',
        () => /^Parley is running at (\S+)$/m.exec(stdout)?.[1] ?? status,
        60_000,
      );
      assert.equal(typeof url, 'string', stdout + stderr);
      child.kill('SIGTERM');
      assert.deepEqual(await waitFor('npm to exit', () => status, 30_000), {
        code: 0,
        signal: null,
      });
      // The server itself stopped (no orphan left listening) after a graceful stop.
      await waitFor(
        'the server log of the stop',
        () => stderr.includes('"msg":"Parley stopped"'),
        10_000,
      );
      await assert.rejects(fetch(`${String(url)}/api/v1/server_settings`));
    },
  );

  test('a bad setting exits 1 with one line on stderr', { timeout: 60_000 }, async () => {
    const run = spawnCli(['serve'], { PARLEY_PORT: 'eighty', PARLEY_DATA_DIR: tempDir() });
    assert.deepEqual(await run.exit(), { code: 1, signal: null });
    assert.equal(run.stdout(), '');
    assert.equal(
      run.stderr(),
      'error: PARLEY_PORT must be a whole number from 0 to 65535 (got "eighty")\n',
    );
  });

  test('bin/parley.js runs the CLI', { timeout: 60_000 }, async () => {
    const child = spawn(process.execPath, ['bin/parley.js', '--version'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    assert.equal(code, 0);
    assert.match(out, /^\d+\.\d+\.\d+\n$/);
  });
});
