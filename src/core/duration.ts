// The one duration syntax of Test Inbox: `serve --max-age`, the `wait` parameter of the list,
// code and link routes, and the `--wait` / `timeout` of the CLI's test commands and the
// library. A number with an optional unit; a bare number is seconds.

/** Milliseconds per unit. */
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** Up to 9 whole digits and 9 decimals: far beyond any sensible duration, and bounds the input read. */
const DURATION_RE = /^([0-9]{1,9}(?:\.[0-9]{1,9})?)(ms|s|m|h|d|w)?$/;

/** What a duration looks like, for error messages. */
export const DURATION_HINT = 'a number of seconds or a duration such as 500ms, 10s, 1m, 12h, 7d or 2w';

/**
 * Milliseconds of `text` (`30`, `0.5`, `500ms`, `10s`, `1.5m`, `12h`, `7d`, `2w`; case and
 * surrounding space ignored), rounded to a whole millisecond; undefined when it is not a
 * duration.
 */
export function parseDuration(text: string): number | undefined {
  const m = DURATION_RE.exec(text.trim().toLowerCase());
  if (!m) return undefined;
  const ms = Math.round(Number(m[1]) * UNIT_MS[m[2] ?? 's']);
  return Number.isSafeInteger(ms) ? ms : undefined;
}
