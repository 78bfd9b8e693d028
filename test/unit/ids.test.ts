import assert from 'node:assert/strict';
import { formatMessageId, inboxLabel, inboxNameProblem, inboxOfName, isPhoneInbox, MAX_MESSAGE_ID_LENGTH, messageIdProblem, normalizeInbox, parseMessageId } from '../../src/core/ids';

describe('ids', () => {
  it('parses a message id whose inbox contains hyphens', () => {
    assert.deepEqual(parseMessageId('sign-up-test-1763776000-42'), { inbox: 'sign-up-test', seconds: 1763776000, counter: 42 });
    assert.equal(parseMessageId(formatMessageId('a', 1, 2))?.inbox, 'a');
  });

  it('rejects ids that are not <inbox>-<number>-<number>', () => {
    for (const bad of ['', 'abc', 'abc-1', 'abc-x-1', '../x-1-2', '-1-2']) assert.equal(parseMessageId(bad), undefined, bad);
  });

  it('accepts every message id a server may list that stays inside one path segment', () => {
    for (const ok of ['bill-1770915939-0125389591012', 'joe-1-2', 'opaque token 7', 'ü-1', 'x'.repeat(MAX_MESSAGE_ID_LENGTH)]) assert.equal(messageIdProblem(ok), undefined, ok);
    assert.match(messageIdProblem('') ?? '', /empty/);
    assert.match(messageIdProblem('x'.repeat(MAX_MESSAGE_ID_LENGTH + 1)) ?? '', /longer/);
    for (const path of ['..', '.', 'a/b', 'a\\b']) assert.match(messageIdProblem(path) ?? '', /path/, path);
    assert.match(messageIdProblem('a\nb') ?? '', /control/);
  });

  it('names the problem with a bad inbox name', () => {
    assert.match(inboxNameProblem('../etc') ?? '', /path/);
    assert.match(inboxNameProblem('a\u0000b') ?? '', /control/);
    assert.match(inboxNameProblem('x'.repeat(65)) ?? '', /longer/);
    assert.equal(inboxNameProblem('joe.bloggs+signup'), undefined);
  });

  it('treats digits-only inboxes as phone inboxes', () => {
    assert.equal(isPhoneInbox('14155550100'), true);
    assert.equal(isPhoneInbox('joe'), false);
    assert.equal(isPhoneInbox('+14155550100'), false);
  });

  it('reads a phone number written with + (E.164, separators allowed) as the phone inbox of its digits, and nothing else', () => {
    for (const written of ['+14155550100', ' +14155550100 ', '+1 (415) 555-0100', '+1.415.555.0100']) {
      assert.equal(inboxOfName(written), '14155550100', written);
      assert.equal(normalizeInbox(written), '14155550100', written);
    }
    // Not a phone number: unchanged (normalizeInbox only lowercases and trims).
    for (const name of ['14155550100', 'joe+signup', '+joe', '+12', '+1-415-555-0100x7', 'Joe']) assert.equal(inboxOfName(name), name, name);
    assert.equal(normalizeInbox(' Joe+Signup '), 'joe+signup');
    assert.equal(normalizeInbox('+12'), '+12');
  });
});

describe('inboxLabel', () => {
  it('names an inbox as messages to people do: name@domain, a phone inbox bare, PRIVATE_DOMAIN as every domain', () => {
    assert.equal(inboxLabel('ann', 'inbox.test'), 'ann@inbox.test');
    assert.equal(inboxLabel('15555550123', 'inbox.test'), '15555550123');
    assert.equal(inboxLabel('ann', 'private'), 'ann (every domain)');
  });
});
