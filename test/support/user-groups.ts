// Helpers for the user-group suites: creating a group through the API and the group
// object as the API shows it.
import assert from 'node:assert/strict';
import type { TestApp } from './app.ts';
import type { FixtureUser } from './fixture.ts';

export type SystemIds = Record<string, number>;

/** Create a group through the API (setup); returns its id. */
export async function createGroup(
  t: TestApp,
  who: FixtureUser,
  name: string,
  params: Record<string, unknown> = {},
): Promise<number> {
  const res = await t
    .as(who)
    .post('/user_groups/create', { name, description: '', members: [], ...params });
  assert.equal(res.status, 200, res.text);
  return res.body.group_id as number;
}

/** GET /user_groups with deactivated groups; fails unless it succeeds. */
export async function groupsOf(
  t: TestApp,
  who: FixtureUser,
): Promise<Array<Record<string, unknown>>> {
  const res = await t.as(who).get('/user_groups', { include_deactivated_groups: true });
  assert.equal(res.status, 200, res.text);
  return res.body.user_groups as Array<Record<string, unknown>>;
}

/** A created group as the API shows it; settings default as on creation by creator_id. */
export function expectedGroup(
  g: SystemIds,
  fields: Record<string, unknown> & { id: number; name: string; creator_id: number },
): Record<string, unknown> {
  const creatorOnly = { direct_members: [fields.creator_id], direct_subgroups: [] };
  return {
    description: '',
    members: [],
    direct_subgroup_ids: [],
    is_system_group: false,
    date_created: fields.date_created,
    deactivated: false,
    can_add_members_group: creatorOnly,
    can_join_group: g['role:nobody'],
    can_leave_group: g['role:everyone'],
    can_manage_group: creatorOnly,
    can_mention_group: g['role:everyone'],
    can_remove_members_group: g['role:nobody'],
    ...fields,
  };
}
