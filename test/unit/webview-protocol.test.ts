import assert from 'node:assert/strict';
import {
  MAX_URL_LENGTH,
  parseHostMessage,
  parseWebviewMessage,
  type HostMessage,
  type ViewState,
} from '../../src/webview/protocol';

function aViewState(overrides: Partial<ViewState> = {}): ViewState {
  return {
    id: 'joe-1763776000-1',
    kind: 'email',
    header: { from: 'Acme <no-reply@acme.test>', to: 'joe', subject: 'Your code', time: 1763776000000, id: 'joe-1763776000-1', domain: 'inbox.test' },
    tabs: ['html', 'text', 'headers', 'links', 'attachments', 'raw'],
    html: { srcdoc: '<!DOCTYPE html><p>x</p>', blockedRemote: 1, remoteAllowed: false, truncated: false },
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
    const msg: HostMessage = { type: 'render', state: aViewState() };
    const r = parseHostMessage(JSON.parse(JSON.stringify(msg)));
    assert.deepEqual(r, { ok: true, value: msg });
  });

  it('accepts an SMS render with a conversation tab', () => {
    const state = aViewState({
      id: '14155550100-1763776000-2',
      kind: 'sms',
      header: { from: '15551234567', to: '14155550100', subject: 'SMS', time: 1, id: '14155550100-1763776000-2', domain: 'inbox.test' },
      tabs: ['conversation', 'links', 'raw'],
      html: undefined,
      text: undefined,
      sms: { from: '15551234567', to: '14155550100', body: 'Code 4242', time: 1 },
    });
    assert.equal(parseHostMessage(JSON.parse(JSON.stringify(renderOf(state)))).ok, true);
  });

  it('rejects values that are not messages', () => {
    for (const bad of [null, undefined, 42, 'render', [], { type: 'explode' }, {}]) {
      assert.equal(parseHostMessage(bad).ok, false, JSON.stringify(bad));
    }
  });

  it('rejects a render whose state has the wrong kind', () => {
    rejects(parseHostMessage(renderOf({ ...aViewState(), kind: 'fax' })), /state\.kind/);
  });

  it('rejects a render naming a tab it has no content for', () => {
    rejects(parseHostMessage(renderOf(aViewState({ html: undefined }))), /html/);
    rejects(parseHostMessage(renderOf(aViewState({ tabs: ['conversation'] }))), /sms/);
  });

  it('rejects unknown and duplicate tabs', () => {
    rejects(parseHostMessage(renderOf({ ...aViewState(), tabs: ['html', 'evil'] })), /unknown tab/);
    rejects(parseHostMessage(renderOf(aViewState({ tabs: ['text', 'text'] }))), /twice/);
    rejects(parseHostMessage(renderOf(aViewState({ tabs: [] }))), /empty/);
  });

  it('rejects headers that are not name/value string pairs', () => {
    rejects(parseHostMessage(renderOf({ ...aViewState(), headers: [['a']] })), /headers\[0\]/);
    rejects(parseHostMessage(renderOf({ ...aViewState(), headers: [['a', 1]] })), /headers\[0\]/);
  });

  it('rejects attachments with a negative or fractional index', () => {
    rejects(parseHostMessage(renderOf({ ...aViewState(), attachments: [{ index: -1, filename: 'a', contentType: 'x', size: 1 }] })), /index/);
    rejects(parseHostMessage(renderOf({ ...aViewState(), attachments: [{ index: 0.5, filename: 'a', contentType: 'x', size: 1 }] })), /integer/);
  });

  it('rejects a state whose header id differs from its id', () => {
    const s = aViewState();
    rejects(parseHostMessage(renderOf({ ...s, header: { ...s.header, id: 'other-1-1' } })), /differs/);
  });

  it('rejects html with a non-boolean remoteAllowed', () => {
    const s = aViewState();
    rejects(parseHostMessage(renderOf({ ...s, html: { ...s.html, remoteAllowed: 'yes' } })), /remoteAllowed/);
  });

  it('rejects links that are not {url, text?} objects', () => {
    rejects(parseHostMessage(renderOf({ ...aViewState(), links: ['https://a.test'] })), /links\[0\] must be an object/);
    rejects(parseHostMessage(renderOf({ ...aViewState(), links: [{ url: 'https://a.test', text: 5 }] })), /links\[0\]\.text/);
    rejects(parseHostMessage(renderOf({ ...aViewState(), links: [{ url: 'https://a.test/' + 'a'.repeat(MAX_URL_LENGTH) }] })), /longer/);
  });

  it('rejects an empty detected code', () => {
    rejects(parseHostMessage(renderOf(aViewState({ code: { code: '', reason: 'x' } }))), /code/);
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
      { type: 'rendered', id: 'joe-1-1', tabs: ['html', 'raw'] },
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

  it('rejects rendered with unknown tabs', () => {
    rejects(parseWebviewMessage({ type: 'rendered', id: 'a-1-1', tabs: ['html', 'x'] }), /unknown tab/);
  });
});
