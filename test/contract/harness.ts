// The event-contract runner: every viewer registers (all fetch types, in a modern and a
// legacy client form), one action runs through HTTP, and for each queue the snapshot
// with its events applied must equal a fresh snapshot. Every event must match its
// declared shape. Viewers named in `changes` must see their state change; the others
// must not (so a missing event and an event sent to the wrong user both fail).
import assert from 'node:assert/strict';
import { listSystemGroups } from '../../src/store/user-groups.ts';
import { getUserById } from '../../src/store/users.ts';
import { CLIENT_CAPABILITIES } from '../../src/lib/event-client.ts';
import { buildTestApp, type TestApp, type TestAppOptions } from '../support/app.ts';
import { applyEvents, type State } from '../support/apply-events.ts';
import { assertEventShape } from '../support/event-shapes.ts';
import { drainEvents, registerQueue, type Event } from '../support/events.ts';
import type { Fixture, FixtureUser } from '../support/fixture.ts';

export type ViewerKey = 'owner' | 'admin' | 'moderator' | 'member' | 'member2' | 'guest' | 'bot';
export const ALL_VIEWERS: ViewerKey[] = [
  'owner',
  'admin',
  'moderator',
  'member',
  'member2',
  'guest',
  'bot',
];

const ALL_CAPABILITIES = Object.fromEntries(CLIENT_CAPABILITIES.map((c) => [c, true]));

/** The client forms each viewer registers in. */
export const CLIENT_FORMS: Record<string, Record<string, unknown>> = {
  modern: { client_capabilities: ALL_CAPABILITIES, apply_markdown: true },
  legacy: { client_gravatar: false },
  /** A modern client keeping subscriber lists. */
  subscribers: { client_capabilities: ALL_CAPABILITIES, include_subscribers: true },
};

/** The forms a case registers in unless it names its own. */
export const DEFAULT_FORMS = ['modern', 'legacy', 'subscribers'];

export interface ContractCase {
  /** Viewers whose snapshot this action changes; every other viewer's must stay equal. */
  changes: ViewerKey[];
  /** Viewers to check; defaults to every active fixture user. */
  viewers?: ViewerKey[];
  /** Client forms (keys of CLIENT_FORMS) to register in; defaults to DEFAULT_FORMS. */
  forms?: string[];
  /** Runs before the queues are registered (state the action needs). */
  setup?: (t: TestApp) => Promise<void>;
  act: (t: TestApp) => Promise<void>;
  app?: TestAppOptions;
}

interface Watch {
  viewer: ViewerKey;
  form: string;
  user: FixtureUser;
  params: Record<string, unknown>;
  before: State;
}

// server_timestamp is the time of reading; presence events do not carry the presence
// update id (clients keep polling from the one they had, and get repeats at worst).
const VOLATILE = [
  'result',
  'msg',
  'queue_id',
  'last_event_id',
  'server_timestamp',
  'presence_last_update_id',
];

function normalize(state: State): State {
  const out = structuredClone(state);
  for (const k of VOLATILE) delete out[k];
  return out;
}

/** The paths where two states differ, with both values (a readable assertion diff). */
function differingKeys(applied: unknown, fresh: unknown, path = ''): Record<string, unknown> {
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
  if (isObj(applied) && isObj(fresh) && Array.isArray(applied) === Array.isArray(fresh)) {
    const out: Record<string, unknown> = {};
    for (const key of new Set([...Object.keys(applied), ...Object.keys(fresh)])) {
      Object.assign(out, differingKeys(applied[key], fresh[key], path ? `${path}.${key}` : key));
    }
    return out;
  }
  try {
    assert.deepEqual(applied, fresh);
    return {};
  } catch {
    return { [path]: { applied, fresh } };
  }
}

/** Fails the test with a named action result unless it succeeded. */
export async function ok(res: Promise<{ status: number; text: string }>): Promise<void> {
  const r = await res;
  assert.equal(r.status, 200, r.text);
}

/** Run one contract case; returns each viewer's (modern form) events for extra assertions. */
export async function runContract(c: ContractCase): Promise<Map<ViewerKey, Event[]>> {
  const t = await buildTestApp(c.app);
  try {
    await c.setup?.(t);
    const systemGroups = new Map(
      (await listSystemGroups(t.ctx.db, t.fx.realm.id)).map((g) => [g.id, g.name!]),
    );
    const watches: Watch[] = [];
    for (const viewer of c.viewers ?? ALL_VIEWERS) {
      for (const form of c.forms ?? DEFAULT_FORMS) {
        const params = CLIENT_FORMS[form];
        const user = t.fx[viewer as keyof Fixture] as FixtureUser;
        const before = await registerQueue(t.as(user), params);
        watches.push({ viewer, form, user, params, before });
      }
    }
    await c.act(t);
    const seen = new Map<ViewerKey, Event[]>();
    for (const w of watches) {
      const label = `${w.viewer} (${w.form} client)`;
      // The action may have changed the viewer's API email, which is its login name.
      const row = await getUserById(t.ctx.db, t.fx.realm.id, w.user.id);
      const client = t.as({ ...w.user, email: row!.email });
      const events = await drainEvents(t.ctx, client, w.before.queue_id as string, -1);
      for (const e of events) assertEventShape(e);
      const applied = applyEvents(normalize(w.before), events, {
        systemGroups,
        capabilities: (w.params.client_capabilities ?? {}) as Record<string, boolean>,
        clientGravatar: w.params.client_gravatar !== false,
        includeSubscribers: w.params.include_subscribers === true,
      });
      const fresh = normalize(await registerQueue(client, w.params));
      const diff = differingKeys(applied, fresh);
      assert.deepEqual(
        diff,
        {},
        `${label}: snapshot + events != fresh snapshot; events: ${JSON.stringify(events)}`,
      );
      const changed = JSON.stringify(fresh) !== JSON.stringify(normalize(w.before));
      assert.equal(
        changed,
        c.changes.includes(w.viewer),
        `${label}: expected ${c.changes.includes(w.viewer) ? 'a' : 'no'} change; events: ${JSON.stringify(events)}`,
      );
      if (w.form === 'modern') seen.set(w.viewer, events);
    }
    return seen;
  } finally {
    await t.close();
  }
}
