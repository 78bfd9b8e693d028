// URL checks shared by the host and the message view. Not HTML: the strings come from the
// browser's parser (the view) or from htmlparser2 (links), already decoded.

/**
 * Longest URL any surface takes: a link read from a message (a longer one is not a link anyone
 * follows: servers refuse request targets near 8 KB), a link the message view lists or opens,
 * and a request target of this server.
 */
export const MAX_URL_LENGTH = 8192;

/** `data:` images accepted inline (raster only: an SVG document is markup). */
const DATA_IMAGE = /^data:image\/(?:png|gif|jpe?g|webp|bmp|avif|x-icon|vnd\.microsoft\.icon)(?:;[a-z0-9=._-]+)*;base64,[a-z0-9+/=\s]*$/i;
/** Link schemes listed as links (they are never clickable in the message frame). */
const LINK_SCHEME = /^(?:https?:|mailto:|tel:|sms:)/i;

/** What browsers ignore in a URL before reading its scheme (controls, spaces, tabs, newlines), removed, lowercased. */
export function urlForSchemeCheck(url: string): string {
  return url.replace(/[\u0000-\u0020\u007f]/g, '').toLowerCase();
}

/** Whether `url` is a raster image as a base64 `data:` URL. */
export function isDataImageUrl(url: string): boolean {
  return DATA_IMAGE.test(url);
}

/** Whether `url` would be fetched from the network: http(s) or scheme-relative (`//host`, and the backslash spellings). */
export function isRemoteUrl(url: string): boolean {
  const u = urlForSchemeCheck(url);
  return u.startsWith('http:') || u.startsWith('https:') || /^[\\/]{2}/.test(u);
}

/** A link target listed for the Links tab and opened by the host (http, https, mailto, tel, sms), or undefined. */
export function safeLinkTarget(raw: string): string | undefined {
  const url = raw.trim();
  if (!LINK_SCHEME.test(urlForSchemeCheck(url))) return undefined;
  if (/[\u0000-\u001f\u007f]/.test(url)) return undefined;
  return url;
}

/** The user-info part of any URL in a text (`scheme://user:password@`). */
const URL_USERINFO = /(\b[a-z][a-z0-9+.-]*:\/\/)[^/?#\s@]*@/gi;

/** `text` with the user name and password of every URL in it replaced by `***`, for messages and the log. */
export function hideUrlCredentials(text: string): string {
  return text.replace(URL_USERINFO, '$1***@');
}

/** Whether `host` (a URL's hostname) is this machine: the server never leaves it. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** Whether `host` (an address to bind, IPv6 with or without brackets) is a wildcard: every interface, an address no one can open. */
export function isWildcardHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return h === '' || h === '0.0.0.0' || (h.includes('::') && /^[0:]+$/.test(h)) || h === '0:0:0:0:0:0:0:0';
}
