// The callers a per-role permission test walks through, and the bodies they get back:
// every fixture role, plus a wrong API key and no authentication at all.
import type { TestApp } from './app.ts';
import type { Client } from './client.ts';
import { ROLE_KEYS } from './fixture.ts';

export type Who = (typeof ROLE_KEYS)[number] | 'member2' | 'badKey' | 'noAuth';
export const EVERY_CALLER: Who[] = [...ROLE_KEYS, 'badKey', 'noAuth'];

export function callerFor(t: TestApp, who: Who): Client {
  if (who === 'noAuth') return t.as(null);
  if (who === 'badKey') return t.as({ email: t.fx.member.email, api_key: 'Z'.repeat(32) });
  return t.as(t.fx[who]);
}

export const err = (msg: string, code = 'BAD_REQUEST', extra: Record<string, unknown> = {}) => ({
  result: 'error',
  msg,
  code,
  ...extra,
});
export const OK = { result: 'success', msg: '' };

/** What the callers that cannot authenticate get, on every route. */
export const UNAUTHORIZED: Partial<Record<Who, Record<string, unknown>>> = {
  deactivated: err('Account is deactivated', 'UNAUTHORIZED'),
  badKey: err('Invalid API key', 'UNAUTHORIZED'),
  noAuth: err('Missing authorization header for basic auth', 'UNAUTHORIZED'),
};
