import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createClient } from '../../src/api/client';
import { ApiError } from '../../src/api/errors';
import type { InboxApi, StreamState } from '../../src/api/types';
import { parseAttachments, parseDeleteResult, parseDomains, parseInjectionResult, parseLinks, parseListing, parseMessage, parseWebhookDeliveryResult } from '../../src/api/validate';

import { senderLine } from '../../src/core/sender';
import { describeError } from '../../src/extension/errors';
import { buildViewContent } from '../../src/webview-ui/viewContent';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'hosted');
const fixture = (name: string): unknown => JSON.parse(readFileSync(path.join(FIXTURES, name), 'utf8'));
const fixtureText = (name: string): string => readFileSync(path.join(FIXTURES, name), 'utf8');

const EMAIL_ID = 'testinbox-1763776001-47123456';
/** A real hosted id: its last number has 13 digits. */
const LONG_ID = 'bill-1770915939-0125389591012';
const SMS_ID = '14155550100-1763776100-47130002';

describe('hosted service response shapes', () => {
  it('parses an inbox listing with extra fields and a cursor', () => {
    const listing = parseListing(fixture('inbox.json'));
    assert.equal(listing.msgs.length, 2);
    assert.equal(listing.cursor, 'eyJ0aW1lIjoxNzYzNzc1ODAwMDAwfQ');
    assert.equal(listing.msgs[0].id, EMAIL_ID);
    assert.equal(listing.msgs[0].domain, 'team.testinator.example');
    // The second summary has no `domain`: it takes the listing's.
    assert.equal(listing.msgs[1].domain, 'private');
    assert.equal(listing.msgs[1].time, 1763775800000);
    // Kept: the sender fields and the sending IP. Not kept: what nothing shows (size, stream, source…).
    assert.equal(listing.msgs[0].origfrom, 'Acme Accounts <no-reply@acme-signup.example>');
    assert.equal(listing.msgs[0].fromfull, 'no-reply@acme-signup.example');
    assert.ok(!('size' in listing.msgs[0]) && !('stream' in listing.msgs[0]), 'fields nothing shows are not copied into the model');
  });

  it('keeps the address of a listing whose from is the display name only, and shows Name <address>', () => {
    const listing = parseListing(fixture('inbox-display-name.json'));
    const [a, b] = listing.msgs;
    assert.equal(a.from, 'SHOPEXAMPLE', 'from stays as sent');
    assert.equal(a.fromfull, 'deals@news.shop-example.test');
    assert.equal(a.ip, '192.0.2.44');
    assert.equal(senderLine(a), 'SHOPEXAMPLE <deals@news.shop-example.test>');
    // No origfrom: the display name and fromfull are joined.
    assert.equal(b.origfrom, undefined);
    assert.equal(senderLine(b), 'Nora <noreply@mailer.example>');
    assert.equal(b.id, 'bill-1770915939-0125389591012');
  });

  it('keeps origfrom, ip, ttl and clickablelinks of a message, skipping malformed links', () => {
    const msg = parseMessage(fixture('message-display-name.json'), { inbox: 'guest', id: 'guest-1770918149-0971687107' });
    assert.equal(msg.kind, 'email');
    if (msg.kind !== 'email') return;
    assert.equal(msg.fromfull, 'welcome@hotel-example.test', 'fromfull stays as sent');
    assert.equal(msg.origfrom, 'Hotel Example <welcome@hotel-example.test>');
    assert.equal(msg.ip, '203.0.113.79');
    assert.equal(msg.ttl, 1773510149715);
    assert.deepEqual(msg.clickablelinks?.map((l) => l.link), ['https://hotel-example.test/stay/77', 'https://hotel-example.test/offers', 'javascript:alert(1)']);
    assert.equal(senderLine(msg), 'Hotel Example <welcome@hotel-example.test>');
    // An extra of another type is ignored, not a reason to refuse the message.
    const odd = { ...(fixture('message-display-name.json') as Record<string, unknown>), ip: 42, ttl: 'soon', clickablelinks: 'none' };
    const parsed = parseMessage(odd, { inbox: 'guest', id: 'guest-1770918149-0971687107' });
    assert.ok(parsed.kind === 'email' && parsed.ip === undefined && parsed.ttl === undefined && parsed.clickablelinks === undefined);
  });

  it('shows the link text of clickablelinks in the Links tab, and the sender as Name <address>', () => {
    const message = parseMessage(fixture('message-display-name.json'), { inbox: 'guest', id: 'guest-1770918149-0971687107' });
    const view = buildViewContent({ domain: 'private', message, allowRemoteImages: false });
    assert.equal(view.header.from, 'Hotel Example <welcome@hotel-example.test>');
    assert.deepEqual(view.links, [
      // The body's link (an image, no text of its own) takes the text the service lists for it.
      { url: 'https://hotel-example.test/stay/77', text: 'See your stay' },
      { url: 'https://hotel-example.test/offers', text: 'Offers for you' },
    ]);
  });

  it('reads a webhook answer with an empty id as no message id', () => {
    assert.deepEqual(parseWebhookDeliveryResult(fixture('webhook.json')), { status: 'ok' });
    assert.deepEqual(parseWebhookDeliveryResult({ status: 'ok', id: 'joe-1-2' }), { status: 'ok', id: 'joe-1-2' });
  });

  it('parses an email with headers and parts as kind email', () => {
    const msg = parseMessage(fixture('message.json'), { inbox: 'testinbox', id: EMAIL_ID });
    assert.equal(msg.kind, 'email');
    if (msg.kind !== 'email') return;
    assert.equal(msg.parts.length, 2);
    assert.equal(msg.parts[1].headers['content-type'], 'text/html; charset=UTF-8');
    assert.equal(msg.headers['mime-version'], '1.0');
    assert.equal(msg.from, 'Acme Accounts');
  });

  it('parses an SMS by its digits-only inbox as kind sms', () => {
    const msg = parseMessage(fixture('sms.json'), { inbox: '14155550100', id: SMS_ID });
    assert.equal(msg.kind, 'sms');
    assert.equal(msg.id, SMS_ID);
    assert.deepEqual(msg.parts, [{ body: 'Your verification code is 902114. It expires in 10 minutes.' }]);
  });

  it('recognises an SMS by its shape when read through the wildcard inbox', () => {
    const { id: _id, ...noId } = fixture('sms.json') as Record<string, unknown>;
    const msg = parseMessage(noId, { inbox: '*', id: 'other-1763776100-1' });
    assert.equal(msg.kind, 'sms');
    assert.equal(msg.id, 'other-1763776100-1', 'an SMS without id takes the requested one');
  });

  it('parses injection, links, attachments, deletes and domains', () => {
    assert.deepEqual(parseInjectionResult(fixture('inject.json')), { status: 'ok', id: 'testinbox-1763776200-47140005' });
    assert.equal(parseLinks(fixture('links.json')).length, 2);
    const atts = parseAttachments(fixture('attachments.json'));
    assert.deepEqual(
      atts.map((a) => [a.attachment_id, a.filename, a['content-type'], a.size]),
      [
        [0, 'invoice-2025-11.pdf', 'application/pdf', 0],
        [1, 'logo.png', 'image/png', 0],
      ],
    );
    assert.equal(atts[1]['content-disposition'], 'inline; filename="logo.png"');
    assert.deepEqual(parseDeleteResult(fixture('delete-inbox.json')), { status: 'ok', count: 7 });
    assert.deepEqual(parseDeleteResult(fixture('delete-message.json')), { status: 'ok', count: 1 });
    assert.deepEqual(parseDomains(fixture('domains.json')), { domains: [{ name: 'team.testinator.example', inboxes: 0, messages: 0 }] });
  });

  it('still names the field when a hosted-shaped message is damaged', () => {
    const msg = fixture('message.json') as Record<string, unknown>;
    (msg.parts as Array<Record<string, unknown>>)[1].body = 42;
    assert.throws(
      () => parseMessage(msg, { inbox: 'testinbox', id: EMAIL_ID }),
      (e: unknown) => ApiError.is(e, 'protocol') && e.field === 'parts[1].body',
    );
    const bad = fixture('message.json') as Record<string, unknown>;
    (bad.headers as Record<string, unknown>).date = { when: 'now' };
    assert.throws(
      () => parseMessage(bad, { inbox: 'testinbox', id: EMAIL_ID }),
      (e: unknown) => ApiError.is(e, 'protocol') && e.field === 'headers.date',
    );
  });
});

describe('client against a server answering like the hosted service', () => {
  const TOKEN = 'hosted-team-token-abcdef';
  let server: http.Server;
  let base: string;
  let api: InboxApi;
  const seen: Array<{ method: string; url: string; auth: string | undefined }> = [];

  /** Routes of the hosted API as the official SDKs call them; anything else is a 404 like the service's. */
  const routes: Record<string, () => [number, string, string?]> = {
    'GET /api/v2/domains': () => [200, fixtureText('domains.json')],
    'GET /api/v2/domains/private/inboxes/testinbox?limit=2&cursor=abc': () => [200, fixtureText('inbox.json')],
    // The forms of Mailinator's OpenAPI description: `domains` (plural), inject at `…/messages`.
    [`GET /api/v2/domains/private/inboxes/testinbox/messages/${EMAIL_ID}`]: () => [200, fixtureText('message.json')],
    [`GET /api/v2/domains/private/inboxes/14155550100/messages/${SMS_ID}`]: () => [200, fixtureText('sms.json')],
    [`GET /api/v2/domains/public/inboxes/bill/messages/${LONG_ID}`]: () => [200, fixtureText('message-display-name.json')],
    'POST /api/v2/domains/private/inboxes/testinbox/messages': () => [200, fixtureText('inject.json')],
    'POST /api/v2/domains/private/webhook/?whtoken=wh-tok': () => [200, fixtureText('webhook.json')],
    [`GET /api/v2/domains/private/inboxes/testinbox/messages/${EMAIL_ID}/links`]: () => [200, fixtureText('links.json')],
    [`GET /api/v2/domains/private/inboxes/testinbox/messages/${EMAIL_ID}/attachments`]: () => [200, fixtureText('attachments.json')],
    [`GET /api/v2/domains/private/inboxes/testinbox/messages/${EMAIL_ID}/raw`]: () => [200, JSON.stringify({ rawData: 'Subject: hi\r\n\r\nbody' })],
    [`DELETE /api/v2/domains/private/inboxes/testinbox/messages/${EMAIL_ID}`]: () => [200, fixtureText('delete-message.json')],
    'DELETE /api/v2/domains/private/inboxes/testinbox': () => [200, fixtureText('delete-inbox.json')],
  };

  before(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', auth: req.headers.authorization });
        const route = routes[`${req.method} ${req.url}`];
        let [status, body] = route ? route() : [404, JSON.stringify({ status: 'error', message: 'Not Found' })];
        const webhook = (req.url ?? '').includes('/webhook');
        // Mailinator documents a bad token as HTTP 400 ("Invalid API Token"); `bare-400` answers it with no body at all.
        if (!webhook && req.headers.authorization === 'bare-400') [status, body] = [400, ''];
        else if (!webhook && req.headers.authorization !== TOKEN) [status, body] = [400, fixtureText('error-invalid-token.json')];
        if (webhook && (req.url ?? '').includes('bare-400')) [status, body] = [400, ''];
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(body);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    api = createClient({ baseUrl: base, apiToken: TOKEN, retries: 0 });
  });

  after(async () => {
    await api.dispose();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('reads every operation the hosted service offers', async () => {
    assert.equal((await api.listDomains()).domains[0].name, 'team.testinator.example');
    const listing = await api.listInbox('private', 'testinbox', { limit: 2, cursor: 'abc' });
    assert.equal(listing.cursor, 'eyJ0aW1lIjoxNzYzNzc1ODAwMDAwfQ');
    assert.equal((await api.getMessage('private', 'testinbox', EMAIL_ID)).kind, 'email');
    assert.equal((await api.getMessage('private', '14155550100', SMS_ID)).kind, 'sms');
    assert.equal((await api.inject('private', 'testinbox', { from: 'ci', subject: 's', text: 't' })).status, 'ok');
    assert.equal((await api.getLinks('private', 'testinbox', EMAIL_ID))[0], 'https://acme-signup.example/confirm?t=abc123');
    assert.equal((await api.listAttachments('private', 'testinbox', EMAIL_ID)).length, 2);
    assert.equal(await api.getRaw('private', 'testinbox', EMAIL_ID), 'Subject: hi\r\n\r\nbody');
    assert.equal((await api.deleteMessage('private', 'testinbox', EMAIL_ID)).count, 1);
    assert.equal((await api.clearInbox('private', 'testinbox')).count, 7);
    assert.ok(seen.every((s) => s.auth === TOKEN && !s.url.includes(TOKEN)));
  });

  it('fetches and injects at the paths of the OpenAPI description', async () => {
    seen.length = 0;
    await api.getMessage('private', 'testinbox', EMAIL_ID);
    await api.inject('private', 'testinbox', { subject: 's' });
    assert.deepEqual(
      seen.map((s) => `${s.method} ${s.url}`),
      [`GET /api/v2/domains/private/inboxes/testinbox/messages/${EMAIL_ID}`, 'POST /api/v2/domains/private/inboxes/testinbox/messages'],
    );
  });

  it('opens a listed message whose id has a 13-digit number', async () => {
    const msg = await api.getMessage('public', 'bill', LONG_ID);
    assert.equal(msg.kind, 'email');
    assert.equal(msg.subject, 'Thanks for your stay');
  });

  it('accepts any id that stays in its path segment, and refuses the others before any request', async () => {
    seen.length = 0;
    for (const bad of ['a/b', '..', '.', 'a\\b', 'x\u0000y', '', 'x'.repeat(257)]) {
      await assert.rejects(api.getMessage('private', 'testinbox', bad), (e: unknown) => ApiError.is(e, 'invalid_input') && e.field === 'id', JSON.stringify(bad));
    }
    assert.equal(seen.length, 0);
    // Odd but safe: percent-encoded into one segment, then the server's own 404.
    await assert.rejects(api.getMessage('private', 'testinbox', 'msg 1?#%'), (e: unknown) => ApiError.is(e, 'not_found'));
    assert.equal(seen[0].url, '/api/v2/domains/private/inboxes/testinbox/messages/msg%201%3F%23%25');
  });

  it('offers Set API Token for a bare HTTP 400 (documented as "Invalid API Token")', async () => {
    const other = createClient({ baseUrl: base, apiToken: 'bare-400', retries: 0 });
    try {
      const err = await other.listInbox('private', 'testinbox').then(
        () => assert.fail('a bare 400 was taken as success'),
        (e: unknown) => e,
      );
      assert.ok(ApiError.is(err, 'unauthorized') && err.status === 400 && err.field === 'apiToken' && /Set a valid token/.test(err.message), String(err));
      // What the user is offered: Set API Token first.
      assert.deepEqual(describeError(err).actions, ['setApiToken', 'showLog']);
    } finally {
      await other.dispose();
    }
  });

  it('keeps a bare 400 to a webhook a bad request: the API token is not involved', async () => {
    await assert.rejects(api.deliverWebhook(`${base}/api/v2/domains/private/webhook/?whtoken=bare-400`, { to: 'joe' }), (e: unknown) => ApiError.is(e, 'bad_request'));
  });

  it('does not pass on the empty id of a webhook answer', async () => {
    const r = await api.deliverWebhook(`${base}/api/v2/domains/private/webhook/?whtoken=wh-tok`, { to: 'joe', subject: 's' });
    assert.deepEqual(r, { status: 'ok' });
  });

  it("reports the hosted service's bad-token answer as unauthorized", async () => {
    const other = createClient({ baseUrl: base, apiToken: 'wrong-token', retries: 0 });
    try {
      await assert.rejects(other.listDomains(), (e: unknown) => ApiError.is(e, 'unauthorized') && /Set a valid token/.test(e.message));
    } finally {
      await other.dispose();
    }
  });

  it('reports the push stream as unsupported, so the caller polls', async () => {
    const states: StreamState[] = [];
    const done = new Promise<Error | undefined>((resolve) => {
      api.subscribe('private', 'testinbox', {
        onEvent: () => assert.fail('no events expected'),
        onState: (s, err) => {
          states.push(s);
          if (s === 'unsupported' || s === 'closed') resolve(err);
        },
      });
    });
    const err = await done;
    assert.deepEqual(states, ['connecting', 'unsupported']);
    assert.ok(ApiError.is(err, 'not_found'));
  });
});
