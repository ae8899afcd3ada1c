// Shared by the message-flag tests: the update_message_flags event as the API describes it,
// and a user's stored flag bits.
import type { TestApp } from './app.ts';
import type { FixtureUser } from './fixture.ts';
import { rowsOf } from './messages.ts';

/** update_message_flags for these messages (all: false unless extra says otherwise). */
export function flagEvent(
  op: 'add' | 'remove',
  flag: string,
  messages: number[],
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { type: 'update_message_flags', op, operation: op, flag, messages, all: false, ...extra };
}

/** The user's flag bits on a message, or undefined without a delivery row. */
export async function flagBits(
  t: TestApp,
  who: FixtureUser,
  id: number,
): Promise<number | undefined> {
  return (await rowsOf(t, id))[who.id];
}
