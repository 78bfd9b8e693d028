// The client's transport in a browser page (the web UI, src/webview-ui/page.ts): the page's own
// `fetch`, same-origin credentials (the session cookie goes along, nothing to other origins),
// and the page token in its header on every request. The page holds no API token: it never
// sends an Authorization header. Give them to createClient: `createClient({ baseUrl:
// pageBaseUrl(document.baseURI), serverUrl: pageServerUrl(document.baseURI), fetch: pageFetch({
// header, pageToken: () => token }) })`.

export interface PageFetchOptions {
  /** The header the page token goes in (the server's ui/session.ts PAGE_TOKEN_HEADER). */
  header: string;
  /** The session's page token, read at each request; undefined once signed out (sent without one, the server answers 401). */
  pageToken(): string | undefined;
  /** The runtime's fetch unless given (tests). */
  fetch?: typeof fetch;
}

/** A `fetch` for createClient's `fetch` option that sends what a page's request to its own server sends. */
export function pageFetch(o: PageFetchOptions): typeof fetch {
  return (input, init = {}) => {
    const headers = new Headers(init.headers);
    headers.delete('authorization');
    const token = o.pageToken();
    if (token !== undefined) headers.set(o.header, token);
    return (o.fetch ?? globalThis.fetch)(input, { ...init, headers, credentials: 'same-origin' });
  };
}

/**
 * The client's base URL for a page whose API is under `basePath` relative to the page's own
 * address (`ui/`: the page is at `/` on the server, or under any prefix behind a proxy).
 */
export function pageBaseUrl(baseUri: string, basePath = 'ui/'): string {
  return new URL(basePath, baseUri).href;
}

/** The server's address for a page at `baseUri` (its own folder: the server's root, or a proxy's prefix), as errors name it. */
export function pageServerUrl(baseUri: string): string {
  return new URL('./', baseUri).href.replace(/\/$/, '');
}
