import type { RealmRow, UserRow } from '../store/schema.ts';

/** Who is acting: an authenticated, active user of an active realm. */
export interface Actor {
  user: UserRow;
  realm: RealmRow;
}
