// The fixture organizations every test starts from, created through the same actions the
// API uses. Ids are deterministic (same creation order on both databases).
import type { AppContext } from '../../src/context.ts';
import { doCreateRealm } from '../../src/actions/realms.ts';
import { doCreateUser, hashNewPassword } from '../../src/actions/users.ts';
import {
  announceNewChannel,
  doCreateChannel,
  doSubscribeUsers,
  listActiveUsersByIds,
  type NewChannelParams,
} from '../../src/actions/channels.ts';
import { listSystemGroups } from '../../src/store/user-groups.ts';
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
  channels: {
    /** public; everyone subscribed, including the guest and the bot */
    general: FixtureChannel;
    /** public; admin and member subscribed */
    design: FixtureChannel;
    /** private with shared history; owner and member subscribed */
    private: FixtureChannel;
    /** private with protected history; moderator and member2 subscribed */
    secret: FixtureChannel;
    /** public; only administrators may post; every member subscribed */
    announce: FixtureChannel;
    /** web-public; owner subscribed */
    web: FixtureChannel;
    /** the other organization's public channel; its owner subscribed */
    otherGeneral: FixtureChannel;
  };
}

export interface FixtureChannel {
  id: number;
  name: string;
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
  const mk = async (
    work: Work,
    r: RealmRow,
    email: string,
    fullName: string,
    role: number,
    extra: { isBot?: boolean; botOwnerId?: number } = {},
  ) => {
    const password = extra.isBot ? '' : `${email.split('@')[0]}-password`;
    // Hashed inside the seeding transaction: nothing else runs while the fixture is made.
    const passwordHash = await hashNewPassword(ctx, password);
    return doCreateUser(ctx, work, r, {
      email,
      fullName,
      role,
      passwordHash,
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
  const channels = await seedChannels(ctx, realm, otherRealm, { ...users, otherOwner });
  const realmInfo = (r: RealmRow) => ({ id: r.id, string_id: r.string_id, name: r.name });
  return { realm: realmInfo(realm), other: realmInfo(otherRealm), ...users, otherOwner, channels };
}

async function seedChannels(
  ctx: AppContext,
  realm: RealmRow,
  otherRealm: RealmRow,
  u: Omit<Fixture, 'realm' | 'other' | 'channels'>,
): Promise<Fixture['channels']> {
  const make = (
    r: RealmRow,
    creatorId: number,
    params: NewChannelParams,
    subscriberIds: number[],
  ) =>
    withTransaction(ctx, r.id, async (work) => {
      const [creator] = await listActiveUsersByIds(work.db, r.id, [creatorId]);
      const channel = await doCreateChannel(ctx, work, r, creator, params);
      await announceNewChannel(work, r, channel);
      await doSubscribeUsers(
        ctx,
        work,
        r,
        channel,
        await listActiveUsersByIds(work.db, r.id, subscriberIds),
      );
      return { id: channel.id, name: channel.name };
    });
  const groupIds = Object.fromEntries(
    (await listSystemGroups(ctx.db, realm.id)).map((g) => [g.name as string, g.id]),
  );
  const everyone = [u.owner, u.admin, u.moderator, u.member, u.member2, u.guest, u.bot].map(
    (x) => x.id,
  );
  return {
    general: await make(
      realm,
      u.owner.id,
      { name: 'general', description: 'Everyone is here.' },
      everyone,
    ),
    design: await make(realm, u.admin.id, { name: 'design' }, [u.admin.id, u.member.id]),
    private: await make(realm, u.owner.id, { name: 'private', inviteOnly: true }, [
      u.owner.id,
      u.member.id,
    ]),
    secret: await make(
      realm,
      u.moderator.id,
      { name: 'secret', inviteOnly: true, historyPublicToSubscribers: false },
      [u.moderator.id, u.member2.id],
    ),
    announce: await make(
      realm,
      u.owner.id,
      {
        name: 'announce',
        groupSettings: { can_send_message_group: groupIds['role:administrators'] },
      },
      [u.owner.id, u.admin.id, u.moderator.id, u.member.id, u.member2.id],
    ),
    web: await make(realm, u.owner.id, { name: 'web', isWebPublic: true }, [u.owner.id]),
    otherGeneral: await make(otherRealm, u.otherOwner.id, { name: 'general' }, [u.otherOwner.id]),
  };
}
