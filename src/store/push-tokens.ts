// Push registration tokens of users' mobile devices.
import type { Q } from './db.ts';

export type TokenKind = 'gcm' | 'apns';

export interface PushToken {
  token: string;
  ios_app_id: string | null;
  date_created: number;
}

/** Add the token, or refresh its app id and time when the user registered it already. */
export async function savePushToken(
  db: Q,
  userId: number,
  kind: TokenKind,
  token: PushToken,
): Promise<void> {
  await db
    .insertInto('push_device_tokens')
    .values({ user_id: userId, kind, ...token })
    .onConflict((oc) =>
      oc
        .columns(['user_id', 'kind', 'token'])
        .doUpdateSet({ ios_app_id: token.ios_app_id, date_created: token.date_created }),
    )
    .execute();
}

/** Whether there was such a token to delete. */
export async function deletePushToken(
  db: Q,
  userId: number,
  kind: TokenKind,
  token: string,
): Promise<boolean> {
  const result = await db
    .deleteFrom('push_device_tokens')
    .where('user_id', '=', userId)
    .where('kind', '=', kind)
    .where('token', '=', token)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function listPushTokens(db: Q, userId: number, kind: TokenKind): Promise<PushToken[]> {
  return db
    .selectFrom('push_device_tokens')
    .select(['token', 'ios_app_id', 'date_created'])
    .where('user_id', '=', userId)
    .where('kind', '=', kind)
    .orderBy('token')
    .execute();
}
