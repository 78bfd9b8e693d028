// Text a sender chooses, stored and answered the same by both stores: a NUL character in a
// subject, a sender or an SMS body (which names the SMS in listings) is kept as sent, whatever
// way the message arrived (`npm run test:node:postgres` runs this file on PostgreSQL, whose
// `text` columns hold no NUL: they escape it, and the raw bytes are kept unchanged).
import assert from 'node:assert/strict';
import { DOMAIN, startApi, type Harness } from './api-harness';

describe('HTTP API: a NUL character in a subject, sender or SMS body', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startApi();
  });
  afterEach(() => h.close());

  it('is stored and answered exactly, by SMTP bytes, injection and an SMS, and the raw bytes are unchanged', async () => {
    // The escape character of the PostgreSQL columns, too, reads back as itself.
    const raw = Buffer.from(`From: "Ac\u0000me \u0010" <a@acme.test>\r\nTo: joe@${DOMAIN}\r\nSubject: Code\u0000 482913 \u0010\u00100\r\n\r\nbody\r\n`, 'utf8');
    const smtp = await h.deliver('joe', raw);
    const injected = await h.call('POST', '/api/v2/domains/private/inboxes/joe', { body: { from: 'qa@acme.test', subject: 'Inj\u0000ected', text: 'x' } });
    assert.equal(injected.status, 200, injected.text);
    const sms = await h.call('POST', '/api/v2/domains/private/inboxes/15550100199', { body: { from: '+15550100123', text: 'Code\u0000 556677' } });
    assert.equal(sms.status, 200, sms.text);

    const mail = await h.call('GET', '/api/v2/domains/private/inboxes/joe?sort=ascending');
    assert.equal(mail.status, 200, mail.text);
    assert.deepEqual(
      mail.json.msgs.map((m: { subject: string; from: string }) => [m.subject, m.from]),
      [
        ['Code\u0000 482913 \u0010\u00100', '"Ac\u0000me \u0010" <a@acme.test>'],
        ['Inj\u0000ected', 'qa@acme.test'],
      ],
    );
    const one = await h.call('GET', `/api/v2/domains/private/messages/${smtp.id}`);
    assert.equal(one.json.subject, 'Code\u0000 482913 \u0010\u00100');
    const rawBack = await h.call('GET', `/api/v2/domains/private/messages/${smtp.id}/raw`);
    assert.deepEqual(rawBack.bytes, raw);
    const phone = await h.call('GET', '/api/v2/domains/private/inboxes/15550100199');
    assert.equal(phone.json.msgs[0].subject, 'Code\u0000 556677');
    assert.equal(phone.json.msgs[0].code, '556677');
    // A removal announces the metas (PostgreSQL: a NOTIFY payload) and answers as usual.
    assert.equal((await h.call('DELETE', `/api/v2/domains/private/messages/${smtp.id}`)).status, 200);
    assert.equal((await h.call('GET', '/api/v2/domains/private/inboxes/joe')).json.msgs.length, 1);
  });
});
