// Code playgrounds: links from a code block of a language to an outside site that runs
// the code. Administrators manage them; every change sends the whole list to everyone as
// realm_playgrounds. Listed only by /register.
import type { AppContext } from '../context.ts';
import type { Actor } from '../lib/actor.ts';
import { badRequest } from '../lib/errors.ts';
import { templateVariables } from '../lib/url-template.ts';
import type { Q } from '../store/db.ts';
import * as playgroundsStore from '../store/playgrounds.ts';
import type { RealmPlaygroundRow } from '../store/schema.ts';
import * as usersStore from '../store/users.ts';
import { accessCurrentAdmin, checkAdmin } from './permissions.ts';
import { withTransaction, type Work } from './transaction.ts';

export interface PlaygroundParams {
  name: string;
  pygments_language: string;
  url_template: string;
}

const present = (p: RealmPlaygroundRow) => ({
  id: p.id,
  name: p.name,
  pygments_language: p.pygments_language,
  url_template: p.url_template,
});

export async function listPlaygrounds(db: Q, realmId: number) {
  return (await playgroundsStore.listPlaygrounds(db, realmId)).map(present);
}

/** Pygments lexer names and aliases use only these characters. */
const LANGUAGE = /^[ a-zA-Z0-9_+\-./#]*$/;

export async function addPlayground(
  ctx: AppContext,
  actor: Actor,
  p: PlaygroundParams,
): Promise<number> {
  checkAdmin(actor);
  if (!LANGUAGE.test(p.pygments_language)) {
    throw badRequest('Invalid characters in pygments language');
  }
  const variables = templateVariables(p.url_template);
  if (variables === null) throw badRequest('Invalid URL template.');
  if (variables.length !== 1 || variables[0] !== 'code') {
    throw badRequest('"code" should be the only variable present in the URL template');
  }
  return withTransaction(ctx, actor.realm.id, async (work) => {
    await accessCurrentAdmin(work.db, actor);
    const existing = await playgroundsStore.listPlaygrounds(work.db, actor.realm.id);
    if (existing.some((e) => e.name === p.name && e.pygments_language === p.pygments_language)) {
      throw badRequest(
        'Realm playground with this Realm, Pygments language and Name already exists.',
      );
    }
    const id = await playgroundsStore.insertPlayground(work.db, {
      realm_id: actor.realm.id,
      name: p.name,
      pygments_language: p.pygments_language,
      url_template: p.url_template,
    });
    await emitPlaygrounds(work, actor.realm.id);
    return id;
  });
}

export async function removePlayground(ctx: AppContext, actor: Actor, id: number): Promise<void> {
  checkAdmin(actor);
  await withTransaction(ctx, actor.realm.id, async (work) => {
    await accessCurrentAdmin(work.db, actor);
    if (!(await playgroundsStore.deletePlayground(work.db, actor.realm.id, id))) {
      throw badRequest('Invalid playground');
    }
    await emitPlaygrounds(work, actor.realm.id);
  });
}

async function emitPlaygrounds(work: Work, realmId: number): Promise<void> {
  const list = await listPlaygrounds(work.db, realmId);
  const everyone = await usersStore.listActiveUserIds(work.db, realmId);
  work.emitOnCommit({ type: 'realm_playgrounds', realm_playgrounds: list }, everyone);
}
