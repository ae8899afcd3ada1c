// Each organization lives at its subdomain of the external URL; the default one
// (subdomain "") at the external URL itself.

export function realmHost(externalUrl: URL, stringId: string): string {
  return stringId === '' ? externalUrl.host : `${stringId}.${externalUrl.host}`;
}

export function realmUrl(externalUrl: URL, stringId: string): string {
  return `${externalUrl.protocol}//${realmHost(externalUrl, stringId)}`;
}

/** The subdomain a request's host names, or "" for the root domain and bare IP addresses. */
export function subdomainOf(requestHostname: string, externalUrl: URL): string {
  const host = requestHostname.toLowerCase().replace(/:\d+$/, '');
  const root = externalUrl.hostname.toLowerCase();
  if (host === root || !host.endsWith(`.${root}`)) return '';
  return host.slice(0, -(root.length + 1));
}

/** Address domain for the API emails of users whose real address is hidden. */
export function fakeEmailDomain(externalUrl: URL, stringId: string): string {
  return realmHost(externalUrl, stringId).replace(/:\d+$/, '');
}
