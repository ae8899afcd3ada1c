// Push registration tokens (Android FCM/GCM and Apple APNs). Parley has no push service
// configured, so it stores the tokens per user and never pushes (server_settings says
// push_notifications_enabled: false); registering keeps clients that always register
// working. Human users only, as the reference server.
import type { AppContext } from '../context.ts';
import { unixNow } from '../infra/clock.ts';
import type { Actor } from '../lib/actor.ts';
import { badRequest, JsonableError } from '../lib/errors.ts';
import * as tokensStore from '../store/push-tokens.ts';
import { accessCurrentActor } from './permissions.ts';
import { withTransaction } from './transaction.ts';

export type TokenKind = tokensStore.TokenKind;

export const MAX_TOKEN_LENGTH = 4096;

function checkToken(actor: Actor, kind: TokenKind, token: string): void {
  if (actor.user.is_bot) throw badRequest('This endpoint does not accept bot requests.');
  if (token === '' || token.length > MAX_TOKEN_LENGTH) {
    throw badRequest('Empty or invalid length token');
  }
  // APNs device tokens are hex-encoded bytes.
  if (kind === 'apns' && !/^(?:[0-9a-fA-F]{2})+$/.test(token)) {
    throw badRequest('Invalid APNS token');
  }
}

export async function addPushToken(
  ctx: AppContext,
  actor: Actor,
  kind: TokenKind,
  token: string,
  appId: string | null,
): Promise<void> {
  checkToken(actor, kind, token);
  if (appId !== null && !/^[.a-zA-Z0-9-]+$/.test(appId)) throw badRequest('Invalid app ID');
  await withTransaction(ctx, actor.realm.id, async (work) => {
    // A user deactivated since registers no device (architecture.md, Actions).
    const me = await accessCurrentActor(work.db, actor);
    await tokensStore.savePushToken(work.db, me.user.id, kind, {
      token,
      ios_app_id: appId,
      date_created: unixNow(ctx.clock),
    });
  });
}

export async function removePushToken(
  ctx: AppContext,
  actor: Actor,
  kind: TokenKind,
  token: string,
): Promise<void> {
  checkToken(actor, kind, token);
  await withTransaction(ctx, actor.realm.id, async (work) => {
    const me = await accessCurrentActor(work.db, actor);
    if (!(await tokensStore.deletePushToken(work.db, me.user.id, kind, token))) {
      throw new JsonableError('Device not recognized', 'INVALID_PUSH_DEVICE_TOKEN', 400);
    }
  });
}
