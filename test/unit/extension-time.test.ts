import assert from 'node:assert/strict';
import { absoluteTime, relativeTime } from '../../src/extension/util/time';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);

describe('extension relative time', () => {
  it('says "just now" for the first seconds', () => {
    assert.equal(relativeTime(NOW - 10_000, NOW), 'just now');
    assert.equal(relativeTime(NOW + 5_000, NOW), 'just now');
  });
  it('counts minutes, hours and days', () => {
    assert.equal(relativeTime(NOW - 5 * 60_000, NOW), '5 min ago');
    assert.equal(relativeTime(NOW - 3 * 3600_000 - 60_000, NOW), '3 h ago');
    assert.equal(relativeTime(NOW - 2 * 86_400_000, NOW), '2 d ago');
  });
  it('shows a date beyond a week', () => {
    assert.equal(relativeTime(NOW - 30 * 86_400_000, NOW), '2026-10-23');
  });
  it('formats absolute times in UTC', () => {
    assert.equal(absoluteTime(NOW), '2026-11-22 12:00:00 UTC');
  });
});
