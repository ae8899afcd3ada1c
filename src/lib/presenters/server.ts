// GET /server_settings.
import { createHash } from 'node:crypto';
import type { RealmRow } from '../../store/schema.ts';
import { realmUrl } from '../realm-url.ts';
import { SVC_FEATURE_LEVEL, SVC_MERGE_BASE, SVC_VERSION } from '../../version.ts';

/** Version fields under Parley's names and, for existing clients, the upstream ones. */
export function versionFields(): Record<string, unknown> {
  return {
    svc_feature_level: SVC_FEATURE_LEVEL,
    svc_version: SVC_VERSION,
    svc_merge_base: SVC_MERGE_BASE,
    zulip_feature_level: SVC_FEATURE_LEVEL,
    zulip_version: SVC_VERSION,
    zulip_merge_base: SVC_MERGE_BASE,
  };
}

export const AUTHENTICATION_METHODS = {
  password: true,
  dev: false,
  email: true,
  ldap: false,
  remoteuser: false,
  github: false,
  azuread: false,
  gitlab: false,
  apple: false,
  google: false,
  saml: false,
  'openid connect': false,
};

export function presentServerSettings(
  externalUrl: URL,
  realm: RealmRow | undefined,
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    authentication_methods: AUTHENTICATION_METHODS,
    external_authentication_methods: [],
    ...versionFields(),
    push_notifications_enabled: false,
    is_incompatible: false,
    email_auth_enabled: true,
    require_email_format_usernames: true,
  };
  // The root domain of a multi-organization server has no organization to describe.
  if (realm && !realm.deactivated) {
    const url = realmUrl(externalUrl, realm.string_id);
    Object.assign(out, {
      realm_url: url,
      realm_uri: url,
      realm_name: realm.name,
      realm_icon: realmIconUrl(realm),
      realm_description: renderPlainDescription(realm.description),
      realm_web_public_access_enabled: false,
    });
  }
  return out;
}

/**
 * The uploaded icon (served by http/routes/realm-icon.ts; relative to the organization's
 * URL, as the reference server's local storage answers), or a generated one.
 */
export function realmIconUrl(
  realm: Pick<RealmRow, 'id' | 'string_id' | 'icon_source' | 'icon_version'>,
): string {
  if (realm.icon_source === 'U') return `${realmIconPath(realm.id)}?version=${realm.icon_version}`;
  const hash = createHash('md5').update(`realm-${realm.id}-${realm.string_id}`).digest('hex');
  return `https://secure.gravatar.com/avatar/${hash}?d=identicon&version=${realm.icon_version}`;
}

export const realmIconPath = (realmId: number): string => `/user_avatars/${realmId}/realm/icon.png`;

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);

/** The description as HTML paragraphs (Markdown rendering replaces this where available). */
export function renderPlainDescription(text: string): string {
  if (text.trim() === '') return '';
  return text
    .split(/\n{2,}/)
    .map((p) => `<p>${escapeHtml(p).replace(/\n/g, '<br>\n')}</p>`)
    .join('\n');
}
