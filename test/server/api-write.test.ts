import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import type { MaildirStore } from '../../src/server/store/maildir/store';
import { DOMAIN, ID_SHAPE, ON_MAILDIR, WEBHOOK_TOKEN, startApi, type Harness } from './api-harness';

describe('HTTP API: injection (docs/api.md §4.4) and webhooks (docs/api.md §4.5)', () => {
  let h: Harness;

  beforeEach(async () => {
    h = await startApi();
  });
  afterEach(async () => {
    await h.close();
  });

  async function fetchMessage(inbox: string, id: string) {
    const r = await h.call('GET', `/api/v2/domain/private/inboxes/${inbox}/messages/${id}`);
    assert.equal(r.status, 200, r.text);
    return r.json;
  }

  async function listIds(inbox: string, domain = 'private'): Promise<string[]> {
    const r = await h.call('GET', `/api/v2/domains/${domain}/inboxes/${inbox}`);
    return r.json.msgs.map((m: { id: string }) => m.id);
  }

  describe('inject (API token)', () => {
    it('stores the message and answers docs/api.md §2.6 {status:"ok", id} once it is on disk', async () => {
      const r = await h.call('POST', '/api/v2/domains/private/inboxes/joe/', { body: { from: 'QA <qa@acme.test>', subject: 'Hello', text: 'Code 777111' } });
      assert.equal(r.status, 200);
      assert.deepEqual(Object.keys(r.json).sort(), ['id', 'status']);
      assert.equal(r.json.status, 'ok');
      assert.match(r.json.id, ID_SHAPE);
      // Durable before the answer: on the Maildir in the fdatasynced write-ahead log, and the .eml in new/ of the inbox directory
      // once the materialiser wrote it (materialise.test.ts; PostgreSQL: committed, team.test.ts).
      if (ON_MAILDIR) {
        await (h.store as MaildirStore).filesWritten();
        assert.equal(readdirSync(path.join(h.dir, 'mail', DOMAIN, 'joe', 'new')).length, 1);
      }
      const meta = await h.store.get(r.json.id);
      assert.equal(meta?.source, 'inject');
      const m = await fetchMessage('joe', r.json.id);
      assert.equal(m.fromfull, 'QA <qa@acme.test>');
      assert.equal(m.from, 'QA');
      assert.equal(m.subject, 'Hello');
      assert.equal(m.parts[0].body.trim(), 'Code 777111');
      assert.equal(m.headers['content-type'], 'text/plain; charset=utf-8');
    });

    it('accepts the SDK form …/inboxes/<inbox>/messages and no trailing slash', async () => {
      for (const p of ['/api/v2/domains/private/inboxes/joe/messages', '/api/v2/domain/private/inboxes/joe', '/api/v2/domains/private/inboxes/joe/messages/']) {
        const r = await h.call('POST', p, { body: { subject: p } });
        assert.equal(r.status, 200, p);
      }
      assert.equal((await listIds('joe')).length, 3);
    });

    it('writes private to the default domain and a named domain to that domain', async () => {
      const a = await h.call('POST', '/api/v2/domains/private/inboxes/joe', { body: { subject: 'a' } });
      const b = await h.call('POST', '/api/v2/domains/Team.Example/inboxes/joe', { body: { subject: 'b' } });
      assert.equal((await h.store.get(a.json.id))?.domain, DOMAIN);
      assert.equal((await h.store.get(b.json.id))?.domain, 'team.example');
      assert.deepEqual(await listIds('joe', 'team.example'), [b.json.id]);
    });

    it('fills a missing from and subject with dummy values', async () => {
      const r = await h.call('POST', '/api/v2/domains/private/inboxes/joe', { body: { text: 'only text' } });
      const m = await fetchMessage('joe', r.json.id);
      assert.equal(m.fromfull, `inject@${DOMAIN}`);
      assert.equal(m.subject, '(no subject)');
    });

    it('keeps non-ASCII text and subject intact', async () => {
      const r = await h.call('POST', '/api/v2/domains/private/inboxes/joe', { body: { from: 'Zoë <zoe@x.test>', subject: 'Grüße 🎉', text: 'Ünïcödé\nzweite Zeile' } });
      const m = await fetchMessage('joe', r.json.id);
      assert.equal(m.subject, 'Grüße 🎉');
      assert.equal(m.from, 'Zoë');
      assert.equal(m.parts[0].body.replace(/\n$/, ''), 'Ünïcödé\nzweite Zeile');
    });

    it('accepts a JSON body that starts with a UTF-8 byte order mark', async () => {
      const r = await h.call('POST', '/api/v2/domains/private/inboxes/joe', { body: '\ufeff{"subject":"bom"}' });
      assert.equal(r.status, 200, r.text);
      assert.equal((await fetchMessage('joe', r.json.id)).subject, 'bom');
    });

    it('stores SMS for a phone inbox', async () => {
      const r = await h.call('POST', '/api/v2/domains/private/inboxes/14155550100/', { body: { from: '+15550001111', text: 'OTP 9911' } });
      const m = await fetchMessage('14155550100', r.json.id);
      assert.deepEqual(m.parts, [{ body: 'OTP 9911' }]);
      assert.equal(m.fromfull, '+15550001111');
    });
  });

  describe('webhook (webhook token), the four forms', () => {
    const forms: Array<[string, string, Record<string, string>]> = [
      ['token in path, inbox in path', `/api/v2/domains/${WEBHOOK_TOKEN}/webhook/hooked/`, {}],
      ['named domain, token in query', `/api/v2/domains/${DOMAIN}/webhook/?whtoken=${WEBHOOK_TOKEN}`, { to: 'hooked' }],
      ['literal private, token in query', `/api/v2/domains/private/webhook/?whtoken=${WEBHOOK_TOKEN}`, { to: 'hooked' }],
      ['literal private, inbox in path, token in query', `/api/v2/domains/private/webhook/hooked?whtoken=${WEBHOOK_TOKEN}`, {}],
    ];
    for (const [name, target, extra] of forms) {
      it(`delivers with the form "${name}" into an ordinary, listable and fetchable message`, async () => {
        const r = await h.call('POST', target, { anonymous: true, body: { from: 'Stripe <hooks@stripe.test>', subject: 'payment', text: `via ${name}`, ...extra } });
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(Object.keys(r.json).sort(), ['id', 'status']);
        assert.equal(r.json.status, 'ok');
        assert.match(r.json.id, /^hooked-[0-9]+-[0-9]+$/);
        assert.deepEqual(await listIds('hooked'), [r.json.id]);
        const m = await fetchMessage('hooked', r.json.id);
        assert.equal(m.subject, 'payment');
        assert.equal(m.parts[0].body.trim(), `via ${name}`);
        assert.equal((await h.store.get(r.json.id))?.source, 'webhook');
        assert.equal((await h.store.get(r.json.id))?.domain, DOMAIN);
      });
    }

    it('accepts each form without the trailing slash and via the singular domain spelling', async () => {
      for (const p of [`/api/v2/domains/${WEBHOOK_TOKEN}/webhook/hooked`, `/api/v2/domain/private/webhook?whtoken=${WEBHOOK_TOKEN}`, `/api/v2/domains/${DOMAIN}/webhook?whtoken=${WEBHOOK_TOKEN}`]) {
        const r = await h.call('POST', p, { anonymous: true, body: { to: 'hooked', text: p } });
        assert.equal(r.status, 200, p);
      }
      assert.equal((await listIds('hooked')).length, 3);
    });

    it('rule 1: lands in the inbox named by the to field', async () => {
      const r = await h.call('POST', `/api/v2/domains/private/webhook/?whtoken=${WEBHOOK_TOKEN}`, { anonymous: true, body: { to: 'Alerts', text: 'x' } });
      assert.match(r.json.id, /^alerts-/);
      assert.deepEqual(await listIds('alerts'), [r.json.id]);
    });

    it('rule 1: a to field holding an address uses its local part', async () => {
      const r = await h.call('POST', `/api/v2/domains/private/webhook?whtoken=${WEBHOOK_TOKEN}`, { anonymous: true, body: { to: 'alerts@whatever.test', text: 'x' } });
      assert.match(r.json.id, /^alerts-/);
    });

    it('rule 2: without a to field and without an inbox in the path it is refused and nothing is stored', async () => {
      const r = await h.call('POST', `/api/v2/domains/private/webhook/?whtoken=${WEBHOOK_TOKEN}`, { anonymous: true, body: { text: 'nowhere' } });
      assert.equal(r.status, 400);
      assert.match(r.json.message, /no inbox/);
      assert.deepEqual(await h.store.domains(), []);
    });

    it('rule 3: an inbox in the path overrides the to field', async () => {
      const r = await h.call('POST', `/api/v2/domains/${WEBHOOK_TOKEN}/webhook/path-inbox/`, { anonymous: true, body: { to: 'body-inbox', text: 'x' } });
      assert.match(r.json.id, /^path-inbox-/);
      assert.deepEqual(await listIds('body-inbox'), []);
      const q = await h.call('POST', `/api/v2/domains/private/webhook/path-inbox?whtoken=${WEBHOOK_TOKEN}`, { anonymous: true, body: { to: 'body-inbox' } });
      assert.match(q.json.id, /^path-inbox-/);
    });

    it('rule 4: inserts a dummy from and subject when the payload has none', async () => {
      const r = await h.call('POST', `/api/v2/domains/${WEBHOOK_TOKEN}/webhook/hooked/`, { anonymous: true, body: { text: 'bare' } });
      const m = await fetchMessage('hooked', r.json.id);
      assert.equal(m.fromfull, `webhook@${DOMAIN}`);
      assert.equal(m.subject, '(no subject)');
      const listed = await h.call('GET', '/api/v2/domains/private/inboxes/hooked');
      assert.equal(listed.json.msgs[0].from, `webhook@${DOMAIN}`);
      assert.equal(listed.json.msgs[0].subject, '(no subject)');
    });

    it('rule 5: a webhook message to a phone inbox is an ordinary SMS', async () => {
      const r = await h.call('POST', `/api/v2/domains/private/webhook/?whtoken=${WEBHOOK_TOKEN}`, { anonymous: true, body: { to: '14155550100', from: '+15550001111', text: 'Your code: 4242' } });
      const m = await fetchMessage('14155550100', r.json.id);
      assert.deepEqual(m.parts, [{ body: 'Your code: 4242' }]);
      assert.equal(m.fromfull, '+15550001111');
    });

    it('delivers a named-domain webhook into that domain', async () => {
      const r = await h.call('POST', `/api/v2/domains/Hooks.Example/webhook/?whtoken=${WEBHOOK_TOKEN}`, { anonymous: true, body: { to: 'joe' } });
      assert.equal((await h.store.get(r.json.id))?.domain, 'hooks.example');
    });
  });
});
