// URLs in rendered Markdown: narrow links in the reference's hash form, and the policy deciding
// which link targets may appear at all.

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * The reference's hash-component encoding: percent-encode everything but ASCII letters, digits
 * and `-_~`, then write '%' as '.' so the result survives the client's hash routing.
 */
export function encodeHashComponent(text: string): string {
  // encodeURIComponent throws on lone surrogates, which user text may contain.
  return encodeURIComponent(text.replace(LONE_SURROGATE, '\uFFFD'))
    .replace(/[!'()*.]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%/g, '.');
}

export function channelNarrowUrl(channelId: number, channelName: string): string {
  return `/#narrow/channel/${channelId}-${encodeHashComponent(channelName.replace(/ /g, '-'))}`;
}

export function topicNarrowUrl(channelId: number, channelName: string, topic: string): string {
  return `${channelNarrowUrl(channelId, channelName)}/topic/${encodeHashComponent(topic)}`;
}

const ALLOWED_SCHEMES = new Set(['http', 'https', 'mailto']);
const SCHEME = /^([a-z][a-z0-9+.-]*):/i;
// A bare host such as "example.com/path", which the reference turns into an http link.
const BARE_HOST = /^[a-z0-9-]+(?:\.[a-z0-9-]+)+(?::\d+)?(?:[/?#]|$)/i;
const LOCAL_PREFIXES = ['#narrow/', '/#narrow/', '/user_uploads/'];

/** Whether a link target stays inside the organization's own web app. */
export function isNarrowLink(href: string): boolean {
  return href.startsWith('#narrow/') || href.startsWith('/#narrow/');
}

/**
 * The href a Markdown link gets, or null when the target is not allowed: only http, https and
 * mailto URLs, bare hosts (made http), and the organization's own narrow and upload paths.
 * Absolute links into the organization become relative, as the reference does.
 */
export function safeLinkHref(raw: string, realmUrl?: string): string | null {
  let href = raw.trim();
  if (realmUrl) {
    const prefix = `${realmUrl.replace(/\/+$/, '')}/`;
    if (href.startsWith(`${prefix}#narrow/`)) href = href.slice(prefix.length);
    else if (href.startsWith(`${prefix}user_uploads/`)) href = `/${href.slice(prefix.length)}`;
  }
  const scheme = SCHEME.exec(href);
  if (scheme) return ALLOWED_SCHEMES.has(scheme[1].toLowerCase()) ? href : null;
  if (LOCAL_PREFIXES.some((p) => href.startsWith(p))) return href;
  if (BARE_HOST.test(href)) return `http://${href}`;
  return null;
}

/** Whether an image source (realm emoji) may be used: http(s) or a same-origin absolute path. */
export function isSafeImageSrc(src: string): boolean {
  const scheme = SCHEME.exec(src);
  if (scheme) return scheme[1].toLowerCase() === 'http' || scheme[1].toLowerCase() === 'https';
  return src.startsWith('/') && !src.startsWith('//') && !src.startsWith('/\\');
}

const IMAGE_EXTENSIONS = /\.(?:bmp|gif|jpe|jpeg|jpg|png|webp)$/i;

/**
 * The upload path id ("2/ab/cdef/file.png") a link points at, if it is an upload of this
 * organization: a relative /user_uploads/ path (absolute ones were made relative already).
 */
export function uploadPathId(href: string): string | null {
  if (!href.startsWith('/user_uploads/')) return null;
  const path = href.slice('/user_uploads/'.length).split(/[?#]/)[0];
  return path === '' ? null : path;
}

export function isImagePath(path: string): boolean {
  return IMAGE_EXTENSIONS.test(path);
}
