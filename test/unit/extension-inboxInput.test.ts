import assert from 'node:assert/strict';
import { ExtensionError } from '../../src/extension/errors';
import { checkInboxName, parseInboxInput } from '../../src/extension/inboxInput';

describe('extension inbox input', () => {
  it('lower-cases and trims inbox names', () => {
    assert.equal(checkInboxName('  Joe.Bloggs+Signup '), 'joe.bloggs+signup');
  });

  it('refuses names that are paths, empty, too long or the wildcard, saying why', () => {
    for (const [bad, why] of [['../etc', /path/], ['', /empty/], ['x'.repeat(65), /longer/], ['*', /not "\*"/], ['a b', /may contain only/]] as const) {
      assert.throws(() => checkInboxName(bad), (e: unknown) => ExtensionError.is(e, 'invalid_input') && why.test(e.message), bad);
    }
  });

  it('splits name@domain and falls back to the given domain', () => {
    assert.deepEqual(parseInboxInput('Alice@Example.TEST', 'inbox.test'), { inbox: 'alice', domain: 'example.test' });
    assert.deepEqual(parseInboxInput('bob', 'inbox.test'), { inbox: 'bob', domain: 'inbox.test' });
    assert.deepEqual(parseInboxInput('15551234567', 'private'), { inbox: '15551234567', domain: 'private' });
  });

  it('reads a phone number written with + as its phone inbox (the LM tools and commands take it as the CLI does)', () => {
    assert.deepEqual(parseInboxInput('+15551234567', 'private'), { inbox: '15551234567', domain: 'private' });
    assert.deepEqual(parseInboxInput(' +1 (555) 123-4567 ', 'inbox.test'), { inbox: '15551234567', domain: 'inbox.test' });
  });

  it('refuses a domain that is not a host name', () => {
    assert.throws(() => parseInboxInput('a@not_a_domain', 'inbox.test'), /not a usable domain/);
  });
});
