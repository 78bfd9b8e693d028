// The web UI's routes on a real server (src/server/http/ui): the page and its CSP, sign-in,
// the two halves of a session, what a session opens (only /ui/) and what it never opens
// (/api/v2, /mcp, Twilio, providers), sign-out, a token change, expiry.
import { strict as assert } from 'node:assert';
import http from 'node:http';
import { MemoryRevocations } from '../../src/server/http/ui/session';
import { API_TOKEN, DOMAIN, startApi, type Harness } from './api-harness';
import { multipartEmail } from '../support/messages';
import { PAGE_TOKEN_HEADER, SESSION_COOKIE } from '../../src/server/http/ui/session';
import { parseServeArgs } from '../../src/cli/cli';
import { pageBaseUrl, pageFetch } from '../../src/api/browser';
import { createClient } from '../../src/api/client';
import { ApiError } from '../../src/api/errors';

describe('web UI routes', function () {
  this.timeout(60_000);
  let h: Harness;
  let now = Date.now();
  before(async () => {
    h = await startApi({ clock: { now: () => now } });
  });
  after(() => h.close());

  async function signIn(server: Harness = h, token = API_TOKEN): Promise<{ cookie: string; pageToken: string }> {
    const r = await server.call('POST', '/ui/session', { anonymous: true, body: { token } });
    assert.equal(r.status, 201, r.text);
    const set = String(r.headers['set-cookie']);
    const cookie = /^([^;]+)/.exec(set)![1];
    return { cookie, pageToken: r.json.pageToken as string };
  }

  const ui = (s: { cookie?: string; pageToken?: string }): Record<string, string | undefined> => ({ cookie: s.cookie, [PAGE_TOKEN_HEADER]: s.pageToken });

  it('serves the page at / with a nonce CSP and no inline script; GET only', async () => {
    const r = await h.call('GET', '/', { anonymous: true });
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^text\/html/);
    const csp = String(r.headers['content-security-policy']);
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    assert.ok(nonce, csp);
    assert.doesNotMatch(csp, /unsafe-eval|script-src[^;]*unsafe-inline/);
    assert.match(csp, /frame-ancestors 'none'/);
    const scripts = [...r.text.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    assert.equal(scripts.length, 1);
    assert.equal(scripts[0][2], '', 'no inline script');
    assert.match(scripts[0][1], new RegExp(`nonce="${nonce!.replace(/[+/=]/g, '\\$&')}" src="ui/webui.js"`), 'relative to the page, so a proxy path prefix works');
    assert.doesNotMatch(r.text, /(?:src|href)="\//, 'no URL of the page is absolute');
    const again = await h.call('GET', '/', { anonymous: true });
    assert.notEqual(/nonce-([^']+)/.exec(String(again.headers['content-security-policy']))?.[1], nonce, 'a fresh nonce per page');
    assert.equal((await h.call('HEAD', '/', { anonymous: true })).status, 200);
    const post = await h.call('POST', '/', { anonymous: true, body: {} });
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, 'GET, HEAD');
    const js = await h.call('GET', '/ui/webui.js', { anonymous: true });
    assert.equal(js.status, 200, 'dist/webui.js is built (node esbuild.mjs)');
    assert.match(String(js.headers['content-type']), /javascript/);
    assert.equal((await h.call('GET', '/ui/webui.css', { anonymous: true })).status, 200);
  });

  it('signs in with the API token only: a wrong or missing token gets a clear error', async () => {
    const wrong = await h.call('POST', '/ui/session', { anonymous: true, body: { token: 'nope' } });
    assert.equal(wrong.status, 403);
    assert.equal(wrong.json.message, 'wrong API token');
    assert.equal(wrong.headers['set-cookie'], undefined);
    const empty = await h.call('POST', '/ui/session', { anonymous: true, body: {} });
    assert.equal(empty.status, 400);
    const r = await h.call('POST', '/ui/session', { anonymous: true, body: { token: API_TOKEN } });
    assert.equal(r.status, 201);
    const set = String(r.headers['set-cookie']);
    assert.match(set, new RegExp(`^${SESSION_COOKIE}=`));
    for (const attr of ['HttpOnly', 'SameSite=Strict', 'Max-Age=43200']) assert.ok(set.includes(attr), `${attr} in ${set}`);
    // No Path: the browser's default path for /ui/session is /ui (/proxy/<port>/ui behind a
    // prefix); the Chromium tests check the path the browser really gives it.
    assert.doesNotMatch(set, /Path=/i, 'the path is the browser default of /ui/session');
    assert.doesNotMatch(set, /Secure/, 'a loopback http server sets no Secure');
    assert.equal(typeof r.json.pageToken, 'string');
    assert.ok(!set.includes(r.json.pageToken as string), 'the page token is not in the cookie');
  });

  it('a session opens the UI routes, which answer as the API does', async () => {
    await h.deliver('alice', await multipartEmail({ subject: 'Your code is 482913' }));
    const s = await signIn();
    const domains = await h.call('GET', '/ui/api/v2/domains', { anonymous: true, headers: ui(s) });
    assert.equal(domains.status, 200, domains.text);
    const api = await h.call('GET', '/api/v2/domains');
    assert.deepEqual(domains.json, api.json);
    const list = await h.call('GET', `/ui/api/v2/domains/${DOMAIN}/inboxes/alice`, { anonymous: true, headers: ui(s) });
    assert.equal(list.status, 200);
    assert.equal(list.json.msgs.length, 1);
    const found = await h.call('GET', `/ui/api/v2/search?q=${encodeURIComponent('subject:code')}`, { anonymous: true, headers: ui(s) });
    assert.equal(found.status, 200, found.text);
    assert.equal(found.json.total, 1);
    const id = list.json.msgs[0].id as string;
    const msg = await h.call('GET', `/ui/api/v2/domains/${DOMAIN}/inboxes/alice/messages/${id}`, { anonymous: true, headers: ui(s) });
    assert.equal(msg.status, 200);
    // Only what the page does: no injection, no webhook, no TOTP through a session.
    const inject = await h.call('POST', `/ui/api/v2/domains/${DOMAIN}/inboxes/alice`, { anonymous: true, headers: ui(s), body: { subject: 'x', from: 'a@b.test', text: 'x' } });
    assert.equal(inject.status, 405);
    assert.equal((await h.call('GET', '/ui/api/v2/totp/JBSWY3DPEHPK3PXP', { anonymous: true, headers: ui(s) })).status, 404);
    const del = await h.call('DELETE', `/ui/api/v2/domains/${DOMAIN}/inboxes/alice/messages/${id}`, { anonymous: true, headers: ui(s) });
    assert.equal(del.status, 200, del.text);
    const gone = await h.call('GET', `/ui/api/v2/domains/${DOMAIN}/inboxes/alice/messages/${id}`, { anonymous: true, headers: ui(s) });
    assert.equal(gone.status, 404);
  });

  it('the cookie alone, the page token alone, or a forged cookie open nothing', async () => {
    const s = await signIn();
    const path = '/ui/api/v2/domains';
    const cookieOnly = await h.call('GET', path, { anonymous: true, headers: { cookie: s.cookie } });
    assert.equal(cookieOnly.status, 401);
    assert.match(cookieOnly.json.message, /cookie alone opens nothing/);
    assert.equal((await h.call('GET', path, { anonymous: true, headers: { [PAGE_TOKEN_HEADER]: s.pageToken } })).status, 401);
    const [id, exp] = s.cookie.split('=')[1].split('.');
    const longer = `${SESSION_COOKIE}=${id}.${Number(exp) + 1e9}.${s.cookie.split('.')[2]}`;
    assert.equal((await h.call('GET', path, { anonymous: true, headers: { cookie: longer, [PAGE_TOKEN_HEADER]: s.pageToken } })).status, 401);
    const other = await signIn();
    assert.equal((await h.call('GET', path, { anonymous: true, headers: { cookie: s.cookie, [PAGE_TOKEN_HEADER]: other.pageToken } })).status, 401, "another session's page token");
    // Not the API token either: the UI routes take a session only.
    assert.equal((await h.call('GET', path)).status, 401);
  });

  it('G12: a cookie of the same name tossed by another port of the host (before or after ours) locks no one out', async () => {
    const s = await signIn();
    const path = '/ui/api/v2/domains';
    // The app under test sets its own test_inbox_ui for the host (cookies are not kept per port);
    // the browser sends the one with the longer path first, and both under one name.
    const tossed = [`${SESSION_COOKIE}=app-value`, `${SESSION_COOKIE}=${'A'.repeat(22)}.9999999999999.forged`, `${SESSION_COOKIE}=`];
    for (const t of tossed) {
      for (const cookie of [`${t}; ${s.cookie}`, `${s.cookie}; ${t}`, `theme=dark; ${t}; other=1; ${s.cookie}`]) {
        const r = await h.call('GET', path, { anonymous: true, headers: { cookie, [PAGE_TOKEN_HEADER]: s.pageToken } });
        assert.equal(r.status, 200, `${cookie}: ${r.text}`);
      }
    }
    // Two sessions of ours (another sign-in's cookie left at another path): the page token names which.
    const other = await signIn();
    const both = `${other.cookie}; ${s.cookie}`;
    assert.equal((await h.call('GET', path, { anonymous: true, headers: { cookie: both, [PAGE_TOKEN_HEADER]: s.pageToken } })).status, 200);
    assert.equal((await h.call('GET', path, { anonymous: true, headers: { cookie: both, [PAGE_TOKEN_HEADER]: other.pageToken } })).status, 200);
    // Still nothing without a cookie whose MAC holds.
    const none = await h.call('GET', path, { anonymous: true, headers: { cookie: tossed.join('; '), [PAGE_TOKEN_HEADER]: s.pageToken } });
    assert.equal(none.status, 401);
  });

  it('a session never opens /api/v2, /mcp, Twilio or provider routes', async () => {
    const s = await signIn();
    const headers = ui(s);
    for (const [method, target] of [
      ['GET', '/api/v2/domains'],
      ['GET', `/api/v2/domains/${DOMAIN}/inboxes/alice`],
      ['GET', '/api/v2/search?q=code'],
      ['POST', '/mcp'],
      ['GET', '/2010-04-01/Accounts/AC00000000000000000000000000000000/Messages.json'],
      ['POST', '/emails'],
    ] as const) {
      const r = await h.call(method, target, { anonymous: true, headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: method === 'POST' ? {} : undefined });
      assert.ok(r.status === 401 || r.status === 403, `${method} ${target} with a session: ${r.status} ${r.text.slice(0, 200)}`);
    }
  });

  it('a sign-in ticket: asked for with the API token only, spent once for a session, opening nothing else', async () => {
    assert.equal((await h.call('POST', '/ui/ticket', { anonymous: true })).status, 401, 'no API token, no ticket');
    assert.equal((await h.call('POST', '/ui/ticket', { anonymous: true, headers: { authorization: 'nope' } })).status, 403);
    const s = await signIn();
    assert.equal((await h.call('POST', '/ui/ticket', { anonymous: true, headers: ui(s) })).status, 401, 'a session cannot mint a ticket');
    assert.equal((await h.call('GET', '/ui/ticket')).status, 405);
    const foreign = await h.call('POST', '/ui/ticket', { headers: { origin: 'http://evil.test' } });
    assert.equal(foreign.status, 403, 'a page of another site gets no ticket');

    const r = await h.call('POST', '/ui/ticket');
    assert.equal(r.status, 201, r.text);
    assert.equal(r.headers['cache-control'], 'no-store');
    assert.equal(r.headers['set-cookie'], undefined, 'a ticket is not a session');
    const ticket = r.json.ticket as string;
    assert.match(ticket, /^[A-Za-z0-9_-]{22}\.[0-9]+\.[A-Za-z0-9_-]+$/, 'fits a URL fragment as is');
    assert.ok(!ticket.includes(API_TOKEN), 'the ticket does not carry the token');
    assert.equal(r.json.expires, now + 30_000);

    // The ticket is no credential anywhere but the sign-in: not the API, not the UI routes, not /mcp.
    assert.equal((await h.call('GET', '/api/v2/domains', { anonymous: true, headers: { authorization: ticket } })).status, 403);
    assert.equal((await h.call('GET', `/api/v2/domains?token=${encodeURIComponent(ticket)}`, { anonymous: true })).status, 403);
    assert.equal((await h.call('GET', '/ui/api/v2/domains', { anonymous: true, headers: { [PAGE_TOKEN_HEADER]: ticket, cookie: `${SESSION_COOKIE}=${ticket}` } })).status, 401);
    assert.equal((await h.call('POST', '/mcp', { anonymous: true, headers: { authorization: `Bearer ${ticket}`, accept: 'application/json, text/event-stream' }, body: {} })).status, 403);
    assert.equal((await h.call('POST', '/ui/session', { anonymous: true, body: { token: ticket } })).status, 403, 'a ticket is not the API token');

    const first = await h.call('POST', '/ui/session', { anonymous: true, body: { ticket } });
    assert.equal(first.status, 201, first.text);
    const cookie = /^([^;]+)/.exec(String(first.headers['set-cookie']))![1];
    const session = { cookie, pageToken: first.json.pageToken as string };
    assert.equal((await h.call('GET', '/ui/api/v2/domains', { anonymous: true, headers: ui(session) })).status, 200);
    const again = await h.call('POST', '/ui/session', { anonymous: true, body: { ticket } });
    assert.equal(again.status, 401);
    assert.match(again.json.message, /used already/);
    assert.equal(again.headers['set-cookie'], undefined);

    // A forged or re-dated ticket, and a session cookie offered as a ticket, are not valid.
    const [id, exp, mac] = ticket.split('.');
    for (const forged of [`${id}.${Number(exp) + 60_000}.${mac}`, `${id}.${exp}.${mac.slice(0, -2)}AA`, cookie.split('=')[1]]) {
      const f = await h.call('POST', '/ui/session', { anonymous: true, body: { ticket: forged } });
      assert.equal(f.status, 401, forged);
      assert.match(f.json.message, /not valid/);
    }
    assert.equal((await h.call('POST', '/ui/session', { anonymous: true, body: { ticket: 42 } })).status, 400);
  });

  it('a sign-in ticket expires in seconds', async () => {
    const r = await h.call('POST', '/ui/ticket');
    assert.equal(r.status, 201);
    now += 30_000;
    const late = await h.call('POST', '/ui/session', { anonymous: true, body: { ticket: r.json.ticket } });
    assert.equal(late.status, 401);
    assert.match(late.json.message, /expired/);
  });

  it('a ticket of one server is spent on another of the team (same token, same store); a token change voids it', async () => {
    const other = await startApi({ store: h.store, clock: { now: () => now } });
    try {
      const r = await h.call('POST', '/ui/ticket');
      assert.equal((await other.call('POST', '/ui/session', { anonymous: true, body: { ticket: r.json.ticket } })).status, 201);
      const changed = await startApi({ apiToken: 'a-new-api-token-78', store: h.store, clock: { now: () => now } });
      try {
        const t = await h.call('POST', '/ui/ticket');
        assert.equal((await changed.call('POST', '/ui/session', { anonymous: true, body: { ticket: t.json.ticket } })).status, 401, 'a token change voids the tickets too');
      } finally {
        await changed.close();
      }
    } finally {
      await other.close();
    }
  });

  it('refuses a foreign Origin on /ui/', async () => {
    const r = await h.call('POST', '/ui/session', { anonymous: true, headers: { origin: 'http://evil.test' }, body: { token: API_TOKEN } });
    assert.equal(r.status, 403);
    const s = await signIn();
    assert.equal((await h.call('GET', '/ui/api/v2/domains', { anonymous: true, headers: { ...ui(s), origin: 'http://127.0.0.1:1' } })).status, 403);
    assert.equal((await h.call('GET', '/ui/api/v2/domains', { anonymous: true, headers: { ...ui(s), origin: `http://127.0.0.1:${h.port}` } })).status, 200);
  });

  it('a ticket may declare the page\'s origin behind a proxy: its session accepts that origin and no other', async () => {
    const declared = 'https://editor.example.test';
    const tk = await h.call('POST', '/ui/ticket', { body: { origin: declared } });
    assert.equal(tk.status, 201, tk.text);
    assert.match(tk.json.ticket as string, /^[A-Za-z0-9_.-]+$/, 'still fits a URL fragment as is');
    // A foreign page cannot spend it (and so does not burn it).
    const foreign = await h.call('POST', '/ui/session', { anonymous: true, headers: { origin: 'https://evil.example.test' }, body: { ticket: tk.json.ticket } });
    assert.equal(foreign.status, 403, foreign.text);
    const first = await h.call('POST', '/ui/session', { anonymous: true, headers: { origin: declared }, body: { ticket: tk.json.ticket } });
    assert.equal(first.status, 201, first.text);
    const s = { cookie: /^([^;]+)/.exec(String(first.headers['set-cookie']))![1], pageToken: first.json.pageToken as string };
    assert.equal((await h.call('GET', '/ui/api/v2/domains', { anonymous: true, headers: { ...ui(s), origin: declared } })).status, 200, 'the declared origin');
    assert.equal((await h.call('GET', '/ui/api/v2/domains', { anonymous: true, headers: { ...ui(s), origin: `http://127.0.0.1:${h.port}` } })).status, 200, 'the server\'s own origin still');
    assert.equal((await h.call('GET', '/ui/api/v2/domains', { anonymous: true, headers: { ...ui(s), origin: 'https://evil.example.test' } })).status, 403, 'another origin');
    assert.equal((await h.call('GET', '/ui/api/v2/domains', { anonymous: true, headers: { ...ui(s), origin: 'http://editor.example.test' } })).status, 403, 'the declared host over another scheme');
    // The origin is under the cookie's MAC: re-declaring it in a cookie breaks the session.
    const [name, value] = s.cookie.split('=');
    const parts = value.split('.');
    const forged = `${name}=${[parts[0], parts[1], Buffer.from('https://evil.example.test').toString('base64url'), parts[3]].join('.')}`;
    assert.equal((await h.call('GET', '/ui/api/v2/domains', { anonymous: true, headers: { ...ui({ ...s, cookie: forged }), origin: 'https://evil.example.test' } })).status, 403);
    assert.equal((await h.call('GET', '/ui/api/v2/domains', { anonymous: true, headers: { ...ui({ ...s, cookie: forged }) } })).status, 401, 'a re-declared cookie is no session');
    // No declaration: a session accepts exactly what it did before.
    const plain = await h.call('POST', '/ui/ticket');
    assert.equal((await h.call('POST', '/ui/session', { anonymous: true, headers: { origin: declared }, body: { ticket: plain.json.ticket } })).status, 403, 'an undeclared ticket refuses the proxy origin');
    const p = await h.call('POST', '/ui/session', { anonymous: true, body: { ticket: plain.json.ticket } });
    assert.equal(p.status, 201, p.text);
    const ps = { cookie: /^([^;]+)/.exec(String(p.headers['set-cookie']))![1], pageToken: p.json.pageToken as string };
    assert.equal((await h.call('GET', '/ui/api/v2/domains', { anonymous: true, headers: { ...ui(ps), origin: declared } })).status, 403);
    assert.equal((await h.call('GET', '/ui/api/v2/domains', { anonymous: true, headers: { ...ui(ps), origin: `http://127.0.0.1:${h.port}` } })).status, 200);
    // Only the API token declares, and only a plain origin.
    assert.equal((await h.call('POST', '/ui/ticket', { anonymous: true, headers: ui(s), body: { origin: declared } })).status, 401, 'a session cannot mint a ticket for any origin');
    for (const bad of ['https://editor.example.test/proxy/5000/', 'javascript:alert(1)', 'null', 42, `https://${'a'.repeat(300)}.test`]) {
      const r = await h.call('POST', '/ui/ticket', { body: { origin: bad } });
      assert.equal(r.status, 400, `${String(bad)}: ${r.text}`);
      assert.match(r.json.message, /^origin /);
    }
  });

  it('sign-out ends the session; the cookie is cleared', async () => {
    const s = await signIn();
    const out = await h.call('DELETE', '/ui/session', { anonymous: true, headers: ui(s) });
    assert.equal(out.status, 200);
    assert.match(String(out.headers['set-cookie']), /Max-Age=0/);
    const after = await h.call('GET', '/ui/api/v2/domains', { anonymous: true, headers: ui(s) });
    assert.equal(after.status, 401);
    assert.match(after.json.message, /signed out/);
  });

  it('the page\'s client (createClient over api/browser.ts) signs in, reads through /ui/api/v2 with its checks, and is signed out', async () => {
    // What the browser does for the page: keep the session cookie and send it back (Node's fetch keeps none).
    let cookie: string | undefined;
    const sent: string[] = [];
    const browserish: typeof fetch = async (input, init) => {
      const headers = new Headers(init?.headers);
      if (cookie !== undefined) headers.set('cookie', cookie);
      sent.push(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname} ${headers.has('authorization') ? 'with' : 'without'} authorization`);
      const res = await fetch(input, { ...init, headers });
      const set = res.headers.get('set-cookie');
      if (set) cookie = /^([^;]*)/.exec(set)![1];
      return res;
    };
    let pageToken: string | undefined;
    const api = createClient({ baseUrl: pageBaseUrl(`http://127.0.0.1:${h.port}/`), retries: 0, fetch: pageFetch({ header: PAGE_TOKEN_HEADER, pageToken: () => pageToken, fetch: browserish }) });
    try {
      await assert.rejects(api.openPageSession({ token: 'nope' }), (e: unknown) => ApiError.is(e, 'unauthorized') && e.status === 403 && e.serverMessage === 'wrong API token');
      pageToken = (await api.openPageSession({ token: API_TOKEN })).pageToken;
      await h.deliver('paged', await multipartEmail({ subject: 'Through the page client' }));
      const listed = await api.listInbox(DOMAIN, 'paged');
      assert.equal(listed.msgs[0]?.subject, 'Through the page client');
      const id = listed.msgs[0].id;
      assert.equal((await api.getMessage(DOMAIN, 'paged', id)).id, id);
      const pdf = (await api.listAttachments(DOMAIN, 'paged', id)).find((a) => a.filename === 'invoice ü.pdf');
      assert.ok(pdf, 'the attachment list, checked');
      assert.equal(Buffer.from((await api.downloadAttachment(DOMAIN, 'paged', id, pdf.attachment_id)).bytes).toString(), '%PDF-1.4 fake but bytes');
      const kept = cookie;
      await api.closePageSession();
      // The browser drops the cleared cookie; kept, it is refused as signed out: the page's sign-in shows either way (page.ts, a 401).
      await assert.rejects(api.listDomains(), (e: unknown) => ApiError.is(e, 'unauthorized') && e.status === 401);
      cookie = kept;
      await assert.rejects(api.listDomains(), (e: unknown) => ApiError.is(e, 'unauthorized') && e.status === 401 && /signed out/.test(e.serverMessage ?? ''));
      assert.deepEqual(
        sent.filter((l) => !l.startsWith('POST /ui/session') && !l.startsWith('DELETE /ui/session') && !l.includes(' /ui/api/v2/')),
        [],
        'every request of the page\'s client is to the page\'s own routes',
      );
      assert.ok(sent.every((l) => l.endsWith('without authorization')), sent.join('\n'));
    } finally {
      await api.dispose();
    }
  });

  /** Opens the UI's push stream; resolves once it is connected, with a promise of its end and what it carried. */
  function openStream(server: Harness, s: { cookie: string; pageToken: string }): Promise<{ ended: Promise<string>; text(): string }> {
    return new Promise((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port: server.port, path: '/ui/api/v2/domains/private/stream', headers: { host: `127.0.0.1:${server.port}`, ...ui(s) } }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
        let text = '';
        const ended = new Promise<string>((done) => res.on('end', () => done(text)));
        res.setEncoding('utf8').on('data', (d: string) => {
          text += d;
          if (text.includes(': connected')) resolve({ ended, text: () => text });
        });
      });
      req.on('error', reject);
    });
  }

  it('a used ticket stays used on the server\'s clock, whatever the machine\'s clock says (one clock for expiries and their records)', async () => {
    // The server's clock a minute behind the machine's: the ticket is valid on the server's
    // clock for 30 s, so its record must last as long on that same clock.
    now = Date.now() - 60_000;
    const { ticket } = (await h.call('POST', '/ui/ticket')).json as { ticket: string };
    assert.equal((await h.call('POST', '/ui/session', { anonymous: true, body: { ticket } })).status, 201);
    const again = await h.call('POST', '/ui/session', { anonymous: true, body: { ticket } });
    assert.equal(again.status, 401, again.text);
    assert.match(again.json.message, /used already/);
  });

  it('a push stream ends with its session: at sign-out, and when a sign-out elsewhere or the expiry is found', async () => {
    const s = await signIn();
    const stream = await openStream(h, s);
    const other = await openStream(h, await signIn());
    assert.equal((await h.call('DELETE', '/ui/session', { anonymous: true, headers: ui(s) })).status, 200);
    await stream.ended;
    // Another session's stream goes on: a message reaches it.
    await h.deliver('streamed', await multipartEmail({ subject: 'Still streaming' }));
    for (let i = 0; i < 200 && !/^event: message$/m.test(other.text()); i++) await new Promise((r) => setTimeout(r, 50));
    assert.match(other.text(), /^event: message$/m, 'the other session still streams');
    const shared = new MemoryRevocations();
    const a = await startApi({ store: h.store, clock: { now: () => now }, uiRevocations: shared, uiSessionCheckMs: 50 });
    const b = await startApi({ store: h.store, clock: { now: () => now }, uiRevocations: shared, uiSessionCheckMs: 50 });
    try {
      // Signed out on B (another process of the team: the revocations are shared): A's stream ends.
      const t = await signIn(a);
      const onA = await openStream(a, t);
      assert.equal((await b.call('DELETE', '/ui/session', { anonymous: true, headers: ui(t) })).status, 200);
      await onA.ended;
      // Expired while streaming.
      const u = await signIn(a);
      const aging = await openStream(a, u);
      now += 12 * 60 * 60 * 1000 + 1;
      await aging.ended;
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('a session expires after its lifetime', async () => {
    const s = await signIn();
    now += 12 * 60 * 60 * 1000 + 1;
    const r = await h.call('GET', '/ui/api/v2/domains', { anonymous: true, headers: ui(s) });
    assert.equal(r.status, 401);
    assert.match(r.json.message, /expired/);
  });

  it('a token change voids every session (a second server on the same store with a new token)', async () => {
    const s = await signIn();
    const other = await startApi({ apiToken: 'a-new-api-token-77', store: h.store });
    try {
      const r = await other.call('GET', '/ui/api/v2/domains', { anonymous: true, headers: ui(s) });
      assert.equal(r.status, 401);
    } finally {
      await other.close();
    }
  });

  it('behind a TLS proxy (--public-url): the Origin check takes the public origin, the cookie is Secure', async () => {
    const pub = await startApi({ publicUrl: 'https://mail.example.test', allowedHosts: ['mail.example.test'] });
    try {
      // The proxy rewrites Host to the server's own; the browser's Origin is the public URL.
      const r = await pub.call('POST', '/ui/session', { anonymous: true, headers: { origin: 'https://mail.example.test' }, body: { token: API_TOKEN } });
      assert.equal(r.status, 201, r.text);
      assert.match(String(r.headers['set-cookie']), /; Secure/);
      const foreign = await pub.call('POST', '/ui/session', { anonymous: true, headers: { origin: 'https://evil.example.test' }, body: { token: API_TOKEN } });
      assert.equal(foreign.status, 403);
      const plain = await pub.call('POST', '/ui/session', { anonymous: true, headers: { origin: 'http://mail.example.test' }, body: { token: API_TOKEN } });
      assert.equal(plain.status, 403, 'http is not the https public origin');
    } finally {
      await pub.close();
    }
  });

  it('--public-url and TEST_INBOX_PUBLIC_URL: an http(s) origin, or a clear usage error', () => {
    const flag = parseServeArgs(['serve', '--public-url', 'https://Mail.Example.test/'], {});
    assert.ok(typeof flag === 'object' && flag.publicUrl === 'https://mail.example.test');
    const env = parseServeArgs(['serve'], { TEST_INBOX_PUBLIC_URL: 'https://team.example.test:8443' });
    assert.ok(typeof env === 'object' && env.publicUrl === 'https://team.example.test:8443');
    assert.throws(() => parseServeArgs(['serve', '--public-url', 'mail.example.test'], {}), /--public-url .*must be a URL/);
    assert.throws(() => parseServeArgs(['serve', '--public-url', 'https://mail.example.test/inbox'], {}), /without path/);
    assert.throws(() => parseServeArgs(['serve', '--public-url', 'ftp://mail.example.test'], {}), /http\(s\) origin/);
  });

  it('a session issued by one server of a team is accepted by another with the same token (stateless)', async () => {
    const s = await signIn();
    const other = await startApi({ store: h.store });
    try {
      const r = await other.call('GET', '/ui/api/v2/domains', { anonymous: true, headers: ui(s) });
      assert.equal(r.status, 200, r.text);
    } finally {
      await other.close();
    }
  });
});
