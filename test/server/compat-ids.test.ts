// The drop-in APIs' pure parts: the compat ID (one message across every domain and inbox, safe
// in a URL path) and Mailpit's query syntax mapped onto the one search language.
import assert from 'node:assert/strict';
import { compatId, storeIdOf } from '../../src/server/http/compat/ids';
import { mailboxOf } from '../../src/server/http/compat/inbucket';
import { CompatQueryError, parseMailpitQuery } from '../../src/server/http/compat/query';

describe('compat: IDs, mailbox names and Mailpit queries', () => {
  it('a compat ID is the store id when it is path-safe, else ~base64url; both read back, anything else names nothing', () => {
    assert.equal(compatId('ann-1700000000-1'), 'ann-1700000000-1');
    for (const id of ['a#b-1700000000-2', 'x?y%z-1-3', 'o\'brien+tag-5-6', '~tilde-1-1', 'A.B_c-1-1'.toLowerCase()]) {
      const c = compatId(id);
      assert.match(c, /^[A-Za-z0-9._~-]+$/, c);
      assert.equal(encodeURIComponent(c), c);
      assert.equal(storeIdOf(c), id);
    }
    assert.equal(storeIdOf('ANN-1700000000-1'), 'ann-1700000000-1');
    assert.equal(storeIdOf('latest'), undefined);
    assert.equal(storeIdOf('~' + Buffer.from('ann-1-1').toString('base64url')), undefined, 'a safe id is never encoded, so its encoding names nothing');
    assert.equal(storeIdOf('~!!'), undefined);
  });

  it("Inbucket's default mailbox: local part, lower-cased, no +tag; a full address the same", () => {
    assert.equal(mailboxOf('Ann'), 'ann');
    assert.equal(mailboxOf('Ann+Signup@Example.COM'), 'ann');
    assert.equal(mailboxOf('bob@x.test'), 'bob');
  });

  it("Mailpit's syntax maps onto the search core's terms; is:read/is:unread are the read marks; other filters are refused", () => {
    const now = Date.UTC(2026, 10, 28);
    assert.deepEqual(parseMailpitQuery('to:ann@inbox.test', now).terms, [{ field: 'to', value: 'ann@inbox.test', negated: false }]);
    assert.deepEqual(parseMailpitQuery('from:"Sender Person" subject:"Your  Code" hello', now).terms, [
      { field: 'from', value: 'sender person', negated: false },
      { field: 'subject', value: 'your code', negated: false },
      { field: 'text', value: 'hello', negated: false },
    ]);
    assert.deepEqual(parseMailpitQuery('!has:attachment -subject:x', now).terms, [
      { field: 'has', value: 'attachment', negated: true },
      { field: 'subject', value: 'x', negated: true },
    ]);
    assert.deepEqual(parseMailpitQuery('is:read', now), { terms: [], read: true });
    assert.deepEqual(parseMailpitQuery('-is:read to:a', now).read, false);
    assert.equal(parseMailpitQuery('is:read is:unread', now).nothing, true);
    assert.deepEqual(parseMailpitQuery('', now), { terms: [] });
    assert.equal(parseMailpitQuery('after:2026-11-01', now).terms[0].field, 'after');
    for (const q of ['tag:x', 'cc:a', 'message-id:x', 'has:inline', 'larger:1M']) assert.throws(() => parseMailpitQuery(q, now), CompatQueryError, q);
  });
});
