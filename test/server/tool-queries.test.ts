// What the agent tools read (src/api/queries.ts, also the MCP tools' and the library's), against the real local HTTP API
// through the real client: `sinceMs` never answers older mail, a wait sees the next message,
// the verification link is chosen over unsubscribe and tracking links, HTML-only mail is read
// as its visible text.
import assert from 'node:assert/strict';
import MailComposer from 'nodemailer/lib/mail-composer';
import { createClient } from '../../src/api/client';
import type { InboxApi } from '../../src/api/types';
import { findCode, findLink, listInboxes, newestMessage } from '../../src/api/queries';
import { API_TOKEN, DOMAIN, startApi, type Harness } from './api-harness';

describe('agent tool queries (real HTTP API, real client)', () => {
  let h: Harness;
  let api: InboxApi;

  before(async () => {
    h = await startApi();
    api = createClient({ baseUrl: `http://127.0.0.1:${h.port}`, apiToken: API_TOKEN });
  });
  after(() => h.close());

  async function inject(inbox: string, subject: string, text: string): Promise<string> {
    const r = await h.call('POST', `/api/v2/domains/${DOMAIN}/inboxes/${inbox}`, { body: { from: 'Acme <no-reply@acme.test>', subject, text } });
    assert.equal(r.status, 200, r.text);
    return r.json.id as string;
  }

  it('never answers a code from a message at or before sinceMs, and waits for the next one', async () => {
    await inject('q-code', 'Old', 'Your verification code is 101010.');
    assert.equal((await findCode({ api, domain: DOMAIN, inbox: 'q-code', testInbox: false }))?.value, '101010');
    const since = Date.now();
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(await findCode({ api, domain: DOMAIN, inbox: 'q-code', testInbox: false, since }), undefined, 'the stale code is not answered');
    const waiting = findCode({ api, domain: DOMAIN, inbox: 'q-code', testInbox: false, since, waitMs: 10_000, pollMs: 100 });
    setTimeout(() => void inject('q-code', 'New', 'Your verification code is 202020.'), 300);
    const found = await waiting;
    assert.equal(found?.value, '202020');
    assert.equal(found?.subject, 'New');
  });

  it('an empty inbox is normal: undefined when the wait ends, not an error', async () => {
    const started = Date.now();
    assert.equal(await findCode({ api, domain: DOMAIN, inbox: 'q-empty', testInbox: false, waitMs: 300, pollMs: 100 }), undefined);
    assert.ok(Date.now() - started >= 250, 'it waited');
  });

  it('picks the verification link, not the tracker or the List-Unsubscribe link; reads HTML-only mail as text', async () => {
    const raw = await new MailComposer({
      from: 'Acme <no-reply@acme.test>',
      to: `q-link@${DOMAIN}`,
      subject: 'Confirmez votre adresse',
      headers: { 'List-Unsubscribe': '<https://acme.test/u/7>' },
      html: '<p>Bonjour,</p><p><a href="https://click.acme.test/ls/click?upn=1">Nos offres</a></p><p><a href="https://acme.test/u/7">Se désabonner</a></p><p><a href="https://acme.test/c/3f9?x=1">Vérifier mon adresse</a></p>',
    }).compile().build();
    await h.deliver('q-link', raw);
    const found = await findLink({ api, domain: DOMAIN, inbox: 'q-link', testInbox: false });
    assert.deepEqual(found?.value, { url: 'https://acme.test/c/3f9?x=1', text: 'Vérifier mon adresse', kind: 'verify-email' });
    const read = await newestMessage(api, DOMAIN, 'q-link');
    assert.equal(read?.verificationLink?.url, 'https://acme.test/c/3f9?x=1');
    assert.match(read?.text ?? '', /^Bonjour,\nNos offres\nSe désabonner\nVérifier mon adresse$/);
    assert.equal(read?.from, 'Acme <no-reply@acme.test>');
  });

  it('lists the inboxes of a domain with their newest message', async () => {
    await inject('q-list', 'One', '1');
    await inject('q-list', 'Two', '2');
    const [d] = await listInboxes(api, [DOMAIN]);
    const row = d.inboxes.find((i) => i.inbox === 'q-list');
    assert.equal(row?.recentMessages, 2);
    assert.equal(row?.newest.subject, 'Two');
    assert.equal(row?.address, `q-list@${DOMAIN}`);
    const [bad] = await listInboxes(api, ['nonexistent.test']);
    assert.deepEqual(bad.inboxes, []);
  });
});
