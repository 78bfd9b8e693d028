import assert from 'node:assert/strict';
import { noticeFor } from '../../src/extension/notify';
import type { MessageSummary } from '../../src/core/wire';

const msg = (to: string, subject: string, time: number): MessageSummary => ({ subject, domain: 'inbox.test', from: 'a@b.test', id: `${to}-${time}-1`, to, time, seconds_ago: 0 });
const watched = (names: string[]) => (ref: { domain: string; inbox: string }) => ref.domain === 'inbox.test' && names.includes(ref.inbox);

describe('extension new-mail notification', () => {
  it('says nothing for mail outside the watched inboxes', () => {
    assert.equal(noticeFor({ domain: 'inbox.test', msgs: [msg('other', 'x', 1)] }, watched(['signup'])), undefined);
  });

  it('names the newest watched message and counts the others', () => {
    const n = noticeFor({ domain: 'inbox.test', msgs: [msg('signup', 'older', 1), msg('Signup', 'newest', 3), msg('other', 'ignored', 5)] }, watched(['signup']));
    assert.equal(n?.summary.subject, 'newest');
    assert.equal(n?.inbox, 'signup');
    assert.equal(n?.text, 'New message in signup: newest (and 1 more)');
  });

  it('shows a placeholder for an empty subject', () => {
    assert.equal(noticeFor({ domain: 'inbox.test', msgs: [msg('signup', '  ', 1)] }, watched(['signup']))?.text, 'New message in signup: (no subject)');
  });
});
