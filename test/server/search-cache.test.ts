// The search's cache of message bodies (server/http/api/search.ts): it keeps the newest.
import { strict as assert } from 'node:assert';
import { SearchBodyCache } from '../../src/server/http/api/searchBodyCache';

describe('search body cache', () => {
  const body = (chars: number) => ({ text: 'x'.repeat(chars), attachment: false });
  const meta = (n: number) => ({ id: `joe-${1_700_000_000 + n}-${n}`, time: n });

  it('keeps the newest messages when full, however they were read', () => {
    const cache = new SearchBodyCache(1000);
    // A scan newest first, longer than the cache holds.
    for (let n = 100; n >= 1; n--) cache.set(meta(n), body(50));
    assert.ok(cache.get(meta(100).id), 'the newest is kept');
    assert.equal(cache.get(meta(1).id), undefined, 'the oldest is not');
    let kept = 0;
    for (let n = 1; n <= 100; n++) if (cache.get(meta(n).id)) kept++;
    assert.ok(kept >= 10 && kept <= 20, `kept ${kept}`);
    // The next scan finds the newest ones again: the same scan never evicts what it reads first.
    for (let n = 100; n > 100 - kept; n--) assert.ok(cache.get(meta(n).id), `message ${n}`);
    // A newer message still gets in; an older one than every kept does not.
    cache.set(meta(200), body(50));
    assert.ok(cache.get(meta(200).id));
    cache.set(meta(0), body(50));
    assert.equal(cache.get(meta(0).id), undefined);
  });

  it('keeps no body larger than an eighth of it', () => {
    const cache = new SearchBodyCache(800);
    cache.set(meta(1), body(101));
    assert.equal(cache.get(meta(1).id), undefined);
    cache.set(meta(2), body(100));
    assert.ok(cache.get(meta(2).id));
  });
});
