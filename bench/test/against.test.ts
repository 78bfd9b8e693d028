// The --against comparison: the verdict against the ref's own runs, and the ratio targets.
// Run with `npx mocha bench/test/*.test.ts` (not part of `npm test`).
import assert from 'node:assert/strict';
import { compareRow, formatAgainst } from '../against';
import { figure } from '../lib/report';

const rate = (value: number | undefined, name = 'HTTP inject, 32 in flight (32 conns)') => figure({ name, unit: 'req/s', value });
const latency = (value: number) => figure({ name: 'list p50', unit: 'ms', value });

describe('bench --against', () => {
  it('calls a rate better above both ref runs, same inside their range, WORSE below the worse', () => {
    assert.equal(compareRow(rate(120), [rate(100), rate(110)], '67641ac').verdict, 'better');
    assert.equal(compareRow(rate(105), [rate(100), rate(110)], '67641ac').verdict, 'same');
    assert.equal(compareRow(rate(99), [rate(100), rate(110)], '67641ac').verdict, 'WORSE');
  });

  it('reads a share done (files written by the window\'s end, %) as more is better', () => {
    const share = (value: number) => figure({ name: "SMTP files written by the window's end, 8 conns", unit: '%', value });
    assert.equal(compareRow(share(99), [share(40), share(55)], 'x').verdict, 'better');
    assert.equal(compareRow(share(10), [share(40), share(55)], 'x').verdict, 'WORSE');
  });

  it('reads a latency the other way round', () => {
    assert.equal(compareRow(latency(0.9), [latency(1), latency(1.2)], 'x').verdict, 'better');
    assert.equal(compareRow(latency(1.3), [latency(1), latency(1.2)], 'x').verdict, 'WORSE');
  });

  it('gives the ratio to the mean of the ref runs, their spread, and the ratio target of that ref', () => {
    const r = compareRow(rate(210), [rate(100), rate(110)], '67641ac');
    assert.equal(r.ratio, 2);
    assert.equal(r.spread, 10);
    assert.equal(r.target, '≥ 2× 67641ac: PASS');
    assert.equal(compareRow(rate(150), [rate(100), rate(100)], '67641ac').target, '≥ 2× 67641ac: MISS');
    assert.equal(compareRow(rate(150), [rate(100), rate(100)], 'abcdef0').target, undefined);
  });

  it('does not judge a figure of the machine', () => {
    const disk = (value: number) => figure({ name: 'disk: durable 4 KB files', unit: 'files/s', value, note: 'context: the fsync speed of this machine right now' });
    assert.equal(compareRow(disk(10), [disk(100), disk(110)], 'x').verdict, 'context');
    // A figure of ours whose note is context is still judged.
    const inject = (value: number) => figure({ name: 'HTTP inject, 32 in flight (32 conns)', unit: 'req/s', value, note: 'context: ours = 0.1× bare' });
    assert.equal(compareRow(inject(10), [inject(100), inject(110)], 'x').verdict, 'WORSE');
  });

  it('says SKIP when either side has no value, and prints every run', () => {
    const r = compareRow(rate(undefined), [rate(100), rate(110)], 'x');
    assert.equal(r.verdict, 'SKIP');
    const text = formatAgainst([r, compareRow(rate(105), [rate(100), undefined], 'x')], 'x', 2);
    assert.match(text, /x #1 +x #2/);
    assert.match(text, /100 +110/);
  });
});
