// The test messages every suite builds, written once: a raw RFC 5322 email as an SMTP client
// sends it, a multipart one as a mail client composes it, and a fetched email or SMS as the API
// answers it. A test passes the fields it asserts on; the defaults are a plausible sign-in mail.
import MailComposer from 'nodemailer/lib/mail-composer';
import type { Message } from '../../src/core/wire';

export type FetchedEmail = Extract<Message, { kind: 'email' }>;
export type FetchedSms = Extract<Message, { kind: 'sms' }>;

/** A 1x1 PNG's first bytes: enough for an image attachment. */
export const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

/** A header value as written on the wire: as is when ASCII (encoded words and folding a test wrote included), else an RFC 2047 encoded word (of the display name before `<addr>` only). */
function encoded(value: string, address = false): string {
  if (/^[\x00-\x7f]*$/.test(value)) return value;
  const b64 = (s: string): string => `=?UTF-8?B?${Buffer.from(s).toString('base64')}?=`;
  const m = address ? /^(.*) (<[^>]*>)$/.exec(value) : null;
  return m ? `${b64(m[1])} ${m[2]}` : b64(value);
}

export interface RawEmailOptions {
  from?: string;
  to?: string;
  subject?: string;
  body?: string;
  /** More header lines (`Name: value`), after the standard ones. */
  headers?: string[];
  /** The Date header; `null` for none. */
  date?: string | null;
}

/** A raw RFC 5322 plain-text email, as an SMTP client sends it (CRLF line ends). */
export function rawEmail(o: RawEmailOptions = {}): Buffer {
  const date = o.date === undefined ? 'Sat, 21 Nov 2026 10:00:00 +0000' : o.date;
  const lines = [
    `From: ${encoded(o.from ?? 'Acme <no-reply@acme.test>', true)}`,
    `To: ${o.to ?? 'joe@inbox.test'}`,
    `Subject: ${encoded(o.subject ?? 'Your code')}`,
    ...(date === null ? [] : [`Date: ${date}`]),
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    ...(o.headers ?? []),
    '',
    o.body ?? 'Your code is 123456',
    '',
  ];
  return Buffer.from(lines.join('\r\n'));
}

/** A multipart email as a mail client sends it: text, HTML with links, a PDF and an inline image. */
export function multipartEmail(over: { subject?: string; from?: string; to?: string } = {}): Promise<Buffer> {
  return new MailComposer({
    from: over.from ?? '"Acme Support" <support@acme.test>',
    to: over.to ?? 'joe@inbox.test',
    subject: over.subject ?? 'Welcome, Joe',
    text: 'Hello Joe,\nyour code is 482913.\nhttps://acme.test/verify?c=482913\nhttps://acme.test/help',
    html: '<p>Hello Joe, your code is <b>482913</b>. <a href="https://acme.test/verify?c=482913">Verify</a> <a href="mailto:x@acme.test">mail</a><img src="cid:logo@acme"></p>',
    attachments: [
      { filename: 'invoice ü.pdf', content: Buffer.from('%PDF-1.4 fake but bytes'), contentType: 'application/pdf' },
      { filename: 'logo.png', content: PNG, contentType: 'image/png', cid: 'logo@acme' },
    ],
  })
    .compile()
    .build();
}

/** A part of a fetched email: its content type, body and, for an attachment, its disposition. */
export function emailPart(type: string, body: string, disposition?: string): FetchedEmail['parts'][number] {
  return { headers: { 'content-type': type, ...(disposition ? { 'content-disposition': disposition } : {}) }, body };
}

/** An email as the API answers `GET …/messages/<id>`: a sign-in code in text and HTML, a tracker and an inline image. */
export function fetchedEmail(overrides: Partial<FetchedEmail> = {}): FetchedEmail {
  return {
    kind: 'email',
    fromfull: 'Acme <no-reply@acme.test>',
    from: 'Acme',
    headers: { subject: 'Your sign-in code', date: 'Sat, 22 Nov 2025 01:00:00 +0000', 'content-type': 'multipart/alternative' },
    subject: 'Your sign-in code',
    parts: [
      emailPart('text/plain; charset=utf-8', 'Your code is 482913.\nVerify: https://acme.test/verify?t=1'),
      emailPart(
        'text/html; charset=utf-8',
        '<p onclick="x()">Your code is <b>482913</b></p><a href="https://acme.test/verify?t=1">Verify</a><img src="https://track.acme.test/p.gif"><img src="cid:logo@acme"><script>alert(1)</script>',
      ),
    ],
    to: 'joe',
    id: 'joe-1763773200-1',
    time: 1763773200000,
    seconds_ago: 5,
    ...overrides,
  };
}

/** An SMS as the API answers it. */
export function fetchedSms(overrides: Partial<FetchedSms> = {}): FetchedSms {
  return { kind: 'sms', id: '14155550100-1763773200-2', fromfull: '15551234567', subject: 'SMS', parts: [{ body: 'Your Acme code: 7731. Do not share it.' }], to: '14155550100', time: 1763773200000, seconds_ago: 1, ...overrides };
}
