import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import {
  ApiError,
  createClient,
  parseAttachments,
  parseDeleteResult,
  parseDomains,
  parseInjectionResult,
  parseLinks,
  parseListing,
  parseMessage,
  type InboxApi,
  type StreamState,
} from '../../src/api';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'hosted');
const fixture = (name: string): unknown => JSON.parse(readFileSync(path.join(FIXTURES, name), 'utf8'));
const fixtureText = (name: string): string => readFileSync(path.join(FIXTURES, name), 'utf8');

const EMAIL_ID = 'testinbox-1763776001-47123456';
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
    assert.ok(!('origfrom' in listing.msgs[0]), 'extra fields are not copied into the model');
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
    [`GET /api/v2/domain/private/inboxes/testinbox/messages/${EMAIL_ID}`]: () => [200, fixtureText('message.json')],
    [`GET /api/v2/domain/private/inboxes/14155550100/messages/${SMS_ID}`]: () => [200, fixtureText('sms.json')],
    'POST /api/v2/domains/private/inboxes/testinbox/': () => [200, fixtureText('inject.json')],
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
        if (req.headers.authorization !== TOKEN) [status, body] = [400, fixtureText('error-invalid-token.json')];
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
    assert.ok(ApiError.is(err, 'notFound'));
  });
});
