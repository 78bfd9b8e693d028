// sendSms and sendMail: what a test does in place of the app, or to seed an inbox.
// - SMS go through the server's Twilio-compatible Messages API (docs/twilio.md), as an app's
//   Twilio code sends them, with the server's Twilio auth token.
// - Mail goes over SMTP to a Test Inbox server, with nodemailer (already the server's MIME
//   composer): the path an app's mail takes, so it is parsed and its code found exactly as the
//   app's would be. A hosted service takes no SMTP from a test, so there it is injected
//   through the HTTP API (text only).
import { randomUUID } from 'node:crypto';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import MailComposer from 'nodemailer/lib/mail-composer';
import { PRIVATE_DOMAIN } from '../core/ids';
import { DEFAULT_HOST, DEFAULT_SMTP_PORT, LOCAL_TWILIO_ACCOUNT_SID, TWILIO_API_PREFIX, TWILIO_AUTH_TOKEN_ENV } from '../shared/contract';
import { type Connection, SMTP_ENV, splitInbox, toTestInboxError } from './connection';
import { type MailOptions, type MailResult, type SmsOptions, type SmsResult, TestInboxError } from './types';

/** The sender of sendSms when none is given: a number of the 555-01xx range reserved for fiction. */
export const DEFAULT_SMS_FROM = '+15555550100';
/** Sender of sendMail when none is given. */
export const DEFAULT_MAIL_FROM = 'test-inbox@localhost';
/** Budget of one send. */
const SEND_TIMEOUT_MS = 30_000;

export async function sendSmsOn(conn: Connection, o: SmsOptions, env: NodeJS.ProcessEnv): Promise<SmsResult> {
  if (typeof o.to !== 'string' || !/^[+\d][\d\s().-]*$/.test(o.to.trim())) throw new TestInboxError('bad_input', `to must be a phone number (got ${JSON.stringify(o.to)})`);
  if (typeof o.body !== 'string' || o.body === '') throw new TestInboxError('bad_input', 'body must be a non-empty text');
  if (!(await conn.isTestInbox())) throw new TestInboxError('unsupported', `${conn.baseUrl} is not a Test Inbox server: sending an SMS needs its Twilio-compatible API`);
  const authToken = o.twilioAuthToken || env[TWILIO_AUTH_TOKEN_ENV] || conn.savedTokens.twilioAuthToken;
  if (!authToken) throw new TestInboxError('unauthorized', `no Twilio auth token: pass it, set ${TWILIO_AUTH_TOKEN_ENV}, or use the data dir of the running server`);
  const url = `${conn.baseUrl}${TWILIO_API_PREFIX}/Accounts/${LOCAL_TWILIO_ACCOUNT_SID}/Messages.json`;
  const form = new URLSearchParams({ To: o.to.trim(), From: o.from ?? DEFAULT_SMS_FROM, Body: o.body });
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { Authorization: `Basic ${Buffer.from(`${LOCAL_TWILIO_ACCOUNT_SID}:${authToken}`).toString('base64')}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: form,
      redirect: 'error',
      signal: o.signal ? AbortSignal.any([o.signal, AbortSignal.timeout(SEND_TIMEOUT_MS)]) : AbortSignal.timeout(SEND_TIMEOUT_MS),
    });
  } catch (e) {
    if (o.signal?.aborted) throw new TestInboxError('cancelled', 'cancelled');
    throw new TestInboxError('unreachable', `cannot reach ${conn.baseUrl}: ${(e as Error).message}`);
  }
  const body = (await res.json().catch(() => undefined)) as { sid?: unknown; to?: unknown; message?: unknown } | undefined;
  if (!res.ok || typeof body?.sid !== 'string') {
    const why = typeof body?.message === 'string' ? body.message : `HTTP ${res.status}`;
    throw new TestInboxError(res.status === 401 || res.status === 403 ? 'unauthorized' : res.status === 400 ? 'bad_input' : 'server', `the server refused the SMS: ${why}`);
  }
  return { sid: body.sid, inbox: o.to.replace(/\D/g, '') };
}

export async function sendMailOn(conn: Connection, o: MailOptions, env: NodeJS.ProcessEnv): Promise<MailResult> {
  if (typeof o.to !== 'string' || o.to.trim() === '') throw new TestInboxError('bad_input', 'to must be an address or an inbox name');
  const { inbox, domain } = splitInbox(o.to.trim(), conn.domain);
  // An SMTP address the caller named is where the mail goes: no HTTP server is asked first
  // (an address with its domain needs none; a bare inbox name asks the server its domain).
  const namedSmtp = o.smtp || env[SMTP_ENV];
  if (!namedSmtp && !(await conn.isTestInbox())) {
    if (o.html !== undefined) throw new TestInboxError('unsupported', `${conn.baseUrl} is not a Test Inbox server: its inject takes text only, no html`);
    try {
      const r = await conn.api.inject(domain, inbox, { from: o.from, subject: o.subject, text: o.text ?? '' }, { signal: o.signal });
      return { via: 'inject', id: r.id };
    } catch (e) {
      throw toTestInboxError(e);
    }
  }
  const smtp = smtpAddress(namedSmtp || conn.serverFile?.smtp || `${DEFAULT_HOST}:${DEFAULT_SMTP_PORT}`);
  // An inbox name alone goes to the server's default domain: `private` is no mail domain.
  return mailOverSmtp(smtp, `${inbox}@${domain === PRIVATE_DOMAIN ? await defaultDomain(conn) : domain}`, o);
}

/**
 * With an SMTP address named (the option or TEST_INBOX_SMTP) and an address with its domain,
 * the mail goes there and nowhere else: no HTTP server, token or data dir is needed. Undefined
 * when the send needs the server (a bare inbox name, or no SMTP address named).
 */
export function sendMailDirect(o: MailOptions, env: NodeJS.ProcessEnv): Promise<MailResult> | undefined {
  const named = o.smtp || env[SMTP_ENV];
  if (!named || typeof o.to !== 'string' || !o.to.includes('@')) return undefined;
  const { inbox, domain } = splitInbox(o.to.trim(), PRIVATE_DOMAIN);
  if (domain === PRIVATE_DOMAIN) return undefined;
  return mailOverSmtp(smtpAddress(named), `${inbox}@${domain}`, o).catch((e: unknown) => {
    throw toTestInboxError(e);
  });
}

async function mailOverSmtp(smtp: { host: string; port: number }, to: string, o: MailOptions): Promise<MailResult> {
  const from = o.from ?? DEFAULT_MAIL_FROM;
  const messageId = `<${randomUUID()}@test-inbox>`;
  const raw = await new MailComposer({ from, to, subject: o.subject ?? '', text: o.text, html: o.html, messageId }).compile().build();
  await smtpSend(smtp, envelopeAddress(from), to, raw, o.signal);
  return { via: 'smtp', id: messageId };
}

/** The address inside `Name <addr>`, for the SMTP envelope. */
function envelopeAddress(from: string): string {
  const m = /<([^<>]+)>\s*$/.exec(from);
  return (m ? m[1] : from).trim();
}

/** The domain the server writes `private` to: the default domain it names (its `--domain`), mail or none. */
async function defaultDomain(conn: Connection): Promise<string> {
  try {
    const listing = await conn.api.listDomains();
    if (listing.defaultDomain) return listing.defaultDomain;
  } catch (e) {
    throw toTestInboxError(e);
  }
  throw new TestInboxError('bad_input', 'give the address with its domain (name@domain): the server names no default domain');
}

function smtpAddress(text: string): { host: string; port: number } {
  const m = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(text.trim());
  if (!m || Number(m[2]) > 65535) throw new TestInboxError('bad_input', `smtp must be host:port (got ${JSON.stringify(text)})`);
  return { host: m[1], port: Number(m[2]) };
}

/** One SMTP delivery, without TLS (the local server offers none by default) and without auth. */
function smtpSend(addr: { host: string; port: number }, from: string, to: string, raw: Buffer, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const conn = new SMTPConnection({ host: addr.host, port: addr.port, secure: false, ignoreTLS: true, connectionTimeout: SEND_TIMEOUT_MS, socketTimeout: SEND_TIMEOUT_MS });
    let done = false;
    const finish = (e?: Error): void => {
      if (done) return;
      done = true;
      signal?.removeEventListener('abort', onAbort);
      conn.close();
      if (e) reject(e);
      else resolve();
    };
    const onAbort = (): void => finish(new TestInboxError('cancelled', 'cancelled'));
    signal?.addEventListener('abort', onAbort, { once: true });
    conn.on('error', (e: Error & { code?: string }) =>
      finish(new TestInboxError(e.code === 'ECONNECTION' || e.code === 'ETIMEDOUT' ? 'unreachable' : 'server', `SMTP ${addr.host}:${addr.port}: ${e.message}`)),
    );
    conn.connect(() => {
      conn.send({ from, to: [to] }, raw, (err) => finish(err ? new TestInboxError('bad_input', `SMTP ${addr.host}:${addr.port} refused the mail: ${err.message}`) : undefined));
    });
  });
}
