import assert from 'node:assert/strict';
import { parseDuration } from '../../src/core/duration';

describe('durations (serve --max-age, the wait parameter, --wait and the library timeout)', () => {
  it('reads a bare number as seconds and every unit from ms to weeks, decimals included', () => {
    const cases: Array<[string, number]> = [['30', 30_000], ['0.5', 500], ['500ms', 500], ['10s', 10_000], ['1.5m', 90_000], ['12h', 43_200_000], ['7d', 604_800_000], ['2w', 1_209_600_000], [' 10S ', 10_000], ['0', 0]];
    for (const [text, ms] of cases) assert.equal(parseDuration(text), ms, text);
  });

  it('refuses anything else', () => {
    for (const text of ['', 'soon', '-1s', '1y', '1e3', '10 s', '1.', '.5', '1234567890s', 'Infinity']) assert.equal(parseDuration(text), undefined, text);
  });
});
