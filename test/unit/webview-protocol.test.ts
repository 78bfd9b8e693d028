import { MAX_URL_LENGTH } from '../../src/core/urls';
import assert from 'node:assert/strict';
import {
  isFromHost,
  MAX_HTML_SOURCE,
  MAX_INLINE_IMAGES,
  parseHostMessage,
  parseWebviewMessage,
  viewTitle,
  type HostMessage,
  type ViewContent,
} from '../../src/shared/viewProtocol';
import { fetchedEmail, fetchedSms } from '../support/messages';
import { cleanFileName } from '../../src/core/fileNames';
import { buildViewContent, contentIdOf, MAX_VIEW_TEXT, referencedContentIds } from '../../src/webview-ui/viewContent';

function aViewContent(overrides: Partial<ViewContent> = {}): ViewContent {
  return {
    id: 'joe-1763776000-1',
    kind: 'email',
    header: { from: 'Acme <no-reply@acme.test>', to: 'joe', subject: 'Your code', time: 1763776000000, id: 'joe-1763776000-1', domain: 'inbox.test' },
    tabs: ['html', 'text', 'headers', 'links', 'attachments', 'raw'],
    html: { source: '<p>x</p><img src="cid:logo">', remoteAllowed: false, truncated: false, inlineImages: [['logo', 'data:image/png;base64,iVBORw0KGgo=']] },
    text: { text: 'Your code is 123456', truncated: false },
    headers: [['subject', 'Your code']],
    links: [{ url: 'https://acme.test/verify', text: 'Verify' }],
    attachments: [{ index: 0, filename: 'a.pdf', contentType: 'application/pdf', size: 10 }],
    raw: { text: 'Subject: Your code\r\n\r\nx', truncated: false },
    code: { code: '123456', reason: 'after "code is"' },
    notes: [],
    ...overrides,
  };
}

function renderOf(state: unknown): unknown {
  return { type: 'render', state };
}

function rejects(result: { ok: boolean; error?: string }, pattern: RegExp): void {
  assert.equal(result.ok, false, 'expected the message to be rejected');
  assert.match(result.error ?? '', pattern);
}

describe('webview protocol: host → webview', () => {
  it('accepts a complete render message and returns an equal value', () => {
    const msg: HostMessage = { type: 'render', state: aViewContent() };
    const r = parseHostMessage(JSON.parse(JSON.stringify(msg)));
    assert.deepEqual(r, { ok: true, value: msg });
  });

  it('accepts an SMS render with a conversation tab', () => {
    const state = aViewContent({
      id: '14155550100-1763776000-2',
      kind: 'sms',
      header: { from: '15551234567', to: '14155550100', subject: 'SMS', time: 1, id: '14155550100-1763776000-2', domain: 'inbox.test' },
      tabs: ['conversation', 'links', 'raw'],
      html: undefined,
      text: undefined,
      sms: { from: '15551234567', to: '14155550100', body: 'Code 4242', time: 1, segments: 1, encoding: 'GSM-7' },
    });
    assert.equal(parseHostMessage(JSON.parse(JSON.stringify(renderOf(state)))).ok, true);
    const badEncoding = JSON.parse(JSON.stringify(renderOf(state))) as { state: { sms: { encoding: string } } };
    badEncoding.state.sms.encoding = 'UTF-8';
    rejects(parseHostMessage(badEncoding), /encoding/);
  });

  it('rejects values that are not messages', () => {
    for (const bad of [null, undefined, 42, 'render', [], { type: 'explode' }, {}]) {
      assert.equal(parseHostMessage(bad).ok, false, JSON.stringify(bad));
    }
  });

  it('rejects a render whose state has the wrong kind', () => {
    rejects(parseHostMessage(renderOf({ ...aViewContent(), kind: 'fax' })), /state\.kind/);
  });

  it('rejects a render naming a tab it has no content for', () => {
    rejects(parseHostMessage(renderOf(aViewContent({ html: undefined }))), /html/);
    rejects(parseHostMessage(renderOf(aViewContent({ tabs: ['conversation'] }))), /sms/);
  });

  it('rejects unknown and duplicate tabs', () => {
    rejects(parseHostMessage(renderOf({ ...aViewContent(), tabs: ['html', 'evil'] })), /unknown tab/);
    rejects(parseHostMessage(renderOf(aViewContent({ tabs: ['text', 'text'] }))), /twice/);
    rejects(parseHostMessage(renderOf(aViewContent({ tabs: [] }))), /empty/);
  });

  it('rejects headers that are not name/value string pairs', () => {
    rejects(parseHostMessage(renderOf({ ...aViewContent(), headers: [['a']] })), /headers\[0\]/);
    rejects(parseHostMessage(renderOf({ ...aViewContent(), headers: [['a', 1]] })), /headers\[0\]/);
  });

  it('rejects attachments with a negative or fractional index', () => {
    rejects(parseHostMessage(renderOf({ ...aViewContent(), attachments: [{ index: -1, filename: 'a', contentType: 'x', size: 1 }] })), /index/);
    rejects(parseHostMessage(renderOf({ ...aViewContent(), attachments: [{ index: 0.5, filename: 'a', contentType: 'x', size: 1 }] })), /integer/);
  });

  it('rejects a state whose header id differs from its id', () => {
    const s = aViewContent();
    rejects(parseHostMessage(renderOf({ ...s, header: { ...s.header, id: 'other-1-1' } })), /differs/);
  });

  it('carries the theme-colours choice for simple mail, and rejects a non-boolean one', () => {
    const s = aViewContent();
    const themed = { ...s, html: { ...s.html!, themeColors: true } };
    assert.deepEqual(parseHostMessage(renderOf(themed)), { ok: true, value: renderOf(themed) });
    rejects(parseHostMessage(renderOf({ ...s, html: { ...s.html, themeColors: 'yes' } })), /themeColors/);
  });

  it('titles a message by messageTitle: an SMS by its first words (its sender when it has none), an email by its subject', () => {
    assert.equal(viewTitle({ kind: 'sms', id: 'x', header: { ...aViewContent().header, from: '15551234567', subject: 'SMS' } }), 'SMS from 15551234567');
    assert.equal(viewTitle({ kind: 'sms', id: 'x', header: { ...aViewContent().header, from: '15551234567', subject: 'SMS' }, sms: { body: 'Your Acme code: 7731. Do not share it.' } }), 'Your Acme code: 7731. Do not share it.');
    assert.equal(viewTitle({ kind: 'sms', id: 'x', header: { ...aViewContent().header, from: '15551234567', subject: 'Your code is 902114' } }), 'Your code is 902114');
    assert.equal(viewTitle(aViewContent()), 'Your code');
    assert.equal(viewTitle(aViewContent({ header: { ...aViewContent().header, subject: '' } })), '(no subject)');
  });

  it('rejects html with a non-boolean remoteAllowed', () => {
    const s = aViewContent();
    rejects(parseHostMessage(renderOf({ ...s, html: { ...s.html, remoteAllowed: 'yes' } })), /remoteAllowed/);
  });

  it('rejects inline images that are not [content id, data: raster image URL] pairs', () => {
    const s = aViewContent();
    const withImages = (inlineImages: unknown): unknown => renderOf({ ...s, html: { ...s.html, inlineImages } });
    rejects(parseHostMessage(withImages(undefined)), /inlineImages must be an array/);
    rejects(parseHostMessage(withImages([['logo', 'http://evil.test/a.png']])), /not a data: image URL/);
    rejects(parseHostMessage(withImages([['logo', 'data:image/svg+xml;base64,PHN2Zz4=']])), /not a data: image URL/);
    rejects(parseHostMessage(withImages([['logo', 'javascript:alert(1)']])), /not a data: image URL/);
    rejects(parseHostMessage(withImages([['', 'data:image/png;base64,AAAA']])), /content id/);
    rejects(parseHostMessage(withImages([['logo']])), /pair/);
    rejects(parseHostMessage(withImages(Array.from({ length: MAX_INLINE_IMAGES + 1 }, (_, i) => [`c${i}`, 'data:image/png;base64,AAAA']))), /more than/);
  });

  it('rejects HTML source longer than the view shows', () => {
    const s = aViewContent();
    rejects(parseHostMessage(renderOf({ ...s, html: { ...s.html, source: 'a'.repeat(MAX_HTML_SOURCE + 1) } })), /source is longer/);
  });

  it('rejects links that are not {url, text?} objects', () => {
    rejects(parseHostMessage(renderOf({ ...aViewContent(), links: ['https://a.test'] })), /links\[0\] must be an object/);
    rejects(parseHostMessage(renderOf({ ...aViewContent(), links: [{ url: 'https://a.test', text: 5 }] })), /links\[0\]\.text/);
    rejects(parseHostMessage(renderOf({ ...aViewContent(), links: [{ url: 'https://a.test/' + 'a'.repeat(MAX_URL_LENGTH) }] })), /longer/);
  });

  it('rejects an empty detected code', () => {
    rejects(parseHostMessage(renderOf(aViewContent({ code: { code: '', reason: 'x' } }))), /code/);
  });

  it('accepts loading, error and notice messages and rejects bad levels', () => {
    assert.equal(parseHostMessage({ type: 'loading', id: 'a-1-1' }).ok, true);
    assert.equal(parseHostMessage({ type: 'error', id: 'a-1-1', message: 'Not found', retryable: true }).ok, true);
    assert.equal(parseHostMessage({ type: 'notice', level: 'info', text: 'Copied' }).ok, true);
    rejects(parseHostMessage({ type: 'notice', level: 'shout', text: 'x' }), /level/);
    rejects(parseHostMessage({ type: 'error', id: 'a-1-1', message: 'x' }), /retryable/);
    rejects(parseHostMessage({ type: 'loading', id: '' }), /empty/);
  });
});

describe('webview protocol: webview → host', () => {
  it('accepts every request the view sends', () => {
    const good = [
      { type: 'ready' },
      { type: 'retry' },
      { type: 'copyCode' },
      { type: 'copyId' },
      { type: 'allowRemoteImages' },
      { type: 'rendered', id: 'joe-1-1', tabs: ['html', 'raw'], blockedRemote: 2 },
      { type: 'openLink', url: 'https://acme.test/verify' },
      { type: 'saveAttachment', index: 3 },
    ];
    for (const m of good) assert.deepEqual(parseWebviewMessage(m), { ok: true, value: m });
  });

  it('drops fields it does not know', () => {
    assert.deepEqual(parseWebviewMessage({ type: 'ready', extra: '<script>' }), { ok: true, value: { type: 'ready' } });
  });

  it('rejects unknown types and non-objects', () => {
    rejects(parseWebviewMessage({ type: 'runCommand', command: 'workbench.action.quit' }), /unknown message type/);
    rejects(parseWebviewMessage('ready'), /object/);
    rejects(parseWebviewMessage(null), /object/);
  });

  it('rejects openLink without a usable url', () => {
    rejects(parseWebviewMessage({ type: 'openLink' }), /url/);
    rejects(parseWebviewMessage({ type: 'openLink', url: '' }), /empty/);
    rejects(parseWebviewMessage({ type: 'openLink', url: 42 }), /url/);
    rejects(parseWebviewMessage({ type: 'openLink', url: 'https://x.test/' + 'a'.repeat(MAX_URL_LENGTH) }), /longer/);
  });

  it('rejects saveAttachment with a bad index', () => {
    for (const index of [-1, 1.5, '0', NaN, Infinity, undefined]) {
      assert.equal(parseWebviewMessage({ type: 'saveAttachment', index }).ok, false, String(index));
    }
  });

  it('accepts the view\'s timing of a render and rejects a timing that is not four numbers', () => {
    const timing = { script: 1, received: 2, sanitized: 3, built: 4 };
    const ok = parseWebviewMessage({ type: 'rendered', id: 'a-1-1', tabs: ['html'], blockedRemote: 0, timing });
    assert.deepEqual(ok, { ok: true, value: { type: 'rendered', id: 'a-1-1', tabs: ['html'], blockedRemote: 0, timing } });
    rejects(parseWebviewMessage({ type: 'rendered', id: 'a-1-1', tabs: ['html'], blockedRemote: 0, timing: { ...timing, built: 'x' } }), /timing\.built/);
    rejects(parseWebviewMessage({ type: 'rendered', id: 'a-1-1', tabs: ['html'], blockedRemote: 0, timing: [1, 2] }), /timing/);
  });

  it('rejects rendered with unknown tabs', () => {
    rejects(parseWebviewMessage({ type: 'rendered', id: 'a-1-1', tabs: ['html', 'x'], blockedRemote: 0 }), /unknown tab/);
  });

  it('rejects rendered without a whole, non-negative count of blocked images', () => {
    for (const blockedRemote of [undefined, -1, 1.5, '2']) rejects(parseWebviewMessage({ type: 'rendered', id: 'a-1-1', tabs: ['html'], blockedRemote }), /blockedRemote/);
  });
});

describe('message view content built by the host', () => {
  function valid(state: ViewContent): ViewContent {
    const r = parseHostMessage(JSON.parse(JSON.stringify({ type: 'render', state })));
    assert.equal(r.ok, true, r.ok ? '' : r.error);
    return state;
  }

  it('marks the verification link (not the tracker or the List-Unsubscribe link) and the view accepts it', () => {
    const verify = 'https://app.acme.test/email/verify?token=Zx81Qk';
    const html = `<a href="https://click.acme.test/ls/click?upn=1">Offers</a> <a href="${verify}">E-Mail-Adresse bestätigen</a> <a href="https://acme.test/u/1">Abmelden</a>`;
    const message = fetchedEmail({ headers: { 'list-unsubscribe': '<https://acme.test/u/1>' }, parts: [{ headers: { 'content-type': 'text/html' }, body: html }] });
    const s = valid(buildViewContent({ domain: 'inbox.test', message, allowRemoteImages: false }));
    assert.deepEqual(s.verification, { url: verify, text: 'E-Mail-Adresse bestätigen', kind: 'verify-email', label: 'Verification link' });
    assert.equal(s.links.length, 3, 'every link is still listed');
    // A sign-in link is offered when there is no verify link; an SMS's link too.
    const login = valid(buildViewContent({ domain: 'private', message: fetchedSms({ parts: [{ body: 'Sign in: https://acme.test/magic-link?t=9' }] }), allowRemoteImages: false }));
    assert.equal(login.verification?.kind, 'magic-login');
    assert.equal(login.verification?.label, 'Sign-in link');
    assert.equal(valid(buildViewContent({ domain: 'private', message: fetchedSms(), allowRemoteImages: false })).verification, undefined);
  });

  it('refuses a marked verification link that is not one of the state\'s links, or of an unknown kind', () => {
    const base = aViewContent({ links: [{ url: 'https://a.test/verify' }] });
    const bad = [
      { ...base, verification: { url: 'https://evil.test/', kind: 'verify-email', label: 'Verification link' } },
      { ...base, verification: { url: 'https://a.test/verify', kind: 'pay-now', label: 'x' } },
    ];
    for (const state of bad) assert.equal(parseHostMessage({ type: 'render', state }).ok, false);
    assert.equal(parseHostMessage({ type: 'render', state: { ...base, verification: { url: 'https://a.test/verify', kind: 'verify-email', label: 'Verification link' } } }).ok, true);
    assert.deepEqual(parseWebviewMessage({ type: 'copyVerificationLink' }), { ok: true, value: { type: 'copyVerificationLink' } });
  });

  it('builds an email state the view accepts, with the HTML as received for the view to sanitize', () => {
    const message = fetchedEmail();
    const s = valid(buildViewContent({ domain: 'inbox.test', message, raw: 'Subject: x\r\n\r\nbody', allowRemoteImages: false }));
    assert.deepEqual(s.tabs, ['html', 'text', 'headers', 'links', 'attachments', 'raw']);
    assert.equal(s.header.to, 'joe@inbox.test');
    assert.equal(s.header.date, 'Sat, 22 Nov 2025 01:00:00 +0000');
    assert.ok(s.html);
    // What the view does with it is tested in a real browser (test/unit/webview-sanitize.test.ts).
    assert.equal(s.html.source, message.parts[1].body);
    assert.equal(s.html.remoteAllowed, false);
    assert.equal(s.html.truncated, false);
    assert.deepEqual(s.html.inlineImages, []);
    assert.deepEqual(s.links, [{ url: 'https://acme.test/verify?t=1', text: 'Verify' }]);
    assert.equal(s.code?.code, '482913');
  });

  it('says when remote images are allowed', () => {
    const s = valid(buildViewContent({ domain: 'inbox.test', message: fetchedEmail(), allowRemoteImages: true }));
    assert.equal(s.html?.remoteAllowed, true);
    assert.equal(s.tabs.includes('raw'), false, 'no raw tab without the raw source');
  });

  it('asks for theme colours only with the testInbox.themeSimpleMail setting', () => {
    assert.equal(valid(buildViewContent({ domain: 'inbox.test', message: fetchedEmail(), allowRemoteImages: false, themeSimpleMail: true })).html?.themeColors, true);
    assert.equal(valid(buildViewContent({ domain: 'inbox.test', message: fetchedEmail(), allowRemoteImages: false })).html?.themeColors, undefined);
  });

  it('cuts HTML longer than the view shows and says so', () => {
    const big = '<p>' + 'a'.repeat(MAX_HTML_SOURCE);
    const s = valid(buildViewContent({ domain: 'inbox.test', message: fetchedEmail({ parts: [{ headers: { 'content-type': 'text/html' }, body: big }] }), allowRemoteImages: false }));
    assert.equal(s.html?.truncated, true);
    assert.equal(s.html?.source.length, MAX_HTML_SOURCE);
  });

  it('sends the inline images the host fetched, and only data: raster images', () => {
    const gif = 'data:image/gif;base64,R0lGODlhAQABAAAAACw=';
    const inlineImages = new Map([
      ['logo@acme', gif],
      ['evil', 'http://evil.test/a.png'],
      ['svg', 'data:image/svg+xml;base64,PHN2Zz4='],
    ]);
    const s = valid(buildViewContent({ domain: 'private', message: fetchedEmail(), allowRemoteImages: false, inlineImages }));
    assert.deepEqual(s.html?.inlineImages, [['logo@acme', gif]]);
    assert.equal(s.header.to, 'joe', 'the private domain is not shown as an address');
  });

  it('lists attachments by their download index and skips attachment parts as bodies', () => {
    const message = fetchedEmail({
      parts: [
        { headers: { 'content-type': 'text/plain' }, body: 'See attached.' },
        { headers: { 'content-type': 'text/plain', 'content-disposition': 'attachment; filename="notes.txt"' }, body: 'not the body' },
      ],
    });
    const s = valid(
      buildViewContent({
        domain: 'inbox.test',
        message,
        allowRemoteImages: false,
        attachments: [{ filename: 'notes.txt', 'content-type': 'text/plain', size: 12, attachment_id: 1 }],
      }),
    );
    assert.equal(s.text?.text, 'See attached.');
    assert.deepEqual(s.attachments, [{ index: 1, filename: 'notes.txt', contentType: 'text/plain', size: 12 }]);
    assert.deepEqual(s.tabs, ['text', 'headers', 'links', 'attachments']);
  });

  it('lists attachments under their cleaned names: the name shown is the name saved', () => {
    const s = valid(
      buildViewContent({
        domain: 'inbox.test',
        message: fetchedEmail({ parts: [{ headers: { 'content-type': 'text/plain' }, body: 'x' }] }),
        allowRemoteImages: false,
        attachments: [
          { filename: 'invoice\u202Efdp.exe', 'content-type': 'application/octet-stream', size: 1, attachment_id: 0 },
          { filename: 'nul.txt. ', 'content-type': 'text/plain', size: 1, attachment_id: 1 },
          { filename: '', 'content-type': 'text/plain', size: 1, attachment_id: 2 },
        ],
      }),
    );
    assert.deepEqual(s.attachments.map((a) => a.filename), ['invoicefdp.exe', '_nul.txt', 'attachment-2']);
  });

  it('shows an email with no body parts as an empty text tab and says so', () => {
    const s = valid(buildViewContent({ domain: 'inbox.test', message: fetchedEmail({ parts: [] }), allowRemoteImages: false }));
    assert.equal(s.text?.text, '');
    assert.match(s.notes.join(' '), /no text part/);
  });

  it('builds an SMS state as a conversation with its code', () => {
    const s = valid(buildViewContent({ domain: 'private', message: fetchedSms(), raw: 'From: 15551234567\r\n\r\nYour Acme code: 7731.', allowRemoteImages: false }));
    assert.equal(s.kind, 'sms');
    assert.deepEqual(s.tabs, ['conversation', 'links', 'raw']);
    assert.deepEqual(s.sms, { from: '15551234567', to: '14155550100', body: 'Your Acme code: 7731. Do not share it.', time: 1763773200000, segments: 1, encoding: 'GSM-7' });
    assert.equal(s.code?.code, '7731');
    assert.equal(s.html, undefined);
  });

  it('cuts very long text and raw source and marks them truncated', () => {
    const long = 'x'.repeat(MAX_VIEW_TEXT + 10);
    const s = valid(buildViewContent({ domain: 'inbox.test', message: fetchedEmail({ parts: [{ headers: { 'content-type': 'text/plain' }, body: long }] }), raw: long, allowRemoteImages: false }));
    assert.equal(s.text?.truncated, true);
    assert.equal(s.text?.text.length, MAX_VIEW_TEXT);
    assert.equal(s.raw?.truncated, true);
  });

  it('never lists a javascript: or data: link', () => {
    const message = fetchedEmail({ parts: [{ headers: { 'content-type': 'text/html' }, body: '<a href="javascript:alert(1)">a</a><a href="data:text/html,x">b</a><a href="https://ok.test/">c</a>' }] });
    const s = valid(buildViewContent({ domain: 'inbox.test', message, allowRemoteImages: false }));
    assert.deepEqual(s.links.map((l) => l.url), ['https://ok.test/']);
  });
});

describe('message view listener', () => {
  it('takes messages only from a window of the view\'s own origin that is not the email frame', () => {
    const editorFrame = {};
    const emailFrame = {};
    const self = { origin: 'vscode-webview://abc' };
    assert.equal(isFromHost({ source: editorFrame, origin: 'vscode-webview://abc' }, self, [emailFrame]), true);
    assert.equal(isFromHost({ source: emailFrame, origin: 'vscode-webview://abc' }, self, [emailFrame]), false, 'the email frame');
    assert.equal(isFromHost({ source: editorFrame, origin: 'null' }, self, [emailFrame]), false, 'an opaque origin');
    assert.equal(isFromHost({ source: editorFrame, origin: 'vscode-webview://other' }, self, []), false, 'another webview');
    assert.equal(isFromHost({ source: null, origin: 'vscode-webview://abc' }, self, []), false, 'no source window (a port or worker)');
  });
});

describe('message panel helpers', () => {
  it('proposes attachment file names without paths or reserved characters', () => {
    assert.equal(cleanFileName('../../etc/passwd', 'x'), 'passwd');
    assert.equal(cleanFileName('C:\\Users\\me\\a<b>.pdf', 'x'), 'a_b_.pdf');
    assert.equal(cleanFileName('..', 'attachment-1'), 'attachment-1');
    assert.equal(cleanFileName('rep\u0000ort.pdf', 'x'), 'rep_ort.pdf');
  });

  it('finds the content ids an HTML body refers to', () => {
    assert.deepEqual([...referencedContentIds('<img src="cid:Logo@Acme"><div style="background:url(cid:bg)">')], ['logo@acme', 'bg']);
    assert.equal(contentIdOf({ filename: 'l.png', 'content-type': 'image/png', size: 1, attachment_id: 0, 'content-id': '<Logo@Acme>' }), 'logo@acme');
  });
});

describe('G13: the message view header and title, in both hosts, show mail text through core/inert.ts', () => {
  const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;
  it('drops bidi controls from the subject, sender, recipient, "Sent through", link text and title; controls become spaces', () => {
    const email = fetchedEmail({
      subject: 'Invoice\u202Egnp.exe\u2066 due',
      fromfull: '"Bank\u202E tnuocca" <no-reply@acme.test>',
      from: 'Bank\u202E tnuocca',
      headers: { subject: 'Invoice\u202Egnp.exe', date: 'Sat, 22 Nov 2025\u200F 01:00:00 +0000', 'x-test-inbox-api': 'Resend\u202E (POST /emails)' },
      parts: [{ headers: { 'content-type': 'text/html; charset=utf-8' }, body: '<a href="https://acme.test/verify?t=1">Verify\u202E liame</a>' }],
    });
    const state = buildViewContent({ domain: 'inbox.test', message: email, allowRemoteImages: false });
    for (const [k, v] of Object.entries(state.header)) assert.doesNotMatch(String(v), BIDI, `header.${k}`);
    assert.equal(state.header.subject, 'Invoicegnp.exe due');
    assert.doesNotMatch(viewTitle(state), BIDI);
    for (const l of state.links) assert.doesNotMatch(l.text ?? '', BIDI);
    const sms = buildViewContent({ domain: 'inbox.test', message: fetchedSms({ fromfull: '1555\u202E1234567' }), allowRemoteImages: false });
    assert.doesNotMatch(sms.header.from, BIDI);
    assert.doesNotMatch(sms.sms!.from, BIDI);
    assert.doesNotMatch(viewTitle(sms), BIDI);
    const broken = buildViewContent({ domain: 'inbox.test', message: fetchedEmail({ subject: 'two\nlines\u0007' }), allowRemoteImages: false });
    assert.equal(broken.header.subject, 'two lines ');
  });
});
