// The one reader of the tools' inputs (src/api/toolInput.ts), which the MCP tools and the
// language-model tools share: each surface's field names, one rule.
import assert from 'node:assert/strict';
import { ApiError } from '../../src/api/errors';
import { readInbox, readLinkKind, readSince, readWaitSeconds } from '../../src/api/toolInput';
import { LINK_KINDS } from '../../src/core/clickKinds';

function rejects(f: () => unknown, field: string, message: RegExp): void {
  assert.throws(f, (e: unknown) => ApiError.is(e, 'invalid_input') && e.field === field && message.test(e.message));
}

describe('tool input reader', () => {
  it('reads a name, name@domain or a phone number, in the given domain else the fallback', () => {
    assert.deepEqual(readInbox({ inbox: ' Joe ' }, 'inbox.test'), { inbox: 'joe', domain: 'inbox.test' });
    assert.deepEqual(readInbox({ inbox: 'joe', domain: 'Example.COM' }, 'inbox.test'), { inbox: 'joe', domain: 'example.com' });
    assert.deepEqual(readInbox({ inbox: 'joe@other.test', domain: 'example.com' }, 'inbox.test'), { inbox: 'joe', domain: 'other.test' });
    assert.equal(readInbox({ inbox: '+15551234567' }, 'private').inbox, '15551234567');
  });

  it('refuses a missing, empty, bad or "*" inbox, naming the field', () => {
    rejects(() => readInbox({ inbox: undefined }, 'private'), 'inbox', /"inbox" is required/);
    rejects(() => readInbox({ inbox: '  ' }, 'private'), 'inbox', /must not be empty/);
    rejects(() => readInbox({ inbox: 'not an inbox!' }, 'private'), 'inbox', /inbox/);
    rejects(() => readInbox({ inbox: '*' }, 'private'), 'inbox', /one inbox/);
    rejects(() => readInbox({ inbox: 'joe', domain: 3 }, 'private'), 'domain', /"domain" must be a string/);
  });

  it('reads since as a message id, "now" or whole ms, from since or its alias, under each surface\'s names', () => {
    const mcp = { since: 'since', sinceMs: 'since_ms' };
    assert.equal(readSince({}, mcp), undefined);
    assert.equal(readSince({ since: ' NOW ' }, mcp), 'now');
    assert.equal(readSince({ since: 'joe-1-2' }, mcp), 'joe-1-2');
    assert.equal(readSince({ since: 1700000000000 }, mcp), 1700000000000);
    assert.equal(readSince({ sinceMs: 5, since: '5' }, mcp), 5);
    rejects(() => readSince({ sinceMs: 5, since: 'now' }, mcp), 'since_ms', /either "since" or "since_ms"/);
    rejects(() => readSince({ since: -1 }, mcp), 'since', /whole number/);
    rejects(() => readSince({ since: {} }, mcp), 'since', /message id/);
    assert.equal(readSince({ sinceMs: 1700000000000 }, { sinceMs: 'sinceMs' }), 1700000000000);
    rejects(() => readSince({ sinceMs: 1.5 }, { sinceMs: 'sinceMs' }), 'sinceMs', /"sinceMs" must be a whole number/);
  });

  it('reads a wait from 0 to its surface\'s most, 0 when absent', () => {
    assert.equal(readWaitSeconds(undefined, 'wait_seconds', 50), 0);
    assert.equal(readWaitSeconds(12.5, 'waitSeconds', 60), 12.5);
    rejects(() => readWaitSeconds(51, 'wait_seconds', 50, 'call again'), 'wait_seconds', /"wait_seconds" must be a number of seconds from 0 to 50 \(got 51\); call again\.$/);
    rejects(() => readWaitSeconds('5', 'waitSeconds', 60), 'waitSeconds', /waitSeconds/);
  });

  it('reads the link kinds of core/clickKinds.ts, any when absent', () => {
    assert.equal(readLinkKind(undefined), 'any');
    for (const k of Object.keys(LINK_KINDS)) assert.equal(readLinkKind(k), k);
    rejects(() => readLinkKind('unsubscribe'), 'kind', /"kind" must be one of verify, reset, login, any/);
  });
});
