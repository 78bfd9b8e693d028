// The public types of the test library (the `test-inbox` npm package's `import`): declared
// here with no imports, so that the package's generated .d.ts is these two files and nothing
// of the project's internals.

/** Where the inbox server is and how to reach it. Every field has an environment twin, for CI. */
export interface ConnectionOptions {
  /**
   * Base URL of the server: a Test Inbox server, or a hosted Mailinator-compatible service
   * such as `https://api.mailinator.com`. Default: env `TEST_INBOX_SERVER`, else the running
   * local server of the data dir (its `server.json`, once that server proves it serves the data
   * dir), else `http://127.0.0.1:2580`. A server not named here that proves nothing gets no token.
   */
  server?: string;
  /**
   * API token. Default: env `TEST_INBOX_API_TOKEN`, else the `apiToken` of the data dir's
   * `tokens.json`, sent only to the server that proves it runs on that data dir.
   */
  token?: string;
  /** Domain of the inbox: `private` (default; env `TEST_INBOX_DOMAIN`) or a domain name. An inbox given as `name@domain` names its own. */
  domain?: string;
  /**
   * Data dir of the local server. Default: env `TEST_INBOX_DATA_DIR`, else the per-user folder
   * `test-inbox serve` uses: `$XDG_DATA_HOME/test-inbox` when set, else
   * `%LOCALAPPDATA%\test-inbox` (Windows), `~/Library/Application Support/test-inbox` (macOS),
   * `~/.local/share/test-inbox` (Linux); a running server is also looked for in
   * `~/.local/share/test-inbox`, the earlier versions' default.
   */
  dataDir?: string;
  /** Cancels the call (rejects with code `cancelled`). */
  signal?: AbortSignal;
}

export interface WaitOptions extends ConnectionOptions {
  /**
   * Only messages received after this count: `'now'` (the moment of the call on the server's
   * clock, so a client clock ahead or behind changes nothing), a time in ms since the epoch, a
   * Date, or the id of a message of the inbox. Prefer `'now'` taken before the action that
   * sends the mail, or the id of the last message read. Default: every message counts.
   */
  since?: 'now' | number | Date | string;
  /** How long to wait: ms, or a duration such as `'30s'` or `'2m'` (default 60 s). */
  timeout?: number | string;
  /** Delete the message once read, so that no other run reads the same code. */
  delete?: boolean;
}

/** Which link `waitForLink` returns: `verify` (confirm an address), `reset` (password), `login` (magic link) or `any` of the three. */
export type LinkKindOption = 'verify' | 'reset' | 'login' | 'any';

export interface LinkOptions extends WaitOptions {
  /** Default `any`. */
  kind?: LinkKindOption;
}

/** The message a code or link was read from. */
export interface FoundMessage {
  /** Message id (pass it as `since` to wait for the next one). */
  id: string;
  /** Receipt time, ms since the epoch. */
  time: number;
  subject: string;
  from: string;
}

export interface CodeResult extends FoundMessage {
  code: string;
}

export interface LinkResult extends FoundMessage {
  url: string;
  /** `verify-email`, `reset-password` or `magic-login`. */
  kind: string;
  /** The link's visible text (empty when it has none). */
  text: string;
}

export interface TotpOptions {
  /** 6 to 8 (default 6, or the otpauth URI's). */
  digits?: number;
  /** Default `SHA1`, or the otpauth URI's. */
  algorithm?: 'SHA1' | 'SHA256' | 'SHA512';
  /** Seconds (default 30, or the otpauth URI's). */
  period?: number;
  /** The moment to compute the code for (default now). */
  at?: number | Date;
}

export interface TotpResult {
  code: string;
  /** Whole seconds until the code changes. */
  secondsLeft: number;
}

export interface SmsOptions extends ConnectionOptions {
  /** The phone number; the SMS lands in the inbox of its digits. */
  to: string;
  body: string;
  /** Sender number (default `+15555550100`). */
  from?: string;
  /**
   * The server's Twilio auth token. Default: env `TEST_INBOX_TWILIO_AUTH_TOKEN`, else the
   * data dir's `tokens.json` (for its proven running server, as `token`).
   */
  twilioAuthToken?: string;
}

export interface SmsResult {
  /** Twilio's message SID (`SM…`). */
  sid: string;
  /** The inbox the SMS landed in: the digits of `to`. */
  inbox: string;
}

export interface MailOptions extends ConnectionOptions {
  /** `name@domain`, or an inbox name (then at the server's default domain). */
  to: string;
  from?: string;
  subject?: string;
  text?: string;
  /** HTML body (SMTP only: the hosted service's inject takes text). */
  html?: string;
  /**
   * SMTP server `host:port` of a Test Inbox server. Default: env `TEST_INBOX_SMTP`, else the
   * running local server's (its `server.json`), else `127.0.0.1:2525`.
   */
  smtp?: string;
}

export interface MailResult {
  /** `smtp` towards a Test Inbox server; `inject` (the HTTP API) towards a hosted service, which takes no SMTP from tests. */
  via: 'smtp' | 'inject';
  /** The stored message's id (inject), or the Message-ID header sent (SMTP). */
  id: string;
}

/**
 * A fault rule (docs/chaos.md): on which surface, what it matches, what happens and how often.
 * The server checks it; a bad one is refused with a `bad_input` error that names the field.
 */
export interface ChaosRule {
  surface: 'smtp' | 'resend' | 'sendgrid' | 'postmark' | 'mailgun' | 'ses' | 'twilio' | 'verify' | 'delivery' | 'mailosaur';
  /** `{ recipient }`, `{ sender }`, an SMTP `stage` and `client`, or `{ all: true }` to match everything. */
  match: { all?: true; recipient?: string; sender?: string; stage?: 'connect' | 'ehlo' | 'auth' | 'mail' | 'rcpt' | 'data'; client?: string };
  /** SMTP: `reply` or `drop`; HTTP: `status` with `retry_after` (seconds) and, for Twilio, `twilio_code`; any: `delay` (ms or `'2s'`). */
  fault: { reply?: { code: number; text?: string }; drop?: true; delay?: number | string; status?: number; retry_after?: number; twilio_code?: number; delivery_delay?: number | string };
  /** Fires on the next N matches, then no more. */
  times?: number;
  /** Fires with this probability, each match taking the next draw of a generator seeded by `seed` (default 1). */
  probability?: number;
  seed?: number;
  /** How long the rule lives: ms or `'10m'` (default 10 minutes, at most 24 h). */
  ttl?: number | string;
}

/** A rule as the server shows it, with its counters. */
export interface ChaosRuleState extends ChaosRule {
  id: string;
  /** ISO 8601: when it stops by itself. */
  expires: string;
  /** How often it fired. */
  fired: number;
  /** How often it matched, fired or not. */
  evaluated: number;
}

/** The rules one `chaos()` call added: `remove()` takes away these and no other (a parallel test's rules stay). */
export interface ChaosRules {
  readonly ids: readonly string[];
  /** These rules as the server has them now, with their counters (a removed or expired one is left out). */
  state(): Promise<ChaosRuleState[]>;
  /** Removes these rules; one already gone (removed, or its time to live ended) is fine. */
  remove(): Promise<void>;
}

/**
 * Why a call failed: `timeout` (nothing arrived in time), `bad_input` (an argument or option
 * is wrong, or the server refused it), `unauthorized` (no token, or a token the server refuses),
 * `unreachable` (no answer from the server), `unsupported` (the server lacks what the call
 * needs), `server` (the server failed), `cancelled`.
 */
export type TestInboxErrorCode = 'timeout' | 'bad_input' | 'unauthorized' | 'unreachable' | 'unsupported' | 'server' | 'cancelled';

const ERROR_TAG = Symbol.for('test-inbox.testing.TestInboxError');

export class TestInboxError extends Error {
  override readonly name = 'TestInboxError';
  readonly code: TestInboxErrorCode;
  readonly [ERROR_TAG] = true;

  constructor(code: TestInboxErrorCode, message: string) {
    super(message);
    this.code = code;
  }

  /** True for a TestInboxError (from any copy of the library), optionally of the given code. */
  static is(e: unknown, code?: TestInboxErrorCode): e is TestInboxError {
    return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[ERROR_TAG] === true && (code === undefined || (e as TestInboxError).code === code);
  }
}
