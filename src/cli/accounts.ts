// Organizations and accounts from the command line: create-realm, create-user,
// change-api-key. Each calls the action the API uses and prints the new credentials.
import { Option, type Command } from 'commander';
import type { AppContext } from '../context.ts';
import { createOrganization } from '../actions/bootstrap.ts';
import { createUser, regenerateApiKey } from '../actions/users.ts';
import { resourceNotFound } from '../lib/errors.ts';
import { realmUrl } from '../lib/realm-url.ts';
import { ROLE_NAMES } from '../lib/roles.ts';
import * as realmsStore from '../store/realms.ts';
import type { RealmRow, UserRow } from '../store/schema.ts';
import * as usersStore from '../store/users.ts';
import type { CommandKit } from './program.ts';

/** The role names the CLI accepts (ROLE_NAMES also knows the long form "administrator"). */
export const CLI_ROLES = ['owner', 'admin', 'moderator', 'member', 'guest'] as const;

async function accessRealm(ctx: AppContext, subdomain: string): Promise<RealmRow> {
  const realm = await realmsStore.getRealmByStringId(ctx.db, subdomain.toLowerCase());
  if (!realm) {
    throw resourceNotFound(
      subdomain === ''
        ? 'There is no default organization (subdomain "")'
        : `There is no organization with subdomain '${subdomain}'`,
    );
  }
  return realm;
}

async function accessUser(ctx: AppContext, realm: RealmRow, email: string): Promise<UserRow> {
  const user = await usersStore.getUserByEmail(ctx.db, realm.id, email);
  if (!user) throw resourceNotFound(`There is no user '${email}' in this organization`);
  return user;
}

/** One account's credentials: the object --json prints. */
function credentials(realm: RealmRow, user: UserRow, apiKey = user.api_key) {
  return { realm_id: realm.id, user_id: user.id, email: user.delivery_email, api_key: apiKey };
}

function printCredentials(kit: CommandKit, fields: Record<string, unknown>): void {
  const width = Math.max(...Object.keys(fields).map((k) => k.length)) + 1;
  for (const [k, v] of Object.entries(fields)) kit.line(`${`${k}:`.padEnd(width)} ${String(v)}`);
}

export function addAccountCommands(program: Command, kit: CommandKit): void {
  program
    .command('create-realm')
    .description('create an organization and its owner')
    .requiredOption('--name <name>', 'organization name')
    .option('--subdomain <subdomain>', 'subdomain of the external URL ("" = the URL itself)', '')
    .requiredOption('--owner-email <email>', "owner's email address (their login)")
    .requiredOption('--owner-name <name>', "owner's full name")
    .option('--owner-password <password>', "owner's password (else the API key is the login)")
    .option('--json', 'print the created ids, email and API key as one JSON object')
    .action(
      async (opts: {
        name: string;
        subdomain: string;
        ownerEmail: string;
        ownerName: string;
        ownerPassword?: string;
        json?: boolean;
      }) => {
        const out = await kit.io.withContext(kit.config(), async (ctx) => {
          const { realm, owner } = await createOrganization(ctx, {
            name: opts.name,
            stringId: opts.subdomain,
            ownerEmail: opts.ownerEmail,
            ownerFullName: opts.ownerName,
            ownerPassword: opts.ownerPassword ?? null,
          });
          return {
            ...credentials(realm, owner),
            realm_url: realmUrl(ctx.config.externalUrl, realm.string_id),
          };
        });
        if (opts.json) return kit.json(out);
        kit.line(`Created the organization at ${out.realm_url} and its owner:`);
        printCredentials(kit, {
          realm_id: out.realm_id,
          user_id: out.user_id,
          email: out.email,
          api_key: out.api_key,
        });
      },
    );

  program
    .command('create-user')
    .description('create a user in an organization')
    .requiredOption('--realm <subdomain>', 'the organization\'s subdomain ("" = the default one)')
    .requiredOption('--email <email>', 'email address (the login)')
    .requiredOption('--full-name <name>', 'full name')
    .addOption(new Option('--role <role>', 'role').choices(CLI_ROLES).default('member'))
    .option('--password <password>', 'password (else the API key is the login)')
    .option('--json', 'print the created ids, email and API key as one JSON object')
    .action(
      async (opts: {
        realm: string;
        email: string;
        fullName: string;
        role: (typeof CLI_ROLES)[number];
        password?: string;
        json?: boolean;
      }) => {
        const out = await kit.io.withContext(kit.config(), async (ctx) => {
          const realm = await accessRealm(ctx, opts.realm);
          const user = await createUser(ctx, realm, {
            email: opts.email,
            fullName: opts.fullName,
            role: ROLE_NAMES[opts.role],
            password: opts.password ?? null,
          });
          return credentials(realm, user);
        });
        if (opts.json) return kit.json(out);
        kit.line(`Created the ${opts.role} ${out.email}:`);
        printCredentials(kit, out);
      },
    );

  program
    .command('change-api-key')
    .description("replace a user's API key (the old one stops working)")
    .requiredOption('--realm <subdomain>', 'the organization\'s subdomain ("" = the default one)')
    .requiredOption('--email <email>', "the user's email address")
    .option('--json', 'print the ids, email and new API key as one JSON object')
    .action(async (opts: { realm: string; email: string; json?: boolean }) => {
      const out = await kit.io.withContext(kit.config(), async (ctx) => {
        const realm = await accessRealm(ctx, opts.realm);
        const user = await accessUser(ctx, realm, opts.email);
        return credentials(realm, user, await regenerateApiKey(ctx, realm, user.id));
      });
      if (opts.json) return kit.json(out);
      kit.line(`New API key for ${out.email}:`);
      printCredentials(kit, out);
    });
}
