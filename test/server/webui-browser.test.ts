// The web UI in a real browser: Debian's Chromium through playwright-core against a real
// server (startInboxServer on port 0, SMTP and all). Run under `flock /tmp/heavy.lock`; needs
// the bundles (node esbuild.mjs).
import { strict as assert } from 'node:assert';
import { promises as fs, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import nodemailer from 'nodemailer';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { chromiumPath } from '../../scripts/integration/workbench';
import { startInboxServer, type InboxServer } from '../../src/server/server';
import { loadOrCreateTokens } from '../../src/server/tokens';

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const DOMAIN = 'inbox.test';
const LAN_HOST = 'lan-box.test';

describe('web UI in Chromium', function () {
  this.timeout(120_000);
  let dataDir: string;
  let tokens: Awaited<ReturnType<typeof loadOrCreateTokens>>;
  let server: InboxServer;
  let browser: Browser;
  let ctx: BrowserContext;
  let page: Page;
  const remoteRequests: string[] = [];
  /** Every request of the first browser's page to the server: path, kind and whether it carried the page token. */
  const ownRequests: Array<{ path: string; type: string; pageToken: boolean }> = [];
  const dialogs: string[] = [];

  const start = (httpPort = 0): Promise<InboxServer> =>
    startInboxServer({ host: '127.0.0.1', httpPort, smtpPort: 0, dataDir, ...tokens, defaultDomain: DOMAIN, allowedHosts: [LAN_HOST] });

  async function send(to: string, subject: string, content: { text?: string; html?: string }): Promise<void> {
    const t = nodemailer.createTransport({ host: server.smtpHost, port: server.smtpPort, secure: false, ignoreTLS: true });
    await t.sendMail({ from: 'Acme <no-reply@acme.test>', to: `${to}@${DOMAIN}`, subject, ...content });
    t.close();
  }

  /** Axe's violations of impact serious or critical on the page (the email's own frame left out: it is the sender's). */
  async function axeViolations(p: Page): Promise<string[]> {
    if (!(await p.evaluate('typeof window.axe === "object"'))) await p.evaluate(AXE_SOURCE);
    return (await p.evaluate(`axe.run({ exclude: [['iframe.html-frame']] }, { iframes: false, resultTypes: ['violations'] }).then((r) => r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id + ': ' + v.nodes.map((n) => n.target.join(' ')).join(', ')))`)) as string[];
  }

  async function signIn(p: Page, token: string): Promise<void> {
    await p.goto(server.httpUrl + '/');
    await p.getByLabel('API token').fill(token);
    await p.getByRole('button', { name: 'Sign in' }).click();
  }

  before(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-webui-'));
    tokens = await loadOrCreateTokens(dataDir);
    server = await start();
    browser = await chromium.launch({ executablePath: chromiumPath(), headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', `--host-resolver-rules=MAP ${LAN_HOST} 127.0.0.1`] });
    ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.httpUrl });
    page = await ctx.newPage();
    page.on('request', (r) => {
      if (!r.url().startsWith(server.httpUrl) && !r.url().startsWith('data:') && !r.url().startsWith('about:')) remoteRequests.push(r.url());
      else if (r.url().startsWith(server.httpUrl)) ownRequests.push({ path: new URL(r.url()).pathname, type: r.resourceType(), pageToken: r.headers()['x-test-inbox-session'] !== undefined });
    });
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('refuses a wrong token at sign-in, then signs in', async () => {
    await signIn(page, 'not-the-token');
    await page.getByRole('alert').filter({ hasText: 'Wrong API token.' }).waitFor();
    // As copied from tokens.json or a terminal: the key, quotes and spaces around it are no part of it.
    await page.getByLabel('API token').fill(`  "apiToken": "${tokens.apiToken}",  `);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    assert.equal(await page.evaluate(() => document.cookie), '', 'the session cookie is HttpOnly');
    // A reload of the tab keeps the session.
    await page.reload();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    assert.equal(await page.getByLabel('API token').count(), 0, 'no sign-in after a reload');
  });

  it('a message sent over SMTP appears without a reload; open it and Copy puts the code on the clipboard', async () => {
    await page.getByRole('navigation', { name: 'Domains' }).getByText('No mail yet.').waitFor();
    await send('alice', 'Welcome', { text: 'Hello there.' });
    // No click: the first domain is shown as soon as it has mail.
    await page.getByRole('navigation', { name: 'Messages' }).getByRole('button', { name: /Welcome/ }).waitFor();
    assert.equal(await page.getByRole('navigation', { name: 'Domains' }).getByRole('button', { name: new RegExp(DOMAIN) }).getAttribute('aria-current'), 'true');
    await send('alice', 'Your sign-in code', { text: 'Your verification code is 482913. It expires in 10 minutes.' });
    const item = page.getByRole('navigation', { name: 'Messages' }).getByRole('button', { name: /Your sign-in code/ });
    await item.waitFor();
    await item.click();
    await page.getByRole('button', { name: 'Copy code 482913' }).click();
    await page.getByText('Copied code 482913').first().waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), '482913');
  });

  it('hostile HTML and a hostile subject run nothing and load nothing remote', async () => {
    const html = `<p>Hi</p><script>window.parent.pwned=1;alert('script')</script><img src="https://tracker.example/p.gif" onerror="alert('onerror')"><div style="background:url(https://tracker.example/bg.png)">x</div><a href="javascript:alert('js')">click</a><iframe src="https://evil.example/"></iframe><form action="https://evil.example/"><input name=a></form>`;
    await send('mallory', `<img src=x onerror="alert('subject')">Invoice`, { html, text: 'Hi' });
    const item = page.getByRole('navigation', { name: 'Messages' }).getByRole('button', { name: /Invoice/ });
    await item.waitFor();
    assert.match(await item.innerText(), /<img src=x onerror=/, 'the subject is shown as text');
    await item.click();
    await page.locator('iframe.html-frame').waitFor();
    await page.getByText(/remote images? blocked/).waitFor();
    await page.waitForTimeout(500);
    assert.deepEqual(dialogs, []);
    assert.equal(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned), undefined);
    assert.deepEqual(remoteRequests, []);
    assert.equal(await page.locator('iframe.html-frame').getAttribute('sandbox'), '');
  });

  it('G13: bidi controls of a subject and a sender reorder neither the list\'s rows nor the message header', async () => {
    const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;
    const t = nodemailer.createTransport({ host: server.smtpHost, port: server.smtpPort, secure: false, ignoreTLS: true });
    await t.sendMail({ from: '"Bank\u202E tnuocca" <no-reply@acme.test>', to: `bidi@${DOMAIN}`, subject: 'Statement\u202Egnp.exe\u2066 due', text: 'Hello' });
    t.close();
    const item = page.getByRole('navigation', { name: 'Messages' }).getByRole('button', { name: /Statement/ });
    await item.waitFor();
    const row = (await item.textContent()) ?? '';
    assert.doesNotMatch(row, BIDI, JSON.stringify(row));
    assert.match(row, /Statementgnp\.exe due/);
    assert.match(row, /Bank tnuocca/);
    await item.click();
    const header = page.locator('header.message-header');
    await header.getByRole('heading', { name: /Statement/ }).waitFor();
    const shown = (await header.textContent()) ?? '';
    assert.doesNotMatch(shown, BIDI, JSON.stringify(shown));
    assert.match(shown, /Statementgnp\.exe due/);
    assert.doesNotMatch(await page.title(), BIDI);
  });

  it('a second browser without the session sees nothing, and the session cookie alone opens nothing', async () => {
    const other = await browser.newContext();
    try {
      const p = await other.newPage();
      await p.goto(server.httpUrl + '/');
      await p.getByLabel('API token').waitFor();
      assert.equal(await p.evaluate(async () => (await fetch('/ui/api/v2/domains')).status), 401);
      // The first browser's cookie, copied: without the page token it opens nothing.
      await other.addCookies(await ctx.cookies());
      assert.ok((await other.cookies()).some((c) => c.name === 'test_inbox_ui'));
      const r = await p.evaluate(async () => {
        const res = await fetch('/ui/api/v2/domains', { credentials: 'same-origin' });
        return { status: res.status, body: await res.text() };
      });
      assert.equal(r.status, 401);
      assert.doesNotMatch(r.body, /inbox\.test/);
    } finally {
      await other.close();
    }
  });

  it('a message deleted while open says so; the server gone is said and the page reconnects', async () => {
    await send('bob', 'Soon gone', { text: 'bye' });
    const item = page.getByRole('navigation', { name: 'Messages' }).getByRole('button', { name: /Soon gone/ });
    await item.waitFor();
    await item.click();
    await page.getByRole('heading', { name: 'Soon gone' }).waitFor();
    const listed = (await (await fetch(`${server.httpUrl}/api/v2/domains/${DOMAIN}/inboxes/bob`, { headers: { authorization: tokens.apiToken } })).json()) as { msgs: Array<{ id: string }> };
    await fetch(`${server.httpUrl}/api/v2/domains/${DOMAIN}/inboxes/bob/messages/${listed.msgs[0].id}`, { method: 'DELETE', headers: { authorization: tokens.apiToken } });
    await page.getByText('This message was deleted.').waitFor();

    const port = Number(new URL(server.httpUrl).port);
    await server.close();
    await page.getByText(/not reachable|closed the live connection/).waitFor();
    server = await start(port);
    await page.locator('#conn').filter({ hasText: /^$/ }).waitFor({ state: 'attached' });
    await send('carol', 'After the restart', { text: 'back' });
    await page.getByRole('navigation', { name: 'Messages' }).getByRole('button', { name: /After the restart/ }).waitFor();
  });

  it('the page calls only its own routes (/ and /ui/), never /api/v2 or a provider path; the push stream through fetch with the page token', async () => {
    assert.ok(ownRequests.length > 10, `${ownRequests.length} requests seen`);
    const foreign = ownRequests.filter((r) => r.path !== '/' && !r.path.startsWith('/ui/'));
    assert.deepEqual(foreign, []);
    const streams = ownRequests.filter((r) => r.path.endsWith('/stream'));
    assert.ok(streams.length >= 2, 'the stream was opened, and opened again after the restart');
    for (const s of streams) assert.deepEqual(s, { path: '/ui/api/v2/domains/private/stream', type: 'fetch', pageToken: true });
    assert.ok(!ownRequests.some((r) => r.type === 'eventsource'), 'no EventSource');
    for (const r of ownRequests.filter((x) => x.path.startsWith('/ui/api/'))) assert.ok(r.pageToken, `${r.path} carries the page token`);
  });

  it('axe finds no serious or critical violation in light and dark, at 375 px too', async () => {
    await page.getByRole('navigation', { name: 'Messages' }).getByRole('button', { name: /Your sign-in code/ }).click();
    await page.getByRole('button', { name: 'Copy code 482913' }).waitFor();
    for (const colorScheme of ['light', 'dark'] as const) {
      for (const width of [1280, 375]) {
        await page.emulateMedia({ colorScheme });
        await page.setViewportSize({ width, height: 800 });
        // The page switches on the media query's change event: wait for it (the test failed reading it at once).
        const dark = colorScheme === 'dark';
        await page.waitForFunction((want) => document.body.classList.contains('vscode-dark') === want, dark, { timeout: 10_000 }).catch(() => undefined);
        assert.equal(await page.evaluate(() => document.body.classList.contains('vscode-dark')), dark, 'the page follows the system setting');
        assert.deepEqual(await axeViolations(page), [], `${colorScheme} ${width}px`);
        if (width === 375) assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'no horizontal scroll at 375 px');
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('by keyboard alone: sign in, open a message and copy its code, with visible focus; over plain HTTP on a LAN name too', async () => {
    const kb = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const p = await kb.newPage();
      const lanUrl = server.httpUrl.replace('127.0.0.1', LAN_HOST);
      await p.goto(lanUrl + '/');
      assert.equal(await p.evaluate(() => window.isSecureContext), false, 'a LAN name over http is not a secure context');
      await p.keyboard.type(tokens.apiToken);
      await p.keyboard.press('Enter');
      await p.getByRole('button', { name: 'Sign out' }).waitFor();
      const tabTo = async (name: RegExp): Promise<void> => {
        for (let i = 0; i < 40; i++) {
          await p.keyboard.press('Tab');
          // The page itself is no stop of the Tab order: a row that lost its focus to a redraw would land there.
          const text = await p.evaluate(() => (document.activeElement === document.body ? '' : (document.activeElement?.getAttribute('aria-label') ?? '') + ' ' + (document.activeElement?.textContent ?? '')));
          if (name.test(text)) {
            const outline = await p.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
            assert.notEqual(outline, 'none', `focus is visible on ${text}`);
            return;
          }
        }
        assert.fail(`Tab never reached ${name}`);
      };
      // The domain's mail is listed at once, no domain to choose first, and the focus is on its newest message.
      await p.getByRole('navigation', { name: 'Messages' }).getByRole('button', { name: /Your sign-in code/ }).waitFor();
      await p.waitForFunction(() => document.activeElement?.closest('nav[aria-label="Messages"]') != null);
      await tabTo(/Your sign-in code/);
      // New mail redraws the lists live; the row the reader is on keeps the focus.
      await send('erin', 'Arrived while reading', { text: 'Nothing to see.' });
      await p.getByRole('navigation', { name: 'Messages' }).getByRole('button', { name: /Arrived while reading/ }).waitFor();
      const focused = await p.evaluate(() => {
        const a = document.activeElement;
        return a instanceof HTMLButtonElement && a.closest('nav[aria-label="Messages"]') !== null ? (a.textContent ?? '') : `not a message row: ${a?.tagName ?? 'none'}`;
      });
      assert.match(focused, /Your sign-in code/, 'the focus stays on the row after a live redraw');
      await p.keyboard.press('Enter');
      await p.getByRole('button', { name: 'Copy code 482913' }).waitFor();
      await tabTo(/Copy code 482913/);
      await p.keyboard.press('Enter');
      await p.getByText('Copied code 482913').first().waitFor();
      // The fallback copied it (no navigator.clipboard here): read it back on the secure origin.
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), '482913');
    } finally {
      await kb.close();
    }
  });

  it('sign-out ends the session', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API token').waitFor();
    await page.getByText('Signed out.').waitFor();
    assert.equal(await page.evaluate(async () => (await fetch('/ui/api/v2/domains')).status), 401);
  });

  describe('signed in by a one-time link (Open in Browser)', () => {
    let linkCtx: BrowserContext;
    let linked: Page;
    const asked: string[] = [];
    const messages = (p: Page) => p.getByRole('navigation', { name: 'Messages' });
    const listed = async (inbox: string): Promise<string[]> => {
      const r = await fetch(`${server.httpUrl}/api/v2/domains/${DOMAIN}/inboxes/${inbox}`, { headers: { authorization: tokens.apiToken } });
      return ((await r.json()) as { msgs: Array<{ subject: string }> }).msgs.map((m) => m.subject);
    };

    after(async () => {
      await linkCtx?.close();
    });

    it('the link signs a browser in once: the ticket leaves the address, and a second use is refused', async () => {
      const r = await fetch(`${server.httpUrl}/ui/ticket`, { method: 'POST', headers: { authorization: tokens.apiToken } });
      assert.equal(r.status, 201);
      const { ticket } = (await r.json()) as { ticket: string };
      const link = `${server.httpUrl}/#ticket=${ticket}`;
      linkCtx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      await linkCtx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.httpUrl });
      linked = await linkCtx.newPage();
      const sent: string[] = [];
      linked.on('request', (req) => {
        if (req.resourceType() !== 'document') sent.push(req.url());
      });
      linked.on('dialog', (d) => {
        asked.push(d.message());
        void d.accept();
      });
      await linked.goto(link);
      await linked.getByRole('button', { name: 'Sign out' }).waitFor();
      assert.equal(await linked.evaluate(() => window.location.href), `${server.httpUrl}/`, 'the ticket is out of the address and its history entry');
      assert.ok(sent.length > 0 && sent.every((u) => !u.includes(ticket)), 'no request carries the ticket in its URL');
      assert.equal(await linked.evaluate(() => document.cookie), '', 'the session cookie is HttpOnly');
      assert.deepEqual((await linkCtx.cookies()).map((k) => k.path), ['/ui'], 'the cookie\'s default path: the page\'s /ui, nothing else of the host');

      const other = await browser.newContext();
      try {
        const p = await other.newPage();
        await p.goto(link);
        await p.getByRole('alert').filter({ hasText: /used already/ }).waitFor();
        await p.getByLabel('API token').waitFor();
        assert.equal(await p.evaluate(() => window.location.hash), '');
        assert.equal(await p.evaluate(async () => (await fetch('/ui/api/v2/domains')).status), 401);
      } finally {
        await other.close();
      }
    });

    it('the search box takes the search syntax, and says what is wrong with a malformed query', async () => {
      const q = linked.getByRole('searchbox', { name: 'Search messages' });
      await q.fill('code:482913');
      await q.press('Enter');
      await messages(linked).getByRole('button', { name: /Your sign-in code/ }).waitFor();
      await linked.waitForFunction(() => document.querySelectorAll('#messages button.item').length === 1);
      await q.fill('restart -welcome');
      await q.press('Enter');
      await messages(linked).getByRole('button', { name: /After the restart/ }).waitFor();
      await linked.waitForFunction(() => document.querySelectorAll('#messages button.item').length === 1);
      await q.fill('nothing-matches-this-zq');
      await q.press('Enter');
      await messages(linked).getByText('0 messages match “nothing-matches-this-zq”.').waitFor();
      await q.fill('code:482913');
      await q.press('Enter');
      await messages(linked).getByText('1 message matches “code:482913”.').waitFor();
      assert.equal(await linked.getByRole('navigation', { name: 'Inboxes' }).getByText('Searching every domain and inbox.').count(), 1);
      // A malformed query says what is wrong in place of results: the last query's are not left as if they matched.
      await q.fill('size:10');
      await q.press('Enter');
      await messages(linked).getByRole('alert').filter({ hasText: /The query cannot be read: unknown operator "size:"/ }).waitFor();
      assert.equal(await linked.locator('#messages button.item').count(), 0, 'no results of the earlier query');
    });

    it('shows an SMS as a conversation, with its code and Copy', async () => {
      await linked.getByRole('searchbox', { name: 'Search messages' }).fill('');
      await linked.getByRole('searchbox', { name: 'Search messages' }).press('Enter');
      const sms = await fetch(`${server.httpUrl}/api/v2/domains/${DOMAIN}/inboxes/15551234567`, {
        method: 'POST',
        headers: { authorization: tokens.apiToken, 'content-type': 'application/json' },
        body: JSON.stringify({ from: '+15550001111', text: 'Your Acme code is 204816. Do not share it.' }),
      });
      assert.equal(sms.status, 200, await sms.text());
      await linked.getByRole('navigation', { name: 'Domains' }).getByRole('button', { name: new RegExp(DOMAIN) }).click();
      await messages(linked).getByRole('button', { name: /Your Acme code/ }).click();
      await linked.getByRole('group', { name: 'SMS conversation with +15550001111' }).waitFor();
      for (const colorScheme of ['light', 'dark'] as const) {
        await linked.emulateMedia({ colorScheme });
        assert.deepEqual(await axeViolations(linked), [], `the SMS view, ${colorScheme}`);
      }
      await linked.emulateMedia({ colorScheme: 'light' });
      await linked.getByRole('button', { name: 'Copy code 204816' }).click();
      await linked.getByText('Copied code 204816').first().waitFor();
      assert.equal(await linked.evaluate(() => navigator.clipboard.readText()), '204816');
    });

    it('shows the verification link of an email with Copy', async () => {
      const target = 'https://app.example/verify?token=Zk31&next=%2Fhome';
      await send('dave', 'Confirm your address', { html: `<p>Welcome!</p><p><a href="${target.replace(/&/g, '&amp;')}">Confirm your email</a></p>`, text: `Confirm: ${target}` });
      await messages(linked).getByRole('button', { name: /Confirm your address/ }).click();
      await linked.getByRole('button', { name: /^Copy link: / }).click();
      await linked.getByText('Copied the link').first().waitFor();
      assert.equal(await linked.evaluate(() => navigator.clipboard.readText()), target);
      // The editor's tabs, each filled through the page's own routes.
      const tabs = linked.getByRole('tablist', { name: 'Message parts' }).getByRole('tab');
      assert.deepEqual(await tabs.allInnerTexts(), ['HTML', 'Text', 'Headers', 'Links (1)', 'Attachments', 'Raw']);
      await linked.getByRole('tab', { name: 'Raw' }).click();
      await linked.getByRole('tabpanel').filter({ hasText: 'Subject: Confirm your address' }).waitFor();
      await linked.getByRole('tab', { name: 'Links (1)' }).click();
      await linked.getByRole('tabpanel').filter({ hasText: 'app.example/verify' }).waitFor();
    });

    it('blocks remote images until the reader allows them', async () => {
      const hits: string[] = [];
      const images = http.createServer((req, res) => {
        hits.push(req.url ?? '');
        res.writeHead(200, { 'content-type': 'image/gif' });
        res.end(Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64'));
      });
      await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
      try {
        const src = `http://127.0.0.1:${(images.address() as AddressInfo).port}/pixel.gif`;
        await send('erin', 'Newsletter', { html: `<p>News</p><img src="${src}" alt="logo">`, text: 'News' });
        await messages(linked).getByRole('button', { name: /Newsletter/ }).click();
        await linked.getByText('1 remote image blocked to protect your privacy.').waitFor();
        await linked.waitForTimeout(500);
        assert.deepEqual(hits, [], 'nothing fetched before the reader allows it');
        await linked.getByRole('button', { name: 'Load remote images' }).click();
        await linked.waitForFunction(() => document.querySelector('iframe.html-frame') !== null);
        for (let i = 0; i < 100 && hits.length === 0; i++) await linked.waitForTimeout(100);
        assert.deepEqual(hits, ['/pixel.gif'], 'fetched once allowed');
      } finally {
        await new Promise<void>((resolve) => images.close(() => resolve()));
      }
    });

    it('saves an attachment as a download; the message ID\'s Copy shows its label', async () => {
      const t = nodemailer.createTransport({ host: server.smtpHost, port: server.smtpPort, secure: false, ignoreTLS: true });
      await t.sendMail({ from: 'billing@acme.test', to: `erin@${DOMAIN}`, subject: 'Your invoice', text: 'Attached.', attachments: [{ filename: 'invoice.txt', content: 'Invoice 42: paid.' }] });
      t.close();
      await messages(linked).getByRole('button', { name: /Your invoice/ }).click();
      await linked.getByRole('tab', { name: /Attachments/ }).click();
      const [download] = await Promise.all([linked.waitForEvent('download'), linked.getByRole('button', { name: 'Save attachment invoice.txt' }).click()]);
      assert.equal(download.suggestedFilename(), 'invoice.txt');
      assert.equal(await fs.readFile((await download.path())!, 'utf8'), 'Invoice 42: paid.');
      await linked.getByText('Saved invoice.txt.').first().waitFor();
      const copyId = await linked.getByRole('button', { name: /^Copy ID of message/ }).boundingBox();
      assert.ok(copyId && copyId.width >= 24 && copyId.height >= 12, `the Copy ID button is visible: ${JSON.stringify(copyId)}`);
    });

    it('deletes a message from the page; the focus goes to the list', async () => {
      await messages(linked).getByRole('button', { name: /After the restart/ }).click();
      await linked.getByRole('heading', { name: 'After the restart' }).waitFor();
      await linked.getByRole('button', { name: 'Delete message' }).click();
      await linked.getByText('Message deleted.').first().waitFor();
      await messages(linked).getByRole('button', { name: /After the restart/ }).waitFor({ state: 'detached' });
      await linked.waitForFunction(() => document.activeElement?.closest('nav[aria-label="Messages"]') != null);
      assert.deepEqual(await listed('carol'), []);
      assert.deepEqual(await listed('alice'), ['Your sign-in code', 'Welcome'], 'nothing else deleted');
    });

    it('clears an inbox from the page, after asking', async () => {
      await linked.getByRole('navigation', { name: 'Inboxes' }).getByRole('button', { name: /^alice/ }).click();
      await linked.getByRole('button', { name: 'Clear inbox alice' }).click();
      await messages(linked).getByRole('button', { name: /Your sign-in code|Welcome/ }).first().waitFor({ state: 'detached' });
      assert.deepEqual(await listed('alice'), []);
      assert.deepEqual(asked, [`Delete every message of alice@${DOMAIN}?`]);
      assert.equal((await listed('mallory')).length, 1, 'another inbox keeps its mail');
    });

    it('an inbox lists all its newest mail, even where the domain has more than the 500 newest', async () => {
      const inject = (inbox: string, subject: string): Promise<Response> =>
        fetch(`${server.httpUrl}/api/v2/domains/${DOMAIN}/inboxes/${inbox}`, { method: 'POST', headers: { authorization: tokens.apiToken, 'content-type': 'application/json' }, body: JSON.stringify({ subject, text: subject }) });
      for (const n of [1, 2, 3]) assert.equal((await inject('early', `Early ${n}`)).status, 200);
      for (let i = 0; i < 500; i += 25) {
        const batch = await Promise.all(Array.from({ length: 25 }, (_, k) => inject('bulk', `Bulk ${i + k}`)));
        assert.ok(batch.every((r) => r.status === 200));
      }
      await linked.getByRole('navigation', { name: 'Domains' }).getByRole('button', { name: new RegExp(DOMAIN) }).click();
      const inboxes = linked.getByRole('navigation', { name: 'Inboxes' });
      await inboxes.getByText('Inboxes and counts of the newest 500 messages.').waitFor();
      assert.equal(await inboxes.getByRole('button', { name: /^early/ }).count(), 0, 'early is not among the newest 500');
      await inject('early', 'Early 4');
      await inboxes.getByRole('button', { name: /^early/ }).click();
      for (const n of [4, 3, 2, 1]) await messages(linked).getByRole('button', { name: new RegExp(`Early ${n}`) }).waitFor();
      assert.deepEqual(await messages(linked).getByRole('button').evaluateAll((bs) => bs.map((b) => /Early \d/.exec(b.textContent ?? '')?.[0])), ['Early 4', 'Early 3', 'Early 2', 'Early 1']);
    });
  });

  describe('behind a proxy that serves it under a path prefix (code-server\'s /proxy/<port>/)', () => {
    // A reverse proxy on its own port (so another origin) that forwards /proxy/<server port>/…
    // to the server with the prefix taken off, and changes nothing else but, when asked, the Host
    // header (as most reverse proxies and cloud port forwarders do; code-server keeps it).
    let proxy: http.Server;
    let proxyOrigin: string;
    let prefix: string;
    let rewriteHost = true;
    const contexts: BrowserContext[] = [];

    before(async () => {
      const upstream = new URL(server.httpUrl);
      prefix = `/proxy/${upstream.port}`;
      proxy = http.createServer((req, res) => {
        const url = req.url ?? '/';
        if (!url.startsWith(`${prefix}/`)) {
          res.writeHead(404, { 'content-type': 'text/plain' }).end('not proxied');
          return;
        }
        const headers = { ...req.headers, ...(rewriteHost ? { host: upstream.host } : {}) };
        const up = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: url.slice(prefix.length), headers }, (ur) => {
          res.writeHead(ur.statusCode ?? 502, ur.headers);
          ur.pipe(res);
        });
        up.on('error', () => res.destroy());
        res.on('close', () => up.destroy());
        req.pipe(up);
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      proxyOrigin = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    });

    after(async () => {
      for (const c of contexts) await c.close();
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    });

    async function ticket(origin?: string): Promise<string> {
      const r = await fetch(`${server.httpUrl}/ui/ticket`, { method: 'POST', headers: { authorization: tokens.apiToken, ...(origin ? { 'content-type': 'application/json' } : {}) }, ...(origin ? { body: JSON.stringify({ origin }) } : {}) });
      assert.equal(r.status, 201, await r.clone().text());
      return ((await r.json()) as { ticket: string }).ticket;
    }

    async function open(link: string): Promise<{ p: Page; ctx: BrowserContext; failed: string[] }> {
      const c = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      contexts.push(c);
      await c.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: proxyOrigin });
      const p = await c.newPage();
      const failed: string[] = [];
      p.on('response', (r) => {
        if (r.status() >= 400) failed.push(`${r.status()} ${new URL(r.url()).pathname}`);
      });
      p.on('request', (r) => {
        if (!r.url().startsWith(`${proxyOrigin}${prefix}/`) && !r.url().startsWith('data:') && !r.url().startsWith('about:')) failed.push(`outside the prefix: ${r.url()}`);
      });
      await p.goto(link);
      return { p, ctx: c, failed };
    }

    it('signs in by a ticket that declares the proxy\'s origin; a message sent over SMTP appears and Copy works', async () => {
      rewriteHost = true;
      const { p, ctx: c, failed } = await open(`${proxyOrigin}${prefix}/#ticket=${await ticket(proxyOrigin)}`);
      await p.getByRole('button', { name: 'Sign out' }).waitFor();
      assert.equal(await p.evaluate(() => window.location.href), `${proxyOrigin}${prefix}/`, 'the ticket is out of the address');
      const cookies = await c.cookies();
      assert.deepEqual(cookies.map((k) => [k.name, k.path, k.httpOnly, k.sameSite]), [['test_inbox_ui', `${prefix}/ui`, true, 'Strict']], 'the session cookie is on the prefixed path, where the page sends its requests');
      await send('proxied', 'Proxied sign-in code', { text: 'Your verification code is 730164. It expires in 10 minutes.' });
      await p.getByRole('navigation', { name: 'Domains' }).getByRole('button', { name: new RegExp(DOMAIN) }).click();
      const item = p.getByRole('navigation', { name: 'Messages' }).getByRole('button', { name: /Proxied sign-in code/ });
      await item.waitFor();
      await item.click();
      await p.getByRole('button', { name: 'Copy code 730164' }).click();
      await p.getByText('Copied code 730164').first().waitFor();
      assert.equal(await p.evaluate(() => navigator.clipboard.readText()), '730164');
      assert.deepEqual(failed, [], 'every request of the page stayed under the prefix and succeeded');
    });

    it('a ticket without the declaration is refused at the proxy\'s origin, with the server\'s reason, and stays unspent', async () => {
      rewriteHost = true;
      const t = await ticket();
      const { p } = await open(`${proxyOrigin}${prefix}/#ticket=${t}`);
      await p.getByRole('alert').filter({ hasText: /is not this server/ }).waitFor();
      await p.getByLabel('API token').waitFor();
      const direct = await fetch(`${server.httpUrl}/ui/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ticket: t }) });
      assert.equal(direct.status, 201, 'the refused page did not spend the ticket');
    });

    it('a proxy that keeps Host (code-server\'s): signing in with the API token works under the prefix', async () => {
      rewriteHost = false;
      const { p, failed } = await open(`${proxyOrigin}${prefix}/`);
      await p.getByLabel('API token').fill(tokens.apiToken);
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.getByRole('button', { name: 'Sign out' }).waitFor();
      await send('kept-host', 'Through a Host-keeping proxy', { text: 'Hello.' });
      await p.getByRole('navigation', { name: 'Domains' }).getByRole('button', { name: new RegExp(DOMAIN) }).click();
      await p.getByRole('navigation', { name: 'Messages' }).getByRole('button', { name: /Through a Host-keeping proxy/ }).waitFor();
      assert.deepEqual(failed, []);
    });
  });

  describe('an expired session', () => {
    let skew = 0;
    let aged: InboxServer;
    let agedDir: string;
    before(async () => {
      agedDir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-webui-aged-'));
      aged = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir: agedDir, ...tokens, defaultDomain: DOMAIN, clock: { now: () => Date.now() + skew } });
    });
    after(async () => {
      await aged?.close();
      await fs.rm(agedDir, { recursive: true, force: true });
    });

    it('sends the page back to sign-in, saying the session expired', async () => {
      const c = await browser.newContext();
      try {
        const p = await c.newPage();
        await p.goto(aged.httpUrl + '/');
        await p.getByLabel('API token').fill(tokens.apiToken);
        await p.getByRole('button', { name: 'Sign in' }).click();
        await p.getByRole('button', { name: 'Search' }).waitFor();
        skew = 12 * 60 * 60 * 1000 + 60_000;
        // The page learns of the expiry at its next request, or when its push stream ends (each
        // stream checks its session every SESSION_STREAM_CHECK_MS): whichever comes first must send
        // it back to sign-in. A search is the next request, unless the stream got there first and
        // the search box is gone already.
        const expired = p.getByRole('alert').filter({ hasText: 'the session has expired: sign in again' });
        try {
          await p.getByRole('searchbox', { name: 'Search messages' }).fill('anything', { timeout: 5_000 });
          await p.getByRole('button', { name: 'Search' }).click({ timeout: 5_000 });
        } catch (e) {
          if (!(await expired.waitFor({ timeout: 5_000 }).then(() => true, () => false))) throw e;
        }
        await expired.waitFor();
        await p.getByLabel('API token').waitFor();
        for (const colorScheme of ['light', 'dark'] as const) {
          await p.emulateMedia({ colorScheme });
          assert.deepEqual(await axeViolations(p), [], `the sign-in form with its error, ${colorScheme}`);
        }
        await p.getByLabel('API token').fill(tokens.apiToken);
        await p.getByRole('button', { name: 'Sign in' }).click();
        await p.getByRole('button', { name: 'Sign out' }).waitFor();
      } finally {
        await c.close();
      }
    });
  });

  describe('which domain is shown, and moving by keys', () => {
    let own: InboxServer;
    let ownDir: string;
    const mail = async (to: string, subject: string): Promise<void> => {
      const t = nodemailer.createTransport({ host: own.smtpHost, port: own.smtpPort, secure: false, ignoreTLS: true });
      await t.sendMail({ from: 'a@acme.test', to, subject, text: subject });
      t.close();
    };
    before(async () => {
      ownDir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-webui-domains-'));
      own = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir: ownDir, ...tokens, defaultDomain: DOMAIN });
    });
    after(async () => {
      await own?.close();
      await fs.rm(ownDir, { recursive: true, force: true });
    });

    it('shows the newest mail\'s domain, follows new mail to another until the reader picks one; Up, Down, Home and End move in a list; an emptied search box goes back to the lists', async () => {
      await mail('ann@alpha.test', 'Alpha one');
      await mail('bob@zulu.test', 'Zulu one');
      // Message times are ordered to the second: the newest must be the newest beyond a tie
      // (three mails within one second left the order, and so the domain shown, to chance).
      await new Promise((r) => setTimeout(r, 1100));
      await mail('cy@mike.test', 'Mike one');
      const c = await browser.newContext();
      try {
        const p = await c.newPage();
        const messagesNav = p.getByRole('navigation', { name: 'Messages' });
        const current = (): Promise<string | null> => p.evaluate(() => document.querySelector('#domains [aria-current="true"]')?.getAttribute('data-key') ?? null);
        await p.goto(own.httpUrl + '/');
        await p.getByRole('button', { name: 'Sign in' }).click();
        await p.getByRole('alert').filter({ hasText: 'Enter the API token.' }).waitFor();
        await p.getByLabel('API token').fill(tokens.apiToken);
        await p.getByRole('button', { name: 'Sign in' }).click();
        // Not the first by name (alpha.test): the newest message's.
        await messagesNav.getByRole('button', { name: /Mike one/ }).waitFor();
        assert.equal(await current(), 'domain:mike.test');
        await new Promise((r) => setTimeout(r, 1100));
        await mail('dee@zulu.test', 'Zulu two');
        await messagesNav.getByRole('button', { name: /Zulu two/ }).waitFor();
        assert.equal(await current(), 'domain:zulu.test', 'followed the new mail');
        // Picked by the reader: new mail elsewhere leaves it.
        await p.getByRole('navigation', { name: 'Domains' }).getByRole('button', { name: /alpha\.test/ }).click();
        await messagesNav.getByRole('button', { name: /Alpha one/ }).waitFor();
        await mail('eve@mike.test', 'Mike two');
        await p.getByRole('navigation', { name: 'Domains' }).getByRole('button', { name: /mike\.test\s*2/ }).waitFor();
        assert.equal(await current(), 'domain:alpha.test', 'stays where the reader is');

        const domains = p.getByRole('navigation', { name: 'Domains' });
        await domains.getByRole('button', { name: /alpha\.test/ }).focus();
        const focused = (): Promise<string | null> => p.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.key ?? null);
        await p.keyboard.press('ArrowDown');
        assert.equal(await focused(), 'domain:mike.test');
        await p.keyboard.press('End');
        assert.equal(await focused(), 'domain:zulu.test');
        await p.keyboard.press('ArrowDown');
        assert.equal(await focused(), 'domain:zulu.test', 'stays on the last row');
        await p.keyboard.press('Home');
        assert.equal(await focused(), 'domain:alpha.test');

        const q = p.getByRole('searchbox', { name: 'Search messages' });
        await q.fill('"unclosed');
        await q.press('Enter');
        await messagesNav.getByRole('alert').waitFor();
        await q.fill('');
        await messagesNav.getByRole('alert').waitFor({ state: 'detached' });
        await messagesNav.getByRole('button').first().waitFor();
        assert.equal(await p.getByRole('navigation', { name: 'Inboxes' }).getByText('Searching every domain and inbox.').count(), 0, 'the lists, not a search');
      } finally {
        await c.close();
      }
    });
  });

  describe('what a new user sees first (issue 35)', () => {
    let own: InboxServer;
    let ownDir: string;
    const mail = async (to: string, subject: string, text = subject): Promise<void> => {
      const t = nodemailer.createTransport({ host: own.smtpHost, port: own.smtpPort, secure: false, ignoreTLS: true });
      await t.sendMail({ from: 'a@acme.test', to, subject, text });
      t.close();
    };
    before(async () => {
      ownDir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-webui-first-'));
      own = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir: ownDir, ...tokens, defaultDomain: DOMAIN });
    });
    after(async () => {
      await own?.close();
      await fs.rm(ownDir, { recursive: true, force: true });
    });

    it('shows the default domain first, marks phone inboxes SMS, closes a message the search does not list, and keeps the screen-reader status out of sight', async () => {
      await mail(`joe@${DOMAIN}`, 'Welcome Joe');
      await mail(`15555550100@${DOMAIN}`, '', 'Your code is 604219');
      // Newer (by a second: ids and search order go by seconds), and first by name: still not the one shown first.
      await new Promise((r) => setTimeout(r, 1100));
      await mail('ann@example.com', 'Example newest');
      const c = await browser.newContext();
      try {
        const p = await c.newPage();
        await p.goto(own.httpUrl + '/');
        await p.getByLabel('API token').fill(tokens.apiToken);
        await p.getByRole('button', { name: 'Sign in' }).click();
        const messagesNav = p.getByRole('navigation', { name: 'Messages' });
        await messagesNav.getByRole('button', { name: /Welcome Joe/ }).waitFor();
        assert.equal(await p.evaluate(() => document.querySelector('#domains [aria-current="true"]')?.getAttribute('data-key') ?? null), `domain:${DOMAIN}`);

        const inboxes = p.getByRole('navigation', { name: 'Inboxes' });
        assert.match(await inboxes.locator('[data-key="inbox:15555550100"]').innerText(), /SMS/);
        assert.doesNotMatch(await inboxes.locator('[data-key="inbox:joe"]').innerText(), /SMS/);

        await messagesNav.getByRole('button', { name: /Welcome Joe/ }).click();
        await p.locator('#root h1.subject').filter({ hasText: 'Welcome Joe' }).waitFor();
        const status = p.locator('#status');
        await status.filter({ hasText: /^Loaded: Welcome Joe/ }).waitFor({ state: 'attached' });
        assert.equal(await status.getAttribute('role'), 'status');
        assert.equal(await status.getAttribute('aria-live'), 'polite');
        const box = await status.boundingBox();
        assert.ok(box !== null && box.width <= 1 && box.height <= 1, `the status is out of sight: ${JSON.stringify(box)}`);

        const q = p.getByRole('searchbox', { name: 'Search messages' });
        await q.fill('subject:"Example newest"');
        await q.press('Enter');
        await messagesNav.getByRole('button', { name: /Example newest/ }).waitFor();
        await p.locator('#root').getByText('The message that was open does not match the search.').waitFor();
        assert.equal(await p.locator('#root h1.subject').count(), 0, 'the message is closed');
        // One the search lists stays open.
        await messagesNav.getByRole('button', { name: /Example newest/ }).click();
        await p.locator('#root h1.subject').filter({ hasText: 'Example newest' }).waitFor();
        await q.fill('example');
        await q.press('Enter');
        await messagesNav.getByText(/messages? match.*“example”/).waitFor();
        assert.equal(await p.locator('#root h1.subject').filter({ hasText: 'Example newest' }).count(), 1);
      } finally {
        await c.close();
      }
    });

    it('new user 3: choosing another inbox or domain closes the message open elsewhere; emptying the search takes its note away', async () => {
      await mail(`kim@${DOMAIN}`, 'Kim here');
      const c = await browser.newContext();
      try {
        const p = await c.newPage();
        await p.goto(own.httpUrl + '/');
        await p.getByLabel('API token').fill(tokens.apiToken);
        await p.getByRole('button', { name: 'Sign in' }).click();
        const messagesNav = p.getByRole('navigation', { name: 'Messages' });
        const inboxes = p.getByRole('navigation', { name: 'Inboxes' });
        const subject = p.locator('#root h1.subject');
        // Another inbox of the same domain.
        await messagesNav.getByRole('button', { name: /Kim here/ }).click();
        await subject.filter({ hasText: 'Kim here' }).waitFor();
        await inboxes.locator('[data-key="inbox:joe"]').click();
        await messagesNav.getByRole('button', { name: /Welcome Joe/ }).waitFor();
        await subject.waitFor({ state: 'detached' });
        // The same inbox again keeps its message open.
        await messagesNav.getByRole('button', { name: /Welcome Joe/ }).click();
        await subject.filter({ hasText: 'Welcome Joe' }).waitFor();
        await inboxes.locator('[data-key="inbox:joe"]').click();
        await messagesNav.getByRole('button', { name: /Welcome Joe/ }).waitFor();
        assert.equal(await subject.filter({ hasText: 'Welcome Joe' }).count(), 1);
        // Another domain.
        await p.getByRole('navigation', { name: 'Domains' }).locator('[data-key="domain:example.com"]').click();
        await messagesNav.getByRole('button', { name: /Example newest/ }).waitFor();
        await subject.waitFor({ state: 'detached' });
        // A search that closes the message leaves its note; emptying the search box takes it away.
        await messagesNav.getByRole('button', { name: /Example newest/ }).click();
        await subject.filter({ hasText: 'Example newest' }).waitFor();
        const q = p.getByRole('searchbox', { name: 'Search messages' });
        await q.fill('subject:"Kim here"');
        await q.press('Enter');
        const note = p.locator('#root').getByText('The message that was open does not match the search.');
        await note.waitFor();
        await q.fill('');
        await note.waitFor({ state: 'detached' });
      } finally {
        await c.close();
      }
    });
  });
});
