// The client over a page's transport (src/api/browser.ts): the page's API under its base path,
// the page token in its header, same-origin credentials, and never an API token.
import assert from 'node:assert/strict';
import { pageBaseUrl, pageFetch, pageServerUrl } from '../../src/api/browser';
import { createClient } from '../../src/api/client';
import { ApiError } from '../../src/api/errors';

const HEADER = 'x-test-inbox-session';

describe('client over the page transport', () => {
  it('names the API under the page\'s base path, behind a proxy prefix too', () => {
    assert.equal(pageBaseUrl('http://127.0.0.1:2580/'), 'http://127.0.0.1:2580/ui/');
    assert.equal(pageBaseUrl('https://box.example/proxy/2580/'), 'https://box.example/proxy/2580/ui/');
  });

  it('names the server, not the page\'s /ui base, when it cannot be reached', async () => {
    assert.equal(pageServerUrl('https://box.example/proxy/2580/'), 'https://box.example/proxy/2580');
    const refused: typeof fetch = () => Promise.reject(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } }));
    const base = 'http://127.0.0.1:2580/';
    const api = createClient({ baseUrl: pageBaseUrl(base), serverUrl: pageServerUrl(base), retries: 0, fetch: pageFetch({ header: HEADER, pageToken: () => 'p', fetch: refused }) });
    await assert.rejects(api.listDomains(), (e: Error) => {
      assert.match(e.message, /^Could not reach the server at http:\/\/127\.0\.0\.1:2580: /);
      return true;
    });
  });

  it('sends the page token and same-origin credentials, and no Authorization header', async () => {
    const seen: Array<{ url: string; init: RequestInit }> = [];
    let token: string | undefined = 'page-1';
    const fake: typeof fetch = (input, init) => {
      seen.push({ url: String(input), init: init ?? {} });
      return Promise.resolve(new Response(JSON.stringify({ domains: [{ name: 'inbox.test', inboxes: 1, messages: 2 }] }), { headers: { 'content-type': 'application/json' } }));
    };
    const api = createClient({ baseUrl: pageBaseUrl('http://h.test/proxy/9/'), apiToken: 'never-sent', fetch: pageFetch({ header: HEADER, pageToken: () => token, fetch: fake }) });
    try {
      const d = await api.listDomains();
      assert.deepEqual(d.domains.map((x) => x.name), ['inbox.test']);
      assert.equal(seen[0].url, 'http://h.test/proxy/9/ui/api/v2/domains');
      const h = new Headers(seen[0].init.headers);
      assert.equal(h.get(HEADER), 'page-1');
      assert.equal(h.get('authorization'), null);
      assert.equal(seen[0].init.credentials, 'same-origin');
      token = undefined;
      await api.listDomains();
      assert.equal(new Headers(seen[1].init.headers).get(HEADER), null);
    } finally {
      await api.dispose();
    }
  });

  /** A fake fetch answering each request with `answer`, recording what was sent. */
  function recorder(answer: (url: string, init: RequestInit) => Response): { fetch: typeof fetch; seen: Array<{ url: string; init: RequestInit }> } {
    const seen: Array<{ url: string; init: RequestInit }> = [];
    return {
      seen,
      fetch: (input, init) => {
        seen.push({ url: String(input), init: init ?? {} });
        return Promise.resolve(answer(String(input), init ?? {}));
      },
    };
  }
  const json = (status: number, body: unknown): Response => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

  it('signs in at the page\'s own session route with the typed token or a ticket, and returns the checked page token', async () => {
    const r = recorder(() => json(201, { pageToken: 'Abc_123-xyz', expires: 1_800_000_000_000 }));
    const api = createClient({ baseUrl: pageBaseUrl('https://box.example/proxy/2580/'), fetch: pageFetch({ header: HEADER, pageToken: () => undefined, fetch: r.fetch }) });
    try {
      assert.deepEqual(await api.openPageSession({ token: 'typed-token' }), { pageToken: 'Abc_123-xyz', expires: 1_800_000_000_000 });
      assert.equal(r.seen[0].url, 'https://box.example/proxy/2580/ui/session');
      assert.equal(r.seen[0].init.method, 'POST');
      assert.deepEqual(JSON.parse(String(r.seen[0].init.body)), { token: 'typed-token' });
      const h = new Headers(r.seen[0].init.headers);
      assert.equal(h.get('authorization'), null, 'the typed token goes in the body only');
      assert.equal(h.get(HEADER), null);
      await api.openPageSession({ ticket: 'abc.123.def' });
      assert.deepEqual(JSON.parse(String(r.seen[1].init.body)), { ticket: 'abc.123.def' });
    } finally {
      await api.dispose();
    }
  });

  it('refuses a page token that could not go in a header, and a malformed credential before any request', async () => {
    const r = recorder(() => json(201, { pageToken: 'bad token\r\nx: y', expires: 1 }));
    const api = createClient({ baseUrl: pageBaseUrl('http://h.test/'), fetch: pageFetch({ header: HEADER, pageToken: () => undefined, fetch: r.fetch }) });
    try {
      await assert.rejects(api.openPageSession({ token: 't' }), (e: unknown) => ApiError.is(e, 'protocol') && e.field === 'pageToken');
      await assert.rejects(api.openPageSession({ token: '' }), (e: unknown) => ApiError.is(e, 'invalid_input') && e.field === 'token');
      await assert.rejects(api.openPageSession({ token: 'a\nb' }), (e: unknown) => ApiError.is(e, 'invalid_input') && e.field === 'token');
      await assert.rejects(api.openPageSession({ ticket: 'x#y' }), (e: unknown) => ApiError.is(e, 'invalid_input') && e.field === 'ticket');
      assert.equal(r.seen.length, 1, 'no request for a bad credential');
    } finally {
      await api.dispose();
    }
  });

  it('gives the server\'s reason for a refused sign-in, with its status', async () => {
    const r = recorder(() => json(403, { status: 'error', message: 'wrong API token' }));
    const api = createClient({ baseUrl: pageBaseUrl('http://h.test/'), fetch: pageFetch({ header: HEADER, pageToken: () => undefined, fetch: r.fetch }) });
    try {
      await assert.rejects(api.openPageSession({ token: 'nope' }), (e: unknown) => ApiError.is(e, 'unauthorized') && e.status === 403 && e.serverMessage === 'wrong API token');
      assert.equal(r.seen.length, 1, 'a sign-in is sent once');
    } finally {
      await api.dispose();
    }
  });

  it('signs out with the page token, and checks the answer', async () => {
    const r = recorder(() => json(200, { status: 'ok' }));
    const api = createClient({ baseUrl: pageBaseUrl('http://h.test/'), fetch: pageFetch({ header: HEADER, pageToken: () => 'page-9', fetch: r.fetch }) });
    try {
      await api.closePageSession();
      assert.equal(r.seen[0].url, 'http://h.test/ui/session');
      assert.equal(r.seen[0].init.method, 'DELETE');
      assert.equal(new Headers(r.seen[0].init.headers).get(HEADER), 'page-9');
    } finally {
      await api.dispose();
    }
    const odd = createClient({ baseUrl: pageBaseUrl('http://h.test/'), fetch: pageFetch({ header: HEADER, pageToken: () => 'p', fetch: recorder(() => json(200, { status: 'nope' })).fetch }) });
    try {
      await assert.rejects(odd.closePageSession(), (e: unknown) => ApiError.is(e, 'protocol') && e.field === 'status');
    } finally {
      await odd.dispose();
    }
  });

  it('reads the attachment list through the page\'s client with its checks, not as it came', async () => {
    const r = recorder(() => json(200, { attachments: [{ filename: 'a.txt', 'content-type': 'text/plain', size: 3, attachment_id: 0 }, { filename: 'b', attachment_id: 'one' }] }));
    const api = createClient({ baseUrl: pageBaseUrl('http://h.test/'), fetch: pageFetch({ header: HEADER, pageToken: () => 'p', fetch: r.fetch }) });
    try {
      await assert.rejects(api.listAttachments('inbox.test', 'joe', 'joe-1-1'), (e: unknown) => ApiError.is(e, 'protocol') && e.field === 'attachments[1].attachment_id');
      assert.equal(r.seen[0].url, 'http://h.test/ui/api/v2/domains/inbox.test/inboxes/joe/messages/joe-1-1/attachments');
    } finally {
      await api.dispose();
    }
  });

  it('maps the session\'s 401 to unauthorized, as every other surface sees it', async () => {
    const fake: typeof fetch = () => Promise.resolve(new Response(JSON.stringify({ status: 'error', message: 'the session has ended' }), { status: 401, headers: { 'content-type': 'application/json' } }));
    const api = createClient({ baseUrl: pageBaseUrl('http://h.test/'), fetch: pageFetch({ header: HEADER, pageToken: () => 'p', fetch: fake }), retries: 0 });
    try {
      await assert.rejects(api.listDomains(), (e: unknown) => ApiError.is(e, 'unauthorized'));
    } finally {
      await api.dispose();
    }
  });
});
