// The fixture organizations every test starts from, created through the same actions the
// API uses. Ids are deterministic (same creation order on both databases).
import type { AppContext } from '../../src/context.ts';
import { doCreateRealm } from '../../src/actions/realms.ts';
import { doCreateUser } from '../../src/actions/users.ts';
import { withTransaction } from '../../src/actions/transaction.ts';
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
  return withTransaction(ctx, async (work) => {
    const realm: RealmRow = await doCreateRealm(ctx, work, {
      name: 'Parley Test',
      stringId: '',
      description: 'The **fixture** organization.',
    });
    const mk = async (
      r: RealmRow,
      email: string,
      fullName: string,
      role: number,
      extra: { isBot?: boolean; botOwnerId?: number } = {},
    ) => {
      const password = `${email.split('@')[0]}-password`;
      const row = await doCreateUser(ctx, work, r, {
        email,
        fullName,
        role,
        password: extra.isBot ? null : password,
        isBot: extra.isBot,
        botType: extra.isBot ? 1 : null,
        botOwnerId: extra.botOwnerId ?? null,
      });
      return toFixtureUser(row, extra.isBot ? '' : password);
    };
    const owner = await mk(realm, 'owner@parley.test', 'Olivia Owner', ROLE.owner);
    const admin = await mk(realm, 'admin@parley.test', 'Adam Admin', ROLE.administrator);
    const moderator = await mk(realm, 'moderator@parley.test', 'Mona Moderator', ROLE.moderator);
    const member = await mk(realm, 'member@parley.test', 'Mark Member', ROLE.member);
    const member2 = await mk(realm, 'member2@parley.test', 'Nina Member', ROLE.member);
    const guest = await mk(realm, 'guest@parley.test', 'Gus Guest', ROLE.guest);
    const bot = await mk(realm, 'helper-bot@parley.test', 'Helper Bot', ROLE.member, {
      isBot: true,
      botOwnerId: member.id,
    });
    const deactivated = await mk(realm, 'gone@parley.test', 'Dee Deactivated', ROLE.member);
    await work.db
      .updateTable('users')
      .set({ is_active: 0 })
      .where('id', '=', deactivated.id)
      .execute();
    const otherRealm = await doCreateRealm(ctx, work, { name: 'Other Org', stringId: 'other' });
    const otherOwner = await mk(otherRealm, 'owner@other.test', 'Otto Other', ROLE.owner);
    const realmInfo = (r: RealmRow) => ({ id: r.id, string_id: r.string_id, name: r.name });
    return {
      realm: realmInfo(realm),
      other: realmInfo(otherRealm),
      owner,
      admin,
      moderator,
      member,
      member2,
      guest,
      bot,
      deactivated,
      otherOwner,
    };
  });
}
