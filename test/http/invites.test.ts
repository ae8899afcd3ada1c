// Invitations: GET/POST /invites, POST /invites/multiuse, DELETE /invites/{id} and
// /invites/multiuse/{id}, POST /invites/{id}/resend, the invites_changed event, the mail
// sent, and signup through POST /invites/accept.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { memoryMailer } from '../../src/infra/mailer.ts';
import { buildTestApp, type TestApp } from '../support/app.ts';
import type { Client } from '../support/client.ts';
import { T0, useClock } from '../support/messages.ts';
import { captureNotices, ids, type NoticeLog } from '../support/notices.ts';
import { callerFor, err, EVERY_CALLER, OK, UNAUTHORIZED, type Who } from '../support/callers.ts';

let t: TestApp;
let bus: NoticeLog;
let mail: ReturnType<typeof memoryMailer>;
let setNow: (s: number) => void;
beforeEach(async () => {
  mail = memoryMailer();
  t = await buildTestApp({ mailer: mail });
  setNow = useClock(t);
  bus = captureNotices(t);
});
afterEach(async () => {
  await t.close();
});

const as = (who: Who): Client => callerFor(t, who);
const GUEST = err('Not allowed for guest users');
const BOT = err('This endpoint does not accept bot requests.');
const INSUFFICIENT = err('Insufficient permission', 'UNAUTHORIZED_PRINCIPAL');
const MUST_BE_ADMIN = err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
const DAY = 24 * 60 * 60;
const REALM_URL = 'http://parley.test';

const changed = (...users: Array<{ id: number }>) => ({
  event: { type: 'invites_changed' },
  users: ids(t.fx.owner, t.fx.admin, ...users.filter((u) => u !== t.fx.owner && u !== t.fx.admin)),
});
const inviteBody = (emails: string, extra: Record<string, unknown> = {}) => ({
  invitee_emails: emails,
  stream_ids: [],
  ...extra,
});
const keyOf = (link: string) => /\/join\/([A-Za-z0-9]+)\/$/.exec(link)![1];
const mailKey = (text: string) => /key=([A-Za-z0-9]+)/.exec(text)![1];

describe('POST /invites and GET /invites', () => {
  test('a member invites two addresses: listed for them and administrators, mail sent, event', async () => {
    const res = await as('member').post(
      '/invites',
      inviteBody('new1@example.com, Someone New <NEW2@example.com>\n', {
        stream_ids: [t.fx.channels.general.id],
      }),
    );
    assert.deepEqual(res.body, OK);
    assert.deepEqual(await bus.take(), [changed(t.fx.member)]);
    const expected = [1, 2].map((id) => ({
      id,
      invited_by_user_id: t.fx.member.id,
      invited: T0,
      expiry_date: T0 + 10 * DAY,
      invited_as: 400,
      email: `new${id}@example.com`,
      notify_referrer_on_join: true,
      is_multiuse: false,
    }));
    for (const who of ['member', 'admin', 'owner'] as const) {
      assert.deepEqual((await as(who).get('/invites')).body, { ...OK, invites: expected }, who);
    }
    for (const who of ['member2', 'moderator'] as const) {
      assert.deepEqual((await as(who).get('/invites')).body, { ...OK, invites: [] }, who);
    }
    assert.deepEqual(
      mail.sent.map((m) => [m.to, m.subject]),
      [
        ['new1@example.com', `${t.fx.member.full_name} invited you to join Parley Test`],
        ['new2@example.com', `${t.fx.member.full_name} invited you to join Parley Test`],
      ],
    );
    assert.match(mail.sent[0].text, new RegExp(`${REALM_URL}/join/[A-Za-z0-9]{24}/`));
  });

  test('expiry: a given number of minutes, null for never; expired invitations are never listed', async () => {
    await as('admin').post(
      '/invites',
      inviteBody('a@example.com', { invite_expires_in_minutes: 60 }),
    );
    await as('admin').post(
      '/invites',
      inviteBody('b@example.com', { invite_expires_in_minutes: null, invite_as: 600 }),
    );
    const list = async () =>
      ((await as('admin').get('/invites')).body.invites as Array<Record<string, unknown>>).map(
        (i) => [i.email, i.expiry_date, i.invited_as],
      );
    assert.deepEqual(await list(), [
      ['a@example.com', T0 + 3600, 400],
      ['b@example.com', null, 600],
    ]);
    setNow(T0 + 3600);
    assert.deepEqual(await list(), [['b@example.com', null, 600]]);
  });

  test('who may invite: can_invite_users_group (members), never guests or bots', async () => {
    let n = 0;
    for (const who of EVERY_CALLER) {
      const res = await as(who).post('/invites', inviteBody(`x${n++}@example.com`));
      const expected = ['owner', 'admin', 'moderator', 'member'].includes(who)
        ? { status: 200, body: OK }
        : who === 'guest'
          ? { status: 400, body: GUEST }
          : who === 'bot'
            ? { status: 400, body: BOT }
            : { status: 401, body: UNAUTHORIZED[who] };
      assert.deepEqual({ status: res.status, body: res.body }, expected, who);
      const events = await bus.take();
      assert.deepEqual(events, expected.status === 200 ? [changed(t.fx[who as 'owner'])] : [], who);
    }
  });

  test('invite_as: administrators and moderators by administrators, owners by owners', async () => {
    const cases: Array<[Who, number, Record<string, unknown>]> = [
      ['member', 300, MUST_BE_ADMIN],
      ['member', 200, MUST_BE_ADMIN],
      ['moderator', 200, MUST_BE_ADMIN],
      ['admin', 100, err('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL')],
      ['member', 500, err('Invalid invite_as')],
      ['admin', 200, OK],
      ['owner', 100, OK],
      ['member', 600, OK],
    ];
    let n = 0;
    for (const [who, role, body] of cases) {
      const res = await as(who).post(
        '/invites',
        inviteBody(`r${n++}@example.com`, { invite_as: role }),
      );
      assert.deepEqual(res.body, body, `${who} ${role}`);
    }
  });

  test('refusals: no address, bad addresses, bad channels and groups, bad expiry', async () => {
    const cases: Array<[Record<string, unknown>, Record<string, unknown>]> = [
      [inviteBody(' , \n'), err('You must specify at least one email address.')],
      [
        inviteBody('ok@example.com, not-an-address'),
        {
          ...err(
            "Some emails did not validate, so we didn't send any invitations.",
            'INVITATION_FAILED',
          ),
          errors: [['not-an-address', 'Invalid address.', false]],
          sent_invitations: false,
          license_limit_reached: false,
          daily_limit_reached: false,
        },
      ],
      [
        inviteBody('ok@example.com', { stream_ids: [t.fx.channels.secret.id] }),
        err(`Invalid channel ID ${t.fx.channels.secret.id}. No invites were sent.`),
      ],
      [
        inviteBody('ok@example.com', { stream_ids: [999999] }),
        err('Invalid channel ID 999999. No invites were sent.'),
      ],
      [inviteBody('ok@example.com', { group_ids: [999999] }), err('Invalid user group ID: 999999')],
      [
        inviteBody('ok@example.com', { invite_expires_in_minutes: 0 }),
        err('Invalid invite_expires_in_minutes'),
      ],
    ];
    for (const [params, body] of cases) {
      const res = await as('member').post('/invites', params);
      assert.deepEqual(
        { status: res.status, body: res.body },
        { status: 400, body },
        JSON.stringify(params),
      );
    }
    assert.deepEqual(await bus.take(), []);
    assert.deepEqual(mail.sent, []);
    assert.deepEqual((await as('admin').get('/invites')).body.invites, []);
  });

  test('existing accounts are skipped; the others are invited', async () => {
    const res = await as('admin').post(
      '/invites',
      inviteBody(`${t.fx.member.email}, fresh@example.com, ${t.fx.deactivated.email}`),
    );
    assert.deepEqual(res.body, {
      ...err(
        "Some of those addresses are already using Parley, so we didn't send them an invitation. We did send invitations to everyone else!",
        'INVITATION_FAILED',
      ),
      errors: [
        [t.fx.member.email, 'Already has an account.', false],
        [t.fx.deactivated.email, 'Account has been deactivated.', true],
      ],
      sent_invitations: true,
      license_limit_reached: false,
      daily_limit_reached: false,
    });
    assert.deepEqual(
      mail.sent.map((m) => m.to),
      ['fresh@example.com'],
    );
    const only = await as('admin').post('/invites', inviteBody(t.fx.member.email));
    assert.deepEqual(only.body, {
      ...err("We weren't able to invite anyone.", 'INVITATION_FAILED'),
      errors: [[t.fx.member.email, 'Already has an account.', false]],
      sent_invitations: false,
      license_limit_reached: false,
      daily_limit_reached: false,
    });
  });

  test('GET /invites: guests, bots and unauthenticated callers are refused', async () => {
    for (const who of EVERY_CALLER) {
      const res = await as(who).get('/invites');
      const expected =
        who === 'guest'
          ? { status: 400, body: GUEST }
          : who === 'bot'
            ? { status: 400, body: BOT }
            : UNAUTHORIZED[who]
              ? { status: 401, body: UNAUTHORIZED[who] }
              : { status: 200, body: { ...OK, invites: [] } };
      assert.deepEqual({ status: res.status, body: res.body }, expected, who);
    }
  });
});

describe('POST /invites/multiuse', () => {
  test('administrators create a link; it is listed with its link_url', async () => {
    const res = await as('admin').post('/invites/multiuse', {
      stream_ids: [t.fx.channels.general.id],
      invite_expires_in_minutes: null,
    });
    assert.equal(res.status, 200, res.text);
    const link = res.body.invite_link as string;
    assert.match(link, new RegExp(`^${REALM_URL}/join/[A-Za-z0-9]{24}/$`));
    assert.deepEqual(await bus.take(), [changed(t.fx.admin)]);
    assert.deepEqual((await as('owner').get('/invites')).body.invites, [
      {
        id: 1,
        invited_by_user_id: t.fx.admin.id,
        invited: T0,
        expiry_date: null,
        invited_as: 400,
        link_url: link,
        notify_referrer_on_join: true,
        is_multiuse: true,
      },
    ]);
  });

  test('who may: create_multiuse_invite_group (administrators)', async () => {
    for (const who of EVERY_CALLER) {
      const res = await as(who).post('/invites/multiuse', { stream_ids: [] });
      const expected = who === 'owner' || who === 'admin' ? 200 : UNAUTHORIZED[who] ? 401 : 400;
      assert.equal(res.status, expected, who);
      if (expected === 400) {
        const body = who === 'guest' ? GUEST : who === 'bot' ? BOT : INSUFFICIENT;
        assert.deepEqual(res.body, body, who);
      }
    }
  });
});

describe('revoking and resending', () => {
  async function emailInvite(who: 'member' | 'admin' = 'member'): Promise<void> {
    await as(who).post('/invites', inviteBody(`someone@example.com`));
    await bus.take();
  }

  test('DELETE /invites/{id}: the inviter or an administrator; then gone', async () => {
    await emailInvite();
    for (const who of ['member2', 'moderator'] as const) {
      const res = await as(who).delete('/invites/1');
      assert.deepEqual(res.body, MUST_BE_ADMIN, who);
    }
    assert.deepEqual((await as('admin').delete('/invites/1')).body, OK);
    assert.deepEqual(await bus.take(), [changed(t.fx.member)]);
    assert.deepEqual((await as('admin').get('/invites')).body.invites, []);
    for (const id of [1, 99]) {
      const res = await as('admin').delete(`/invites/${id}`);
      assert.deepEqual(
        { status: res.status, body: res.body },
        { status: 400, body: err('No such invitation') },
      );
    }
    await emailInvite();
    assert.deepEqual((await as('member').delete('/invites/2')).body, OK);
  });

  test('DELETE /invites/multiuse/{id}: once; then "already revoked"', async () => {
    await as('admin').post('/invites/multiuse', { stream_ids: [] });
    await bus.take();
    assert.deepEqual((await as('member').delete('/invites/multiuse/1')).body, MUST_BE_ADMIN);
    assert.deepEqual((await as('owner').delete('/invites/multiuse/1')).body, OK);
    assert.deepEqual(await bus.take(), [changed(t.fx.admin)]);
    assert.deepEqual(
      (await as('owner').delete('/invites/multiuse/1')).body,
      err('Invitation has already been revoked'),
    );
    assert.deepEqual(
      (await as('owner').delete('/invites/multiuse/7')).body,
      err('No such invitation'),
    );
    // An email invitation's id is not a link's.
    assert.deepEqual((await as('owner').delete('/invites/1')).body, err('No such invitation'));
  });

  test('POST /invites/{id}/resend: mails again and restarts the invitation', async () => {
    await emailInvite();
    setNow(T0 + 100);
    assert.deepEqual((await as('member2').post('/invites/1/resend')).body, MUST_BE_ADMIN);
    assert.deepEqual((await as('member').post('/invites/1/resend')).body, OK);
    assert.deepEqual(await bus.take(), [changed(t.fx.member)]);
    assert.equal(mail.sent.length, 2);
    assert.equal(mail.sent[1].to, 'someone@example.com');
    const [invite] = (await as('member').get('/invites')).body.invites as Array<
      Record<string, unknown>
    >;
    assert.equal(invite.invited, T0 + 100);
    assert.deepEqual((await as('admin').post('/invites/5/resend')).body, err('No such invitation'));
    for (const who of ['guest', 'bot'] as const) {
      assert.deepEqual(
        (await as(who).post('/invites/1/resend')).body,
        who === 'guest' ? GUEST : BOT,
      );
    }
    for (const who of ['deactivated', 'badKey', 'noAuth'] as const) {
      const res = await as(who).post('/invites/1/resend');
      assert.deepEqual(
        { status: res.status, body: res.body },
        { status: 401, body: UNAUTHORIZED[who] },
      );
    }
  });
});

describe('POST /invites/accept', () => {
  test('behind an external URL with a port, the referrer is told by the Notification Bot', async () => {
    const portMail = memoryMailer();
    const app = await buildTestApp({
      mailer: portMail,
      config: { externalUrl: new URL('http://parley.test:9991') },
    });
    try {
      await app.as(app.fx.admin).post('/invites', inviteBody('port@example.com'));
      const res = await app.as(null).post('/invites/accept', {
        key: mailKey(portMail.sent[0].text),
        full_name: 'Port Joiner',
        password: 'a strong enough password',
      });
      assert.equal(res.status, 200, res.text);
      // An address's domain has no port.
      const bot = await app.ctx.db
        .selectFrom('users')
        .select(['delivery_email', 'is_bot'])
        .where('full_name', '=', 'Notification Bot')
        .where('realm_id', '=', app.fx.realm.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(bot, { delivery_email: 'notification-bot@parley.test', is_bot: 1 });
    } finally {
      await app.close();
    }
  });

  test('an email invitation becomes an active user with its role and channels; the referrer is told', async () => {
    await as('member').post(
      '/invites',
      inviteBody('joiner@example.com', {
        stream_ids: [t.fx.channels.design.id],
        invite_as: 300,
      }),
    );
    // Moderator invitations need an administrator; the member's try above failed.
    assert.equal(mail.sent.length, 0);
    await as('admin').post(
      '/invites',
      inviteBody('joiner@example.com', { stream_ids: [t.fx.channels.design.id], invite_as: 300 }),
    );
    await bus.take();
    const key = mailKey(mail.sent[0].text);
    const res = await t.as(null).post('/invites/accept', {
      key,
      full_name: 'Jo Iner',
      password: 'a strong enough password',
    });
    assert.equal(res.status, 200, res.text);
    const userId = res.body.user_id as number;
    const me = await t
      .as({ email: res.body.email as string, api_key: res.body.api_key as string })
      .get('/users/me');
    assert.equal(me.status, 200, me.text);
    assert.deepEqual([me.body.user_id, me.body.full_name, me.body.role], [userId, 'Jo Iner', 300]);
    const subs = await t
      .as({ email: res.body.email as string, api_key: res.body.api_key as string })
      .get('/users/me/subscriptions');
    assert.deepEqual(
      (subs.body.subscriptions as Array<{ stream_id: number }>).map((s) => s.stream_id),
      [t.fx.channels.design.id],
    );
    const events = await bus.take();
    assert.ok(events.some((e) => e.event.type === 'realm_user' && e.event.op === 'add'));
    assert.deepEqual(
      events.filter((e) => e.event.type === 'invites_changed'),
      [changed(t.fx.admin)],
    );
    const dm = events.find((e) => e.event.type === 'message' && e.users.includes(t.fx.admin.id));
    assert.ok(dm, JSON.stringify(events.map((e) => e.event.type)));
    const message = (dm.event as unknown as { message: Record<string, unknown> }).message;
    assert.equal(message.sender_full_name, 'Notification Bot');
    assert.equal(message.type, 'private');
    assert.match(String(message.content), /accepted your invitation to join Parley Test!/);
    // Used up: no longer listed, and the key works once.
    assert.deepEqual((await as('admin').get('/invites')).body.invites, []);
    const again = await t.as(null).post('/invites/accept', {
      key,
      full_name: 'Jo Again',
      password: 'a strong enough password',
    });
    assert.deepEqual(again.body, err('The invitation is invalid or has expired.'));
  });

  test('a reusable link needs an email, serves several people, and may skip the referrer DM', async () => {
    const link = (
      await as('admin').post('/invites/multiuse', {
        stream_ids: [t.fx.channels.general.id],
        notify_referrer_on_join: false,
        invite_as: 600,
      })
    ).body.invite_link as string;
    await bus.take();
    const key = keyOf(link);
    const missing = await t.as(null).post('/invites/accept', {
      key,
      full_name: 'No Mail',
      password: 'a strong enough password',
    });
    assert.deepEqual(missing.body, err('Missing email'));
    for (const [n, email] of ['one@example.com', 'two@example.com'].entries()) {
      const res = await t.as(null).post('/invites/accept', {
        key,
        email,
        full_name: `Guest ${n}`,
        password: 'a strong enough password',
      });
      assert.equal(res.status, 200, res.text);
      const events = await bus.take();
      assert.ok(!events.some((e) => e.event.type === 'message'), email);
      const me = await t
        .as({ email: res.body.email as string, api_key: res.body.api_key as string })
        .get('/users/me');
      assert.equal(me.body.role, 600);
    }
    assert.equal(((await as('admin').get('/invites')).body.invites as unknown[]).length, 1);
  });

  test('refused: unknown, revoked and expired keys, an address in use, a weak password', async () => {
    await as('admin').post(
      '/invites',
      inviteBody('late@example.com', { invite_expires_in_minutes: 10 }),
    );
    const expiredKey = mailKey(mail.sent[0].text);
    const link = (await as('admin').post('/invites/multiuse', { stream_ids: [] })).body
      .invite_link as string;
    await as('admin').post('/invites', inviteBody('weak@example.com'));
    const weakKey = mailKey(mail.sent[1].text);
    const accept = (params: Record<string, unknown>) =>
      t.as(null).post('/invites/accept', {
        full_name: 'X Y',
        password: 'a strong enough password',
        ...params,
      });
    assert.deepEqual(
      (await accept({ key: 'nope' })).body,
      err('The invitation is invalid or has expired.'),
    );
    assert.deepEqual(
      (await accept({ key: keyOf(link), email: t.fx.member.email })).body,
      err(`Email '${t.fx.member.email}' already in use`),
    );
    assert.deepEqual(
      (await accept({ key: weakKey, password: 'x' })).body,
      err('The password is too weak.'),
    );
    setNow(T0 + 600);
    assert.deepEqual(
      (await accept({ key: expiredKey })).body,
      err('The invitation is invalid or has expired.'),
    );
    await as('admin').delete('/invites/multiuse/1');
    assert.deepEqual(
      (await accept({ key: keyOf(link), email: 'new@example.com' })).body,
      err('The invitation is invalid or has expired.'),
    );
    // Another organization's host does not know this organization's keys.
    const other = await t
      .as(null)
      .withHeaders({ host: 'other.parley.test' })
      .post('/invites/accept', {
        key: weakKey,
        full_name: 'X Y',
        password: 'a strong enough password',
      });
    assert.deepEqual(other.body, err('The invitation is invalid or has expired.'));
  });
});

describe('invitations with user groups', () => {
  test('the new user joins the invitation’s groups; system groups cannot be given', async () => {
    const created = await as('admin').post('/user_groups/create', {
      name: 'Newcomers',
      description: 'New people',
      members: [t.fx.member.id],
    });
    assert.equal(created.status, 200, created.text);
    const groupId = created.body.group_id as number;
    const system = await t.ctx.db
      .selectFrom('user_groups')
      .select('id')
      .where('realm_id', '=', t.fx.realm.id)
      .where('name', '=', 'role:members')
      .executeTakeFirstOrThrow();
    const refused = await as('admin').post(
      '/invites',
      inviteBody('grouped@example.com', { group_ids: [system.id] }),
    );
    assert.deepEqual(refused.body, err(`Invalid user group ID: ${system.id}`));
    const res = await as('admin').post(
      '/invites',
      inviteBody('grouped@example.com', { group_ids: [groupId], notify_referrer_on_join: false }),
    );
    assert.deepEqual(res.body, OK);
    await bus.take();
    const accepted = await t.as(null).post('/invites/accept', {
      key: mailKey(mail.sent[0].text),
      full_name: 'Grouped Person',
      password: 'a strong enough password',
    });
    assert.equal(accepted.status, 200, accepted.text);
    const userId = accepted.body.user_id as number;
    const members = await as('member').get(`/user_groups/${groupId}/members`);
    assert.deepEqual(
      [...(members.body.members as number[])].sort((a, b) => a - b),
      [t.fx.member.id, userId].sort((a, b) => a - b),
    );
    const events = await bus.take();
    const groupEvent = events.find(
      (e) =>
        e.event.type === 'user_group' && (e.event as { group_id?: number }).group_id === groupId,
    );
    assert.deepEqual(groupEvent, {
      event: { type: 'user_group', op: 'add_members', group_id: groupId, user_ids: [userId] },
      users: [
        ...ids(
          t.fx.owner,
          t.fx.admin,
          t.fx.moderator,
          t.fx.member,
          t.fx.member2,
          t.fx.guest,
          t.fx.bot,
        ),
        userId,
      ].sort((a, b) => a - b),
    });
    assert.ok(!events.some((e) => e.event.type === 'message'));
  });
});
