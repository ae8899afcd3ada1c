// What a client does with each event: apply it to its register snapshot. Written from
// the API description, independently of the server, so the event-contract suite can check
// that snapshot + events = a fresh snapshot. An event type nobody taught this file fails
// loudly; each area adds its types here together with its snapshot section.
import { presentInaccessibleUser } from '../../src/lib/presenters/users.ts';
import { applyMessageEvent } from './message-events.ts';
import { applyFlagEvent } from './flag-events.ts';
import { applyDraftsFoldersEvent, applyDraftsSetting } from './drafts-folders-events.ts';
import { applyPreferenceEvent, renameInMutedTopics } from './preference-events.ts';
import { applyUserGroupEvent, dropDeactivatedFromGroups } from './user-group-events.ts';
import { applyEmojiInviteEvent } from './emoji-invite-events.ts';
import { applyProfileFieldValue, applyUserRecordEvent } from './user-record-events.ts';

export type State = Record<string, unknown>;
type Person = Record<string, unknown> & { user_id: number };

export interface ApplyOptions {
  /** System group id -> name, as a client learns it from the user groups data. */
  systemGroups: Map<number, string>;
  /** The capabilities the queue was registered with. */
  capabilities?: Record<string, boolean>;
  /** The queue's client_gravatar (default true). */
  clientGravatar?: boolean;
  /** The queue's include_subscribers (default false): subscriber lists kept in channel objects. */
  includeSubscribers?: boolean;
}

const ROLE_FLAGS = (role: number) => ({
  is_owner: role === 100,
  is_admin: role <= 200,
  is_guest: role === 600,
});

function people(state: State): { active: Person[]; inactive: Person[] } {
  return {
    active: state.realm_users as Person[],
    inactive: state.realm_non_active_users as Person[],
  };
}

function findPerson(state: State, userId: number): Person | undefined {
  const { active, inactive } = people(state);
  return active.find((p) => p.user_id === userId) ?? inactive.find((p) => p.user_id === userId);
}

function applyRealmUser(state: State, e: Record<string, unknown>, opts: ApplyOptions): void {
  if (!('realm_users' in state)) return;
  const person = e.person as Person;
  const { active, inactive } = people(state);
  if (e.op === 'add') {
    const { is_active, ...rest } = person;
    (is_active ? active : inactive).push(rest as Person);
    active.sort((a, b) => a.user_id - b.user_id);
    inactive.sort((a, b) => a.user_id - b.user_id);
    return;
  }
  if (e.op === 'remove') {
    const drop = (list: Person[]) => {
      const i = list.findIndex((p) => p.user_id === person.user_id);
      if (i >= 0) list.splice(i, 1);
    };
    drop(active);
    drop(inactive);
    if (!opts.capabilities?.user_list_incomplete) {
      // What remains known of a user the client may no longer access: the placeholder.
      const { is_active: _a, ...placeholder } = presentInaccessibleUser(
        person.user_id,
        String(state.realm_bot_domain),
        `${String(state.realm_url)}/static/images/unknown-user-avatar.png`,
      );
      active.push(placeholder as Person);
      active.sort((a, b) => a.user_id - b.user_id);
    }
    return;
  }
  const target = findPerson(state, person.user_id);
  if (!target) throw new Error(`realm_user update for unknown user ${person.user_id}`);
  const { user_id: _id, new_email, role, is_active, ...fields } = person;
  // A person object carries only some fields (no avatar_source, say): update those it has.
  for (const [k, v] of Object.entries(fields)) if (k in target) target[k] = v;
  // client_gravatar: the client computes the Gravatar of an address it can see.
  if (
    'avatar_url' in fields &&
    fields.avatar_source === 'G' &&
    opts.clientGravatar !== false &&
    target.delivery_email !== null
  ) {
    target.avatar_url = null;
  }
  if (new_email !== undefined) target.email = new_email;
  if (role !== undefined) Object.assign(target, { role }, ROLE_FLAGS(role as number));
  if (is_active !== undefined) {
    const [from, to] = is_active ? [inactive, active] : [active, inactive];
    const i = from.indexOf(target);
    if (i >= 0) {
      from.splice(i, 1);
      to.push(target);
      to.sort((a, b) => a.user_id - b.user_id);
    }
  }
  if (person.user_id === state.user_id) {
    for (const key of [
      'full_name',
      'delivery_email',
      'avatar_url',
      'avatar_source',
      'avatar_url_medium',
    ]) {
      if (key in fields) state[key] = fields[key as keyof typeof fields];
    }
    if (new_email !== undefined) state.email = new_email;
    if (role !== undefined) {
      Object.assign(state, ROLE_FLAGS(role as number), { is_moderator: (role as number) <= 300 });
    }
  }
}

function applyRealm(state: State, e: Record<string, unknown>): void {
  if (!('realm_name' in state)) return;
  if (e.op === 'update') {
    const property = String(e.property);
    state[`realm_${property}`] = e.value;
    // Older keys clients derive from the settings that replaced them.
    if (property === 'message_edit_history_visibility_policy') {
      state.realm_allow_edit_history = e.value !== 'none';
    }
    if (property === 'topics_policy')
      state.realm_mandatory_topics = e.value === 'disable_empty_topic';
    return;
  }
  if (e.op === 'update_dict') {
    for (const [k, v] of Object.entries(e.data as Record<string, unknown>)) state[`realm_${k}`] = v;
    return;
  }
  throw new Error(`realm event op ${String(e.op)} not handled`);
}

function applyRealmBot(state: State, e: Record<string, unknown>): void {
  if (!('realm_bots' in state)) return;
  const bots = state.realm_bots as Person[];
  const bot = e.bot as Person;
  const i = bots.findIndex((b) => b.user_id === bot.user_id);
  if (e.op === 'add') {
    if (i < 0) bots.push(bot);
    bots.sort((a, b) => a.user_id - b.user_id);
  } else if (e.op === 'delete') {
    if (i >= 0) bots.splice(i, 1);
  } else if (e.op === 'remove') {
    if (i >= 0) bots[i].is_active = false;
  } else if (i >= 0) {
    Object.assign(bots[i], bot);
  }
}

type Obj = Record<string, unknown>;
const CHANNEL_LISTS = ['subscriptions', 'unsubscribed', 'never_subscribed', 'streams'] as const;

/** Every object describing the channel, in whichever of the client's lists hold it. */
function channelObjects(state: State, streamId: number): Obj[] {
  const out: Obj[] = [];
  for (const key of CHANNEL_LISTS) {
    const list = state[key] as Obj[] | undefined;
    for (const o of list ?? []) if (o.stream_id === streamId) out.push(o);
  }
  return out;
}

/** Clients keep their channel lists by name. */
function sortChannelLists(state: State): void {
  for (const key of CHANNEL_LISTS) {
    const list = state[key] as Obj[] | undefined;
    list?.sort((a, b) =>
      String(a.name) < String(b.name) ? -1 : String(a.name) > String(b.name) ? 1 : 0,
    );
  }
}

function removeChannel(state: State, key: (typeof CHANNEL_LISTS)[number], streamId: number): Obj[] {
  const list = state[key] as Obj[] | undefined;
  if (!list) return [];
  const gone = list.filter((o) => o.stream_id === streamId);
  state[key] = list.filter((o) => o.stream_id !== streamId);
  return gone;
}

function applyStream(state: State, e: Obj, opts: ApplyOptions): void {
  if (e.op === 'create') {
    for (const channel of e.streams as Obj[]) {
      const id = channel.stream_id as number;
      if ('streams' in state) {
        removeChannel(state, 'streams', id);
        (state.streams as Obj[]).push(structuredClone(channel));
      }
      // A channel the client did not know of: one it may join.
      if ('never_subscribed' in state) {
        const known = (['subscriptions', 'unsubscribed', 'never_subscribed'] as const).some((k) =>
          (state[k] as Obj[]).some((o) => o.stream_id === id),
        );
        // A client keeping subscriber lists starts this one empty: peer_add fills it.
        if (!known) {
          const copy = structuredClone(channel);
          if (opts.includeSubscribers) copy.subscribers = [];
          (state.never_subscribed as Obj[]).push(copy);
        }
      }
    }
  } else if (e.op === 'delete') {
    for (const id of e.stream_ids as number[]) {
      for (const key of CHANNEL_LISTS) removeChannel(state, key, id);
    }
  } else if (e.op === 'update') {
    const property = String(e.property);
    for (const o of channelObjects(state, e.stream_id as number)) {
      o[property] = e.value;
      for (const extra of [
        'rendered_description',
        'history_public_to_subscribers',
        'is_web_public',
      ]) {
        if (extra in e) o[extra] = e[extra];
      }
    }
  } else {
    throw new Error(`stream event op ${String(e.op)} not handled`);
  }
  sortChannelLists(state);
}

function applySubscription(state: State, e: Obj, opts: ApplyOptions): void {
  if (!('subscriptions' in state)) return;
  if (e.op === 'add') {
    for (const sub of e.subscriptions as Obj[]) {
      const id = sub.stream_id as number;
      const copy = structuredClone(sub);
      // A client that did not ask for subscriber lists drops them.
      if (!opts.includeSubscribers) {
        delete copy.subscribers;
        delete copy.partial_subscribers;
      }
      for (const key of ['subscriptions', 'unsubscribed', 'never_subscribed'] as const) {
        removeChannel(state, key, id);
      }
      (state.subscriptions as Obj[]).push(copy);
      // The client's other copy of the channel takes the fresh count.
      for (const o of channelObjects(state, id)) o.subscriber_count = sub.subscriber_count;
    }
  } else if (e.op === 'remove') {
    for (const { stream_id: id } of e.subscriptions as Obj[]) {
      for (const sub of removeChannel(state, 'subscriptions', id as number)) {
        // No peer_remove comes to the leaving user: their own list drops them here.
        if (Array.isArray(sub.subscribers)) {
          sub.subscribers = (sub.subscribers as number[]).filter((u) => u !== state.user_id);
        }
        (state.unsubscribed as Obj[]).push(sub);
      }
      for (const o of channelObjects(state, id as number)) {
        o.subscriber_count = (o.subscriber_count as number) - 1;
      }
    }
  } else if (e.op === 'update') {
    const sub = (state.subscriptions as Obj[]).find((o) => o.stream_id === e.stream_id);
    if (!sub) throw new Error(`subscription update for unknown channel ${String(e.stream_id)}`);
    sub[String(e.property)] = e.value;
  } else if (e.op === 'peer_add' || e.op === 'peer_remove') {
    const users = e.user_ids as number[];
    const sign = e.op === 'peer_add' ? 1 : -1;
    for (const id of e.stream_ids as number[]) {
      const copies = channelObjects(state, id);
      // A client with the subscriber list counts it, for every copy of the channel (the
      // peer_add that fills a newly visible channel's list names users already counted);
      // one without adds up the changes.
      const listed = copies.find((o) => Array.isArray(o.subscribers));
      if (listed) {
        const set = new Set(listed.subscribers as number[]);
        for (const u of users) {
          if (sign > 0) set.add(u);
          else set.delete(u);
        }
        listed.subscribers = [...set].sort((a, b) => a - b);
        for (const o of copies) o.subscriber_count = set.size;
      } else {
        for (const o of copies) {
          o.subscriber_count = (o.subscriber_count as number) + sign * users.length;
        }
      }
    }
  } else {
    throw new Error(`subscription event op ${String(e.op)} not handled`);
  }
  sortChannelLists(state);
}

/**
 * A user came online: the simplified form carries modern entries keyed by user id; the
 * legacy form one client entry, from which the client rebuilds the user's aggregate.
 */
function applyPresence(state: State, e: Obj): void {
  if (!('presences' in state)) return;
  const presences = state.presences as Record<string, unknown>;
  if (e.presences !== undefined) {
    Object.assign(presences, structuredClone(e.presences));
    return;
  }
  if (typeof e.email !== 'string') {
    throw new Error('slim presence events are not modelled (no client form uses them)');
  }
  const website = (e.presence as Record<string, Obj>).website;
  presences[e.email] = {
    aggregated: { client: website.client, status: website.status, timestamp: website.timestamp },
    website: structuredClone(website),
  };
}

/** Apply one event to a snapshot, in place. */
export function applyEvent(state: State, e: Record<string, unknown>, opts: ApplyOptions): void {
  switch (e.type) {
    case 'heartbeat':
    case 'restart':
    case 'test_marker':
      return;
    // Typing is shown for a while and kept nowhere.
    case 'typing':
    case 'typing_edit_message':
      return;
    case 'presence':
      return applyPresence(state, e);
    case 'user_group':
      return applyUserGroupEvent(state, e);
    case 'realm':
      return applyRealm(state, e);
    case 'realm_user':
      applyProfileFieldValue(state, e);
      dropDeactivatedFromGroups(state, e);
      return applyRealmUser(state, e, opts);
    case 'realm_bot':
      return applyRealmBot(state, e);
    case 'stream':
      renameInMutedTopics(state, e);
      return applyStream(state, e, opts);
    case 'subscription':
      return applySubscription(state, e, opts);
    case 'default_streams':
      if ('realm_default_streams' in state) state.realm_default_streams = e.default_streams;
      return;
    case 'default_stream_groups':
      if ('realm_default_stream_groups' in state) {
        state.realm_default_stream_groups = e.default_stream_groups;
      }
      return;
    case 'user_settings':
      applyDraftsSetting(state, e);
      if (state.user_settings) {
        (state.user_settings as Record<string, unknown>)[String(e.property)] = e.value;
      }
      return;
    case 'update_display_settings':
      applyDraftsSetting(state, e);
      if (String(e.setting_name) in state) state[String(e.setting_name)] = e.setting;
      return;
    case 'update_global_notifications':
      if (String(e.notification_name) in state) state[String(e.notification_name)] = e.setting;
      return;
    case 'message':
    case 'update_message':
    case 'delete_message':
      applyMessageEvent(state, e);
      return;
    case 'update_message_flags':
      applyFlagEvent(state, e);
      return;
    case 'reaction':
    case 'user_topic':
    case 'muted_topics':
    case 'alert_words':
      applyPreferenceEvent(state, e);
      return;
    case 'drafts':
    case 'channel_folder':
      applyDraftsFoldersEvent(state, e);
      return;
    default:
      if (applyUserRecordEvent(state, e)) return;
      if (applyEmojiInviteEvent(state, e)) return;
      throw new Error(`applyEvent does not know event type ${String(e.type)}`);
  }
}

const ROLE_IN_GROUP: Record<string, (role: number) => boolean> = {
  'role:owners': (r) => r === 100,
  'role:administrators': (r) => r <= 200,
  'role:moderators': (r) => r <= 300,
  'role:fullmembers': (r) => r <= 400,
  'role:members': (r) => r <= 400,
  'role:everyone': () => true,
  'role:internet': () => true,
  'role:nobody': () => false,
};

/**
 * The user's own permission keys, as a client recomputes them from its role and the
 * organization's group settings after role or setting changes.
 */
export function deriveOwnPermissions(state: State, opts: ApplyOptions): void {
  if (!('realm_users' in state) || !('realm_name' in state)) return;
  const me = findPerson(state, state.user_id as number);
  if (!me) throw new Error('own user missing from realm_users');
  const role = me.role as number;
  const inSystemGroup = (groupId: number): boolean => {
    const name = opts.systemGroups.get(groupId);
    if (!name) throw new Error(`group ${groupId} is not a system group`);
    return ROLE_IN_GROUP[name](role);
  };
  const allowed = (setting: string): boolean => {
    const value = state[`realm_${setting}`] as
      number | { direct_members: number[]; direct_subgroups: number[] };
    if (typeof value === 'number') return inSystemGroup(value);
    return value.direct_members.includes(me.user_id) || value.direct_subgroups.some(inSystemGroup);
  };
  const pub = allowed('can_create_public_channel_group');
  const priv = allowed('can_create_private_channel_group');
  Object.assign(state, {
    can_create_public_streams: pub,
    can_create_private_streams: priv,
    can_create_streams: pub || priv,
    can_subscribe_other_users: allowed('can_add_subscribers_group'),
    can_invite_others_to_realm: allowed('can_invite_users_group'),
  });
}

/** Apply events in order, then recompute what clients derive. */
export function applyEvents(
  state: State,
  events: Record<string, unknown>[],
  opts: ApplyOptions,
): State {
  for (const e of events) applyEvent(state, e, opts);
  deriveOwnPermissions(state, opts);
  return state;
}
