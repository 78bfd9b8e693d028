// The bench's own helpers: percentiles, PASS/MISS decisions, the table, the store copy.
// Run with `npx mocha bench/test/*.test.ts` (not part of `npm test`).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { figure, formatTable } from '../lib/report';
import { median, percentile } from '../lib/stats';
import { copyStore, fixtureRecipient, BIG_INBOX, STORE_SPECS } from '../lib/store-fixture';

describe('bench report helpers', () => {
  it('takes nearest-rank percentiles of a sorted array', () => {
    const xs = Array.from({ length: 100 }, (_, i) => i + 1);
    assert.equal(percentile(xs, 50), 50);
    assert.equal(percentile(xs, 99), 99);
    assert.equal(percentile(xs, 100), 100);
    assert.equal(percentile(xs, 0), 1);
    assert.equal(percentile([7], 99), 7);
    assert.ok(Number.isNaN(percentile([], 50)));
    assert.equal(median([5, 1, 3]), 3);
  });

  it('passes a figure that meets its target and misses one that does not, in both directions', () => {
    assert.equal(figure({ name: 'a', unit: 'x', value: 10, target: { op: '>=', value: 10, label: '' } }).result, 'PASS');
    assert.equal(figure({ name: 'a', unit: 'x', value: 9.9, target: { op: '>=', value: 10, label: '' } }).result, 'MISS');
    assert.equal(figure({ name: 'a', unit: 'x', value: 2, target: { op: '<=', value: 2, label: '' } }).result, 'PASS');
    assert.equal(figure({ name: 'a', unit: 'x', value: 2.1, target: { op: '<=', value: 2, label: '' } }).result, 'MISS');
  });

  it('skips a figure that could not be measured rather than passing it', () => {
    assert.equal(figure({ name: 'a', unit: 'x', value: undefined, target: { op: '>=', value: 1, label: '' } }).result, 'SKIP');
    assert.equal(figure({ name: 'a', unit: 'x', value: NaN, target: { op: '<=', value: 1, label: '' } }).result, 'SKIP');
    assert.equal(figure({ name: 'a', unit: 'x', value: 1, target: { op: '>=', value: NaN, label: '' } }).result, 'SKIP');
    assert.equal(figure({ name: 'a', unit: 'x', value: 1 }).result, 'INFO');
  });

  it('prints each figure beside its reference, target and result', () => {
    const t = formatTable([
      figure({ name: 'SMTP', unit: 'msg/s', value: 1234.4, reference: { name: 'MailDev', value: 999 }, target: { op: '>=', value: 999, label: '≥ MailDev' } }),
      figure({ name: 'list p50', unit: 'ms', value: 3.25, target: { op: '<=', value: 2, label: '≤ 2 ms' }, note: 'slow' }),
    ]);
    const lines = t.split('\n');
    assert.match(lines[2], /^SMTP\s+1,234 msg\/s\s+MailDev: 999 msg\/s\s+≥ MailDev\s+PASS$/);
    assert.match(lines[3], /^list p50\s+3\.25 ms\s+≤ 2 ms\s+MISS$/);
    assert.match(t, /\* list p50: slow/);
  });

  it('puts half of each fixture store into the big inbox and the rest 1,000 per inbox', () => {
    for (const spec of Object.values(STORE_SPECS)) {
      const counts = new Map<string, number>();
      for (let i = 0; i < spec.messages; i++) {
        const to = fixtureRecipient(i, spec.otherInboxes);
        counts.set(to, (counts.get(to) ?? 0) + 1);
      }
      const big = [...counts].find(([to]) => to.startsWith(`${BIG_INBOX}@`))?.[1];
      assert.equal(big, spec.bigInboxMessages, spec.name);
      assert.equal(counts.size, spec.otherInboxes + 1, spec.name);
      for (const [to, n] of counts) if (!to.startsWith(`${BIG_INBOX}@`)) assert.equal(n, 1000, `${spec.name} ${to}`);
    }
  });

  it('copies a store with message files linked and every other file copied', () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'bench-copy-test-'));
    try {
      const src = path.join(root, 'src');
      mkdirSync(path.join(src, 'inbox.test', 'big', 'new'), { recursive: true });
      mkdirSync(path.join(src, 'inbox.test', 'big', 'tmp'), { recursive: true });
      writeFileSync(path.join(src, 'inbox.test', 'big', 'new', 'm1.eml'), 'Subject: x\r\n\r\nbody\r\n');
      writeFileSync(path.join(src, 'journal'), 'line 1\n');
      const dst = path.join(root, 'dst');
      copyStore(src, dst);
      const eml = path.join('inbox.test', 'big', 'new', 'm1.eml');
      assert.equal(statSync(path.join(dst, eml)).ino, statSync(path.join(src, eml)).ino, 'message file not linked');
      assert.ok(statSync(path.join(dst, 'inbox.test', 'big', 'tmp')).isDirectory());
      // A server appending to its journal in the copy must not change the cache.
      writeFileSync(path.join(dst, 'journal'), 'line 2\n', { flag: 'a' });
      assert.equal(readFileSync(path.join(src, 'journal'), 'utf8'), 'line 1\n');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
