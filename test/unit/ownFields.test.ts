// The filter that keeps X-Test-Inbox-* header fields the server's own (src/server/ownFields.ts),
// fed the same message in chunks split at every byte.
import assert from 'node:assert/strict';
import { OwnFieldFilter } from '../../src/server/ownFields';

function run(message: string, cuts: number[]): string {
  const f = new OwnFieldFilter();
  const bytes = Buffer.from(message);
  const out: Buffer[] = [];
  let at = 0;
  for (const c of [...cuts, bytes.length]) {
    out.push(f.push(bytes.subarray(at, c)));
    at = c;
  }
  out.push(f.end());
  return Buffer.concat(out).toString();
}

describe('OwnFieldFilter', () => {
  const message = 'From: a@acme.test\r\nx-TEST-inbox-Api: Resend\r\n (POST /emails)\r\nX-Test-Inbox: not the prefix\r\nX-Test-Inboxes: kept\r\nSubject: s\r\n\tfolded\r\nX-Test-Inbox-Template: t\r\n\r\nX-Test-Inbox-Api: body\r\n';
  const kept = 'From: a@acme.test\r\nX-Test-Inbox: not the prefix\r\nX-Test-Inboxes: kept\r\nSubject: s\r\n\tfolded\r\n\r\nX-Test-Inbox-Api: body\r\n';

  it('drops the fields and their continuation lines from the header block only, wherever the chunks are cut', () => {
    for (let i = 0; i <= message.length; i++) assert.equal(run(message, [i]), kept, `cut at ${i}`);
    assert.equal(run(message, Array.from({ length: message.length }, (_, i) => i)), kept, 'a byte at a time');
  });

  it('takes LF line ends, a message without a body, and a last line without its end', () => {
    assert.equal(run(message.replace(/\r\n/g, '\n'), [7]), kept.replace(/\r\n/g, '\n'));
    assert.equal(run('Subject: s\r\nX-Test-Inbox-Api: x', []), 'Subject: s\r\n');
    assert.equal(run('Subject: s\r\nX-T', []), 'Subject: s\r\nX-T');
  });
});
