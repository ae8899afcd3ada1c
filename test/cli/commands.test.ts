// The CLI in-process against a test app's context: exact output, exit codes, and the
// created accounts working over HTTP.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { SUCCESS } from '../support/client.ts';
import * as realmsStore from '../../src/store/realms.ts';
import * as usersStore from '../../src/store/users.ts';
import { PARLEY_VERSION } from '../../src/version.ts';
import { cli, tempDir } from './io.ts';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(async () => {
  await t.close();
});

const KEY_RE = /^[A-Za-z0-9]{32}$/;
const run = (args: string[], env: Record<string, string> = {}) => cli(args, env, t.ctx);

/** The one JSON object a --json command prints, checked to be exactly one line. */
function parseJsonLine(stdout: string): Record<string, unknown> {
  const lines = stdout.split('\n');
  assert.equal(lines.length, 2, `one line expected, got ${JSON.stringify(stdout)}`);
  assert.equal(lines[1], '');
  return JSON.parse(lines[0]) as Record<string, unknown>;
}

/** A failed command: exit 1, nothing on stdout, exactly this one line on stderr. */
async function assertFails(args: string[], message: string, env: Record<string, string> = {}) {
  const res = await run(args, env);
  assert.deepEqual(res, { code: 1, stdout: '', stderr: `error: ${message}\n` });
}

describe('create-user', () => {
  test('--json prints the ids, email and API key, and the user can authenticate', async () => {
    const res = await run([
      'create-user',
      '--realm',
      '',
      '--email',
      'New.Person@Parley.test',
      '--full-name',
      'New Person',
      '--json',
    ]);
    assert.equal(res.code, 0);
    assert.equal(res.stderr, '');
    const out = parseJsonLine(res.stdout);
    assert.match(String(out.api_key), KEY_RE);
    assert.equal(typeof out.user_id, 'number');
    assert.deepEqual(out, {
      realm_id: t.fx.realm.id,
      user_id: out.user_id,
      email: 'new.person@parley.test',
      api_key: out.api_key,
    });
    const me = await t
      .as({ email: 'new.person@parley.test', api_key: String(out.api_key) })
      .get('/users/me');
    assert.equal(me.status, 200);
    assert.equal(me.body.user_id, out.user_id);
    assert.equal(me.body.full_name, 'New Person');
    assert.equal(me.body.role, 400);
    // No --password: the API key is the only login.
    const login = await t
      .as(null)
      .post('/fetch_api_key', { username: 'new.person@parley.test', password: 'anything' });
    assert.equal(login.status, 401);
  });

  for (const [role, value] of [
    ['owner', 100],
    ['admin', 200],
    ['moderator', 300],
    ['member', 400],
    ['guest', 600],
  ] as const) {
    test(`--role ${role} creates a user with role ${value}`, async () => {
      const email = `role-${role}@parley.test`;
      const res = await run([
        'create-user',
        '--realm',
        '',
        '--email',
        email,
        '--full-name',
        `Role ${role}`,
        '--role',
        role,
        '--json',
      ]);
      assert.equal(res.code, 0, res.stderr);
      const out = parseJsonLine(res.stdout);
      const me = await t.as({ email, api_key: String(out.api_key) }).get('/users/me');
      assert.equal(me.status, 200);
      assert.equal(me.body.role, value);
    });
  }

  test('--password lets the user fetch their API key with it', async () => {
    const res = await run([
      'create-user',
      '--realm',
      'other',
      '--email',
      'pw@other.test',
      '--full-name',
      'Pat Word',
      '--password',
      'correct horse',
      '--json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const out = parseJsonLine(res.stdout);
    assert.equal(out.realm_id, t.fx.other.id);
    const login = await t
      .as({ email: '', api_key: '', host: 'other.parley.test' })
      .withHeaders({ authorization: '' })
      .post('/fetch_api_key', { username: 'pw@other.test', password: 'correct horse' });
    assert.equal(login.status, 200);
    assert.deepEqual(login.body, {
      ...SUCCESS,
      api_key: out.api_key,
      email: 'pw@other.test',
      user_id: out.user_id,
    });
  });

  test('without --json prints the same fields as lines', async () => {
    const res = await run([
      'create-user',
      '--realm',
      '',
      '--email',
      'text@parley.test',
      '--full-name',
      'Tex Text',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const user = (await usersStore.getUserByEmail(t.ctx.db, t.fx.realm.id, 'text@parley.test'))!;
    assert.equal(
      res.stdout,
      [
        'Created the member text@parley.test:',
        `realm_id: ${t.fx.realm.id}`,
        `user_id:  ${user.id}`,
        'email:    text@parley.test',
        `api_key:  ${user.api_key}`,
        '',
      ].join('\n'),
    );
  });

  test('refuses an email already in use', async () => {
    await assertFails(
      ['create-user', '--realm', '', '--email', 'member@parley.test', '--full-name', 'Dup'],
      "Email 'member@parley.test' already in use",
    );
  });

  test('refuses an invalid email, name and password', async () => {
    const base = ['create-user', '--realm', ''];
    await assertFails(
      [...base, '--email', 'not-an-email', '--full-name', 'Xavier'],
      "Invalid email 'not-an-email'",
    );
    await assertFails(
      [...base, '--email', 'x@parley.test', '--full-name', '  '],
      'Name too short!',
    );
    await assertFails(
      [...base, '--email', 'x@parley.test', '--full-name', 'Xavier', '--password', 'abc'],
      'The password is too weak.',
    );
    assert.equal(
      await usersStore.getUserByEmail(t.ctx.db, t.fx.realm.id, 'x@parley.test'),
      undefined,
    );
  });

  test('refuses an unknown organization', async () => {
    await assertFails(
      ['create-user', '--realm', 'nope', '--email', 'x@parley.test', '--full-name', 'Xavier'],
      "There is no organization with subdomain 'nope'",
    );
  });

  test('refuses an unknown role and missing options with one usage line', async () => {
    const bad = await run([
      'create-user',
      '--realm',
      '',
      '--email',
      'x@parley.test',
      '--full-name',
      'X',
      '--role',
      'king',
    ]);
    assert.deepEqual(bad, {
      code: 1,
      stdout: '',
      stderr:
        "error: option '--role <role>' argument 'king' is invalid. Allowed choices are owner, admin, moderator, member, guest.\n",
    });
    const missing = await run(['create-user', '--realm', '', '--email', 'x@parley.test']);
    assert.deepEqual(missing, {
      code: 1,
      stdout: '',
      stderr: "error: required option '--full-name <name>' not specified\n",
    });
  });
});

describe('create-realm', () => {
  test('--json prints the ids, email, API key and URL; the owner authenticates on its host', async () => {
    const res = await run([
      'create-realm',
      '--name',
      'Acme Corp',
      '--subdomain',
      'acme',
      '--owner-email',
      'boss@acme.test',
      '--owner-name',
      'Bea Boss',
      '--owner-password',
      'boss-password',
      '--json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const out = parseJsonLine(res.stdout);
    assert.match(String(out.api_key), KEY_RE);
    const realm = (await realmsStore.getRealmByStringId(t.ctx.db, 'acme'))!;
    assert.equal(realm.name, 'Acme Corp');
    assert.deepEqual(out, {
      realm_id: realm.id,
      user_id: out.user_id,
      email: 'boss@acme.test',
      api_key: out.api_key,
      realm_url: 'http://acme.parley.test',
    });
    const owner = {
      email: 'boss@acme.test',
      api_key: String(out.api_key),
      host: 'acme.parley.test',
    };
    const me = await t.as(owner).get('/users/me');
    assert.equal(me.status, 200);
    assert.equal(me.body.user_id, out.user_id);
    assert.equal(me.body.role, 100);
    assert.equal(me.body.full_name, 'Bea Boss');
    // The owner belongs to the new organization only.
    const elsewhere = await t.as({ ...owner, host: 'parley.test' }).get('/users/me');
    assert.equal(elsewhere.status, 401);
    const login = await t
      .as({ email: '', api_key: '', host: 'acme.parley.test' })
      .withHeaders({ authorization: '' })
      .post('/fetch_api_key', { username: 'boss@acme.test', password: 'boss-password' });
    assert.equal(login.status, 200);
    assert.equal(login.body.api_key, out.api_key);
  });

  test("without --json prints the URL and the owner's credentials", async () => {
    const res = await run([
      'create-realm',
      '--name',
      'Beta',
      '--subdomain',
      'beta',
      '--owner-email',
      'b@beta.test',
      '--owner-name',
      'Bo Beta',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const realm = (await realmsStore.getRealmByStringId(t.ctx.db, 'beta'))!;
    const owner = (await usersStore.getUserByEmail(t.ctx.db, realm.id, 'b@beta.test'))!;
    assert.equal(
      res.stdout,
      [
        'Created the organization at http://beta.parley.test and its owner:',
        `realm_id: ${realm.id}`,
        `user_id:  ${owner.id}`,
        'email:    b@beta.test',
        `api_key:  ${owner.api_key}`,
        '',
      ].join('\n'),
    );
  });

  test('refuses a subdomain in use or malformed', async () => {
    const args = (sub: string) => [
      'create-realm',
      '--name',
      'X',
      '--subdomain',
      sub,
      '--owner-email',
      'x@x.test',
      '--owner-name',
      'Xavier',
    ];
    await assertFails(args('other'), "Subdomain 'other' is already in use.");
    await assertFails(args(''), 'The default organization already exists.');
    await assertFails(
      args('-bad-'),
      'Subdomains may contain only lowercase letters, digits and dashes, and may not start or end with a dash.',
    );
  });

  test('checks the owner before creating anything', async () => {
    const args = (email: string, password: string) => [
      'create-realm',
      '--name',
      'Never',
      '--subdomain',
      'never',
      '--owner-email',
      email,
      '--owner-name',
      'Nick',
      '--owner-password',
      password,
    ];
    await assertFails(args('nobody', 'long-enough'), "Invalid email 'nobody'");
    await assertFails(args('n@never.test', 'abc'), 'The password is too weak.');
    assert.equal(await realmsStore.getRealmByStringId(t.ctx.db, 'never'), undefined);
  });
});

describe('change-api-key', () => {
  test('replaces the key: the old one stops working, the new one works', async () => {
    const created = parseJsonLine(
      (
        await run([
          'create-user',
          '--realm',
          '',
          '--email',
          'rekey@parley.test',
          '--full-name',
          'Re Key',
          '--json',
        ])
      ).stdout,
    );
    const res = await run([
      'change-api-key',
      '--realm',
      '',
      '--email',
      'ReKey@parley.test',
      '--json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const out = parseJsonLine(res.stdout);
    assert.match(String(out.api_key), KEY_RE);
    assert.notEqual(out.api_key, created.api_key);
    assert.deepEqual(out, {
      realm_id: t.fx.realm.id,
      user_id: created.user_id,
      email: 'rekey@parley.test',
      api_key: out.api_key,
    });
    const old = await t
      .as({ email: 'rekey@parley.test', api_key: String(created.api_key) })
      .get('/users/me');
    assert.equal(old.status, 401);
    const fresh = await t
      .as({ email: 'rekey@parley.test', api_key: String(out.api_key) })
      .get('/users/me');
    assert.equal(fresh.status, 200);
    assert.equal(fresh.body.user_id, created.user_id);
  });

  test('without --json prints the new key', async () => {
    const res = await run(['change-api-key', '--realm', 'other', '--email', 'owner@other.test']);
    assert.equal(res.code, 0, res.stderr);
    const user = (await usersStore.getUserById(t.ctx.db, t.fx.other.id, t.fx.otherOwner.id))!;
    assert.notEqual(user.api_key, t.fx.otherOwner.api_key);
    assert.equal(
      res.stdout,
      [
        'New API key for owner@other.test:',
        `realm_id: ${t.fx.other.id}`,
        `user_id:  ${user.id}`,
        'email:    owner@other.test',
        `api_key:  ${user.api_key}`,
        '',
      ].join('\n'),
    );
  });

  test('refuses an unknown user or organization', async () => {
    await assertFails(
      ['change-api-key', '--realm', '', '--email', 'owner@other.test'],
      "There is no user 'owner@other.test' in this organization",
    );
    await assertFails(
      ['change-api-key', '--realm', 'gone', '--email', 'owner@parley.test'],
      "There is no organization with subdomain 'gone'",
    );
  });
});

describe('migrate', () => {
  test('applies the migrations once, then reports the database up to date', async () => {
    const env = { PARLEY_DATA_DIR: tempDir(), PARLEY_LOG_LEVEL: 'silent' };
    const first = await cli(['migrate'], env);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stderr, '');
    const lines = first.stdout.trimEnd().split('\n');
    assert.equal(lines[0], 'Applied 0001_initial');
    for (const line of lines) assert.match(line, /^Applied \d{4}_[a-z0-9_]+$/);
    assert.deepEqual(await cli(['migrate'], env), {
      code: 0,
      stdout: 'The database is up to date.\n',
      stderr: '',
    });
    assert.deepEqual(await cli(['migrate', '--json'], env), {
      code: 0,
      stdout: '{"applied":[]}\n',
      stderr: '',
    });
  });

  test('--json lists what it applied', async () => {
    const res = await cli(['migrate', '--json'], { PARLEY_DATA_DIR: tempDir() });
    assert.equal(res.code, 0, res.stderr);
    const out = parseJsonLine(res.stdout);
    assert.deepEqual(Object.keys(out), ['applied']);
    assert.equal((out.applied as string[])[0], '0001_initial');
  });
});

describe('the program', () => {
  test('a bad setting stops any command with one line naming the variable', async () => {
    await assertFails(
      ['create-user', '--realm', '', '--email', 'x@parley.test', '--full-name', 'Xavier'],
      'PARLEY_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")',
      { PARLEY_LOG_LEVEL: 'loud' },
    );
    await assertFails(['migrate'], 'PARLEY_PORT must be a whole number from 0 to 65535 (got "x")', {
      PARLEY_PORT: 'x',
    });
  });

  test('--version prints the version', async () => {
    assert.deepEqual(await cli(['--version']), {
      code: 0,
      stdout: `${PARLEY_VERSION}\n`,
      stderr: '',
    });
  });

  test('no command prints the usage on stderr and fails', async () => {
    const res = await cli([]);
    assert.equal(res.code, 1);
    assert.equal(res.stdout, '');
    assert.match(res.stderr, /^Usage: parley \[options\] \[command\]/);
    for (const name of ['serve', 'migrate', 'create-realm', 'create-user', 'change-api-key']) {
      assert.match(res.stderr, new RegExp(`\\n  ${name} `));
    }
  });

  test('an unknown command fails with one line', async () => {
    assert.deepEqual(await cli(['launch']), {
      code: 1,
      stdout: '',
      stderr: "error: unknown command 'launch'\n",
    });
  });
});
