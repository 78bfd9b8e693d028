// The client over a page's transport (src/api/browser.ts): the page's API under its base path,
// the page token in its header, same-origin credentials, and never an API token.
import assert from 'node:assert/strict';
import { pageBaseUrl, pageFetch } from '../../src/api/browser';
import { createClient } from '../../src/api/client';
import { ApiError } from '../../src/api/errors';

const HEADER = 'x-test-inbox-session';

describe('client over the page transport', () => {
  it('names the API under the page\'s base path, behind a proxy prefix too', () => {
    assert.equal(pageBaseUrl('http://127.0.0.1:2580/'), 'http://127.0.0.1:2580/ui/');
    assert.equal(pageBaseUrl('https://box.example/proxy/2580/'), 'https://box.example/proxy/2580/ui/');
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
