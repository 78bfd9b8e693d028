// Relative times for tree descriptions ("5 min ago"). Pure.

const MINUTE = 60;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Past a week a date says more than "23 d ago". */
const WEEK = 7 * DAY;
/** Under this the message is "just now": clock skew between sender and us is seconds. */
const JUST_NOW = 45;

/** `time` and `now` in ms since the epoch. */
export function relativeTime(time: number, now: number): string {
  const s = Math.round((now - time) / 1000);
  if (s < JUST_NOW) return 'just now';
  if (s < HOUR) return `${Math.max(1, Math.round(s / MINUTE))} min ago`;
  if (s < DAY) return `${Math.floor(s / HOUR)} h ago`;
  if (s < WEEK) return `${Math.floor(s / DAY)} d ago`;
  return new Date(time).toISOString().slice(0, 10);
}

/** Absolute time for tooltips, in UTC so tests and screenshots agree. */
export function absoluteTime(time: number): string {
  return new Date(time).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}
