// The test library: `const { waitForCode } = require('test-inbox')` in a Playwright, Cypress or
// Jest test. Every function opens its own connection and closes it, so there is nothing to
// set up or dispose. Public types: ./types.ts (the package's .d.ts).
import { parseTotpInput } from '../core/totpInput';
import { MAX_TOTP_DIGITS, MAX_TOTP_PERIOD, MIN_TOTP_DIGITS, TOTP_ALGORITHMS, totpAt } from '../core/totp';
import { connect, splitInbox, toTestInboxError, type Connection } from './connection';
import { sendMailDirect, sendMailOn, sendSmsOn } from './send';
import type { ChaosRule, ChaosRules, CodeResult, ConnectionOptions, LinkOptions, LinkResult, MailOptions, MailResult, SmsOptions, SmsResult, TotpOptions, TotpResult, WaitOptions } from './types';
import { TestInboxError } from './types';
import { waitForCodeOn, waitForLinkOn } from './wait';
import { addChaosOn } from './chaos';

export * from './types';

async function withConnection<T>(o: ConnectionOptions | undefined, run: (c: Connection) => Promise<T>): Promise<T> {
  const conn = await connect(o ?? {});
  try {
    return await run(conn);
  } catch (e) {
    throw toTestInboxError(e);
  } finally {
    await conn.close();
  }
}

/**
 * The one-time code of the newest message of `inbox` (`name` or `name@domain`) received after
 * `since`, waiting up to `timeout` for it. Rejects with a TestInboxError `timeout` when none
 * arrives.
 */
export function waitForCode(inbox: string, options?: WaitOptions): Promise<CodeResult> {
  return withConnection(options, (c) => waitForCodeOn(c, inbox, options ?? {}));
}

/** The first link of `kind` (default `any`: verify, reset or login) of the newest such message after `since`. */
export function waitForLink(inbox: string, options?: LinkOptions): Promise<LinkResult> {
  return withConnection(options, (c) => waitForLinkOn(c, inbox, options ?? {}));
}

/** Deletes every message of `inbox`; resolves the number deleted. */
export function clearInbox(inbox: string, options?: ConnectionOptions): Promise<number> {
  return withConnection(options, async (c) => {
    const { inbox: name, domain } = splitInbox(inbox, c.domain);
    return (await c.api.clearInbox(domain, name, { signal: options?.signal })).count;
  });
}

/** Sends an SMS through the server's Twilio-compatible API; it lands in the inbox of the digits of `to`. */
export function sendSms(options: SmsOptions): Promise<SmsResult> {
  return withConnection(options, (c) => sendSmsOn(c, options, process.env));
}

/** Sends an email: over SMTP to a Test Inbox server, through the inject API to a hosted service. */
export function sendMail(options: MailOptions): Promise<MailResult> {
  return sendMailDirect(options, process.env) ?? withConnection(options, (c) => sendMailOn(c, options, process.env));
}

/**
 * Failures on demand (docs/chaos.md): adds fault rules to the Test Inbox server and answers a
 * handle whose `remove()` takes away these rules and no other, so tests that run in parallel
 * against one server never undo each other's. Rules also end by themselves (`ttl`, default 10
 * minutes). Example: `const faults = await chaos({ surface: 'resend', match: { recipient:
 * 'ann@inbox.test' }, fault: { status: 429, retry_after: 2 } }); … await faults.remove();`
 */
export function chaos(rules: ChaosRule | readonly ChaosRule[], options?: ConnectionOptions): Promise<ChaosRules> {
  return withConnection(options, (c) => addChaosOn(c, rules, options ?? {}, withConnection));
}

/**
 * The TOTP code (RFC 6238) an authenticator app shows now for `secret`: base32, or an
 * `otpauth://totp/…` URI (whose digits, algorithm and period apply unless `options` says
 * otherwise). Computed here; no server is asked.
 */
export function totp(secret: string, options: TotpOptions = {}): TotpResult {
  const parsed = parseTotpInput(secret);
  if (!parsed.ok) throw new TestInboxError('bad_input', parsed.problem);
  const at = options.at === undefined ? Date.now() : options.at instanceof Date ? options.at.getTime() : options.at;
  const { secret: base32, algorithm, digits, period } = parsed.value;
  const opts = { algorithm, digits, period };
  if (options.digits !== undefined) opts.digits = options.digits;
  if (options.algorithm !== undefined) opts.algorithm = options.algorithm;
  if (options.period !== undefined) opts.period = options.period;
  if (!Number.isInteger(opts.digits) || opts.digits < MIN_TOTP_DIGITS || opts.digits > MAX_TOTP_DIGITS) throw new TestInboxError('bad_input', `digits must be ${MIN_TOTP_DIGITS} to ${MAX_TOTP_DIGITS}`);
  if (!TOTP_ALGORITHMS.includes(opts.algorithm)) throw new TestInboxError('bad_input', `algorithm must be one of ${TOTP_ALGORITHMS.join(', ')}`);
  if (!Number.isInteger(opts.period) || opts.period < 1 || opts.period > MAX_TOTP_PERIOD) throw new TestInboxError('bad_input', `period must be 1 to ${MAX_TOTP_PERIOD} seconds`);
  if (!Number.isFinite(at) || at < 0) throw new TestInboxError('bad_input', 'at must be a time in ms or a Date');
  const { code, seconds_left } = totpAt(base32, opts, at);
  return { code, secondsLeft: seconds_left };
}
