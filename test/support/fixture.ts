// The fixture organizations every test starts from, created through the same actions the
// API uses. Ids are deterministic (same creation order on both databases).
import type { AppContext } from '../../src/context.ts';
import { doCreateRealm } from '../../src/actions/realms.ts';
import { doCreateUser } from '../../src/actions/users.ts';
import { withTransaction, type Work } from '../../src/actions/transaction.ts';
import { ROLE } from '../../src/lib/roles.ts';
import type { RealmRow, UserRow } from '../../src/store/schema.ts';

export interface FixtureUser {
  id: number;
  email: string;
  delivery_email: string;
  full_name: string;
  api_key: string;
  password: string;
  role: number;
}

export interface Fixture {
  realm: { id: number; string_id: string; name: string };
  other: { id: number; string_id: string; name: string };
  owner: FixtureUser;
  admin: FixtureUser;
  moderator: FixtureUser;
  member: FixtureUser;
  member2: FixtureUser;
  guest: FixtureUser;
  bot: FixtureUser;
  deactivated: FixtureUser;
  otherOwner: FixtureUser;
}

/** The roles a permission test walks through, each with a fixture user (or none). */
export const ROLE_KEYS = [
  'owner',
  'admin',
  'moderator',
  'member',
  'guest',
  'bot',
  'deactivated',
] as const;

function toFixtureUser(row: UserRow, password: string): FixtureUser {
  return {
    id: row.id,
    email: row.email,
    delivery_email: row.delivery_email,
    full_name: row.full_name,
    api_key: row.api_key,
    password,
    role: row.role,
  };
}

export async function seedFixture(ctx: AppContext): Promise<Fixture> {
  const realm = await withTransaction(ctx, null, (work) =>
    doCreateRealm(ctx, work, {
      name: 'Parley Test',
      stringId: '',
      description: 'The **fixture** organization.',
    }),
  );
  const otherRealm = await withTransaction(ctx, null, (work) =>
    doCreateRealm(ctx, work, { name: 'Other Org', stringId: 'other' }),
  );
  const mk = (
    work: Work,
    r: RealmRow,
    email: string,
    fullName: string,
    role: number,
    extra: { isBot?: boolean; botOwnerId?: number } = {},
  ) => {
    const password = extra.isBot ? '' : `${email.split('@')[0]}-password`;
    return doCreateUser(ctx, work, r, {
      email,
      fullName,
      role,
      password: password || null,
      isBot: extra.isBot,
      botType: extra.isBot ? 1 : null,
      botOwnerId: extra.botOwnerId ?? null,
    }).then((row) => toFixtureUser(row, password));
  };
  const users = await withTransaction(ctx, realm.id, async (work) => {
    const owner = await mk(work, realm, 'owner@parley.test', 'Olivia Owner', ROLE.owner);
    const admin = await mk(work, realm, 'admin@parley.test', 'Adam Admin', ROLE.administrator);
    const moderator = await mk(
      work,
      realm,
      'moderator@parley.test',
      'Mona Moderator',
      ROLE.moderator,
    );
    const member = await mk(work, realm, 'member@parley.test', 'Mark Member', ROLE.member);
    const member2 = await mk(work, realm, 'member2@parley.test', 'Nina Member', ROLE.member);
    const guest = await mk(work, realm, 'guest@parley.test', 'Gus Guest', ROLE.guest);
    const bot = await mk(work, realm, 'helper-bot@parley.test', 'Helper Bot', ROLE.member, {
      isBot: true,
      botOwnerId: member.id,
    });
    const deactivated = await mk(work, realm, 'gone@parley.test', 'Dee Deactivated', ROLE.member);
    await work.db
      .updateTable('users')
      .set({ is_active: 0 })
      .where('id', '=', deactivated.id)
      .execute();
    return { owner, admin, moderator, member, member2, guest, bot, deactivated };
  });
  const otherOwner = await withTransaction(ctx, otherRealm.id, (work) =>
    mk(work, otherRealm, 'owner@other.test', 'Otto Other', ROLE.owner),
  );
  const realmInfo = (r: RealmRow) => ({ id: r.id, string_id: r.string_id, name: r.name });
  return { realm: realmInfo(realm), other: realmInfo(otherRealm), ...users, otherOwner };
}
