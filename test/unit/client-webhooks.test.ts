import assert from 'node:assert/strict';
import { ApiError } from '../../src/api/errors';
import { redactWebhookUrl, webhookUrls } from '../../src/api/webhooks';
import { webhookUrlPreviews } from '../../src/api/webhooks';

describe('webhook URLs', () => {
  it('gives the four forms of docs/api.md §4.5 when a domain and an inbox are named', () => {
    const urls = webhookUrls('http://127.0.0.1:2580/', { token: 'wh-abc', domain: 'qa.example.com', inbox: 'joe' });
    assert.deepEqual(
      urls.map((u) => [u.form, u.url]),
      [
        ['tokenInPath', 'http://127.0.0.1:2580/api/v2/domains/wh-abc/webhook/joe/'],
        ['namedDomain', 'http://127.0.0.1:2580/api/v2/domains/qa.example.com/webhook/?whtoken=wh-abc'],
        ['privateQuery', 'http://127.0.0.1:2580/api/v2/domains/private/webhook/?whtoken=wh-abc'],
        ['privateInboxQuery', 'http://127.0.0.1:2580/api/v2/domains/private/webhook/joe?whtoken=wh-abc'],
      ],
    );
    for (const u of urls) assert.ok(u.label.length > 0);
  });

  it('omits the forms that need an inbox when none is given', () => {
    const urls = webhookUrls('https://api.mailinator.com', { token: 'wh-abc', domain: 'qa.example.com' });
    assert.deepEqual(
      urls.map((u) => u.form),
      ['namedDomain', 'privateQuery'],
    );
  });

  it('omits the named-domain form for no domain or the literal private', () => {
    for (const domain of [undefined, 'private', 'PRIVATE']) {
      const urls = webhookUrls('https://api.mailinator.com', { token: 't0k', domain, inbox: '14155550100' });
      assert.deepEqual(
        urls.map((u) => u.form),
        ['tokenInPath', 'privateQuery', 'privateInboxQuery'],
        String(domain),
      );
    }
  });

  it('keeps a path prefix of the base URL and encodes the token and inbox', () => {
    const urls = webhookUrls('https://proxy.example/inbox/', { token: 'a+b=c', inbox: "o'brien+x" });
    assert.equal(urls[0].url, "https://proxy.example/inbox/api/v2/domains/a%2Bb%3Dc/webhook/o'brien%2Bx/");
    assert.equal(urls[1].url, 'https://proxy.example/inbox/api/v2/domains/private/webhook/?whtoken=a%2Bb%3Dc');
  });

  it('refuses a missing or mangled token, a bad inbox and the wildcard inbox', () => {
    const bad: Array<[Parameters<typeof webhookUrls>[1], string]> = [
      [{ token: '' }, 'token'],
      [{ token: 'has space' }, 'token'],
      [{ token: 'a/b' }, 'token'],
      [{ token: 'ok', inbox: '../x' }, 'inbox'],
      [{ token: 'ok', inbox: '*' }, 'inbox'],
      [{ token: 'ok', domain: 'not a domain' }, 'domain'],
    ];
    for (const [opts, field] of bad) {
      assert.throws(
        () => webhookUrls('http://127.0.0.1:2580', opts),
        (e: unknown) => ApiError.is(e, 'invalid_input') && e.field === field,
        JSON.stringify(opts),
      );
    }
    assert.throws(() => webhookUrls('ftp://x', { token: 'ok' }), (e: unknown) => ApiError.is(e, 'invalid_input'));
  });

  it('hides the webhook token of each form for logs', () => {
    const urls = webhookUrls('http://127.0.0.1:2580', { token: 'wh-secret', domain: 'qa.example.com', inbox: 'joe' });
    for (const u of urls) assert.ok(!redactWebhookUrl(u.url).includes('wh-secret'), redactWebhookUrl(u.url));
    assert.equal(redactWebhookUrl('/api/v2/domains/private/webhook/joe?whtoken=wh-secret'), '/api/v2/domains/private/webhook/joe?whtoken=***');
  });
});

describe('webhookUrlPreviews (the Copy Webhook URL picker)', () => {
  it('shows every form as one full URL, with placeholders for what is not chosen and never a token', () => {
    const none = webhookUrlPreviews('http://127.0.0.1:2580', {});
    assert.deepEqual(
      none.map((p) => [p.form, p.url]),
      [
        ['tokenInPath', 'http://127.0.0.1:2580/api/v2/domains/<webhook token>/webhook/<inbox>/'],
        ['namedDomain', 'http://127.0.0.1:2580/api/v2/domains/<domain>/webhook/?whtoken=<webhook token>'],
        ['privateQuery', 'http://127.0.0.1:2580/api/v2/domains/private/webhook/?whtoken=<webhook token>'],
        ['privateInboxQuery', 'http://127.0.0.1:2580/api/v2/domains/private/webhook/<inbox>?whtoken=<webhook token>'],
      ],
    );
    const known = webhookUrlPreviews('https://team.example.test/', { inbox: 'signup', domain: 'acme.test' });
    assert.equal(known.length, 4);
    for (const p of known) assert.ok(p.url.startsWith('https://team.example.test/api/v2/domains/'), p.url);
    assert.ok(known.find((p) => p.form === 'tokenInPath')!.url.endsWith('/webhook/signup/'));
    assert.ok(known.find((p) => p.form === 'namedDomain')!.url.includes('/domains/acme.test/webhook/'));
    // The private domain is no named domain: the form that needs one still shows <domain>.
    assert.ok(webhookUrlPreviews('http://x.test', { domain: 'private' }).find((p) => p.form === 'namedDomain')!.url.includes('/domains/<domain>/'));
  });
});
