// The message view names the API a message came through: the X-Test-Inbox-Api header
// the provider routes write, for an email from its headers and for an SMS from its raw source.
import assert from 'node:assert/strict';
import type { Message } from '../../src/core/wire';
import { buildViewContent } from '../../src/webview-ui/viewContent';
import { parseHostMessage } from '../../src/shared/viewProtocol';

const email: Message = {
  kind: 'email',
  id: 'ann-1-1',
  fromfull: 'Acme <no-reply@acme.test>',
  from: 'Acme',
  to: 'ann',
  subject: 'Your code is 481516',
  time: 1_700_000_000_000,
  seconds_ago: 1,
  headers: { from: 'Acme <no-reply@acme.test>', 'x-test-inbox-api': 'Resend (POST /emails)' },
  parts: [{ headers: { 'content-type': 'text/plain' }, body: 'Your code is 481516' }],
} as Message;

describe('message view: the API a message came through', () => {
  it('an email names it from its X-Test-Inbox-Api header, and the view protocol carries it', () => {
    const state = buildViewContent({ domain: 'inbox.test', message: email, allowRemoteImages: false });
    assert.equal(state.header.via, 'Resend (POST /emails)');
    const parsed = parseHostMessage(JSON.parse(JSON.stringify({ type: 'render', state })));
    assert.ok(parsed.ok);
    assert.equal(parsed.ok && parsed.value.type === 'render' ? parsed.value.state.header.via : undefined, 'Resend (POST /emails)');
  });

  it('an SMS names it from the header block of its raw source (folded lines unfolded); a message without it names none', () => {
    const sms = { kind: 'sms', id: '15550100777-1-1', fromfull: 'Acme', to: '15550100777', subject: 'Your Acme verification code is: 123456', time: 1, seconds_ago: 1, parts: [{ body: 'Your Acme verification code is: 123456' }] } as unknown as Message;
    const raw = 'From: Acme\r\nX-Test-Inbox-Api: Twilio Verify (POST\r\n /v2/Services/VA00/Verifications)\r\nSubject: x\r\n\r\nX-Test-Inbox-Api: in the body, not a header\r\n';
    assert.equal(buildViewContent({ domain: 'inbox.test', message: sms, raw, allowRemoteImages: false }).header.via, 'Twilio Verify (POST /v2/Services/VA00/Verifications)');
    assert.equal(buildViewContent({ domain: 'inbox.test', message: sms, raw: 'From: Acme\r\n\r\nX-Test-Inbox-Api: body\r\n', allowRemoteImages: false }).header.via, undefined);
    assert.equal(buildViewContent({ domain: 'inbox.test', message: { ...email, headers: {} } as Message, allowRemoteImages: false }).header.via, undefined);
  });
});
