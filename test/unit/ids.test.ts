import assert from 'node:assert/strict';
import { formatMessageId, inboxNameProblem, isPhoneInbox, parseMessageId } from '../../src/core/ids';

describe('ids', () => {
  it('parses a message id whose inbox contains hyphens', () => {
    assert.deepEqual(parseMessageId('sign-up-test-1763776000-42'), { inbox: 'sign-up-test', seconds: 1763776000, counter: 42 });
    assert.equal(parseMessageId(formatMessageId('a', 1, 2))?.inbox, 'a');
  });

  it('rejects ids that are not <inbox>-<number>-<number>', () => {
    for (const bad of ['', 'abc', 'abc-1', 'abc-x-1', '../x-1-2', '-1-2']) assert.equal(parseMessageId(bad), undefined, bad);
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
});
