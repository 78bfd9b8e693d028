// The code read after each acknowledgement takes the subject and text bodies of the common
// shapes without a full MIME parse (src/server/store/quickText.ts). Its answer must be
// postal-mime's, the parser every view of a message uses, or the code in a listing could
// differ from the one the message view shows. Checked on generated messages: the two shapes it
// reads, with the variations senders produce and the malformations it must leave to postal-mime.
import assert from 'node:assert/strict';
import * as fc from 'fast-check';
import * as nodemailer from 'nodemailer';
import PostalMime from 'postal-mime';
import { quickText } from '../../src/server/store/quickText';

async function postal(raw: Buffer): Promise<{ subject?: string; text?: string; html?: string }> {
  const e = await PostalMime.parse(raw, { attachmentEncoding: 'arraybuffer', maxNestingDepth: 64 });
  const out: { subject?: string; text?: string; html?: string } = {};
  if (e.subject !== undefined) out.subject = e.subject;
  if (e.text !== undefined) out.text = e.text;
  if (e.html !== undefined) out.html = e.html;
  return out;
}

/** Built by nodemailer, as an app would send it. */
async function built(options: nodemailer.SendMailOptions): Promise<Buffer> {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true });
  const info = await transport.sendMail({ from: 'App <app@example.test>', to: 'joe@inbox.test', ...options });
  return info.message as Buffer;
}

const words = ['Your', 'code', 'is', '482913', 'Bestätigungscode', '验证码', '🔐', 'ünïcödé', '=', '=3D', '==', '=4', 'a=b', '--', '<b>', '&amp;', '"q"', "'", '?', '\t', ' ', '  ', '.', '\r', 'x'.repeat(90)];
const text = fc.array(fc.constantFrom(...words), { maxLength: 30 }).map((w) => w.join(' '));
const lineEnd = fc.constantFrom('\r\n', '\n', '\r\r\n');

/** A body in a transfer encoding, well or badly formed. */
const encoded = fc.record({ body: fc.array(text, { minLength: 0, maxLength: 6 }), cte: mostly<string | undefined>([undefined, '7bit', '8bit', 'quoted-printable', 'base64', 'Base64', 'QUOTED-PRINTABLE', 'binary'], ['x-weird', 'base64 (c)']), mangle: mostly(['none', 'bad-qp'], ['pad-inside', 'space', 'short']) });

function encode(lines: string[], cte: string | undefined, mangle: string, nl: string): string {
  const joined = lines.join('\n');
  const kind = (cte ?? '').toLowerCase();
  if (kind === 'base64') {
    let b = Buffer.from(joined, 'utf8').toString('base64');
    if (mangle === 'pad-inside' && b.length > 8) b = `${b.slice(0, 4)}=${b.slice(4)}`;
    if (mangle === 'space') b = b.replace(/(.{10})/g, '$1 ');
    if (mangle === 'short' && b.length > 2) b = b.slice(0, -1);
    return (b.match(/.{1,76}/g) ?? ['']).join(nl) + nl;
  }
  if (kind === 'quoted-printable') {
    let q = [...Buffer.from(joined, 'utf8')].map((c) => (c === 0x0a ? nl : c === 0x3d || c > 126 ? `=${c.toString(16).toUpperCase().padStart(2, '0')}` : String.fromCharCode(c))).join('');
    q = q.replace(/([^\r\n]{70})/g, `$1=${nl}`);
    if (mangle === 'bad-qp') q += '=ZZ =4';
    return q + nl;
  }
  return lines.join(nl) + nl;
}

/** Mostly values of the shapes quickText reads, sometimes any of the others. */
function mostly<T>(good: T[], others: T[]): fc.Arbitrary<T> {
  return fc.oneof({ arbitrary: fc.constantFrom(...good), weight: 6 }, { arbitrary: fc.constantFrom(...good, ...others), weight: 1 });
}

const contentType = fc.record({
  type: mostly<string | undefined>(['text/plain', 'text/html', 'TEXT/Plain', undefined], ['text/calendar', 'image/png']),
  charset: mostly<string | undefined>([undefined, 'utf-8', 'UTF-8', '"utf-8"', 'us-ascii', 'iso-8859-1', 'windows-1252'], ['koi8-r', 'bogus', '""']),
  extra: mostly(['', ';', ' ; x=y', '; name="a.txt"'], ['; format=flowed', '; format=fixed', ' (comment)', "; charset*=utf-8''x", '; delsp=yes']),
});

function headerOf(ct: { type?: string; charset?: string; extra: string }): string {
  if (ct.type === undefined) return '';
  return `Content-Type: ${ct.type}${ct.charset !== undefined ? `; charset=${ct.charset}` : ''}${ct.extra}`;
}

const part = fc.record({ ct: contentType, enc: encoded, disposition: mostly<string | undefined>([undefined, 'inline', 'INLINE'], ['attachment', 'inline; filename=x.txt']), noBlank: mostly([false], [true]) });

function partText(p: { ct: { type?: string; charset?: string; extra: string }; enc: { body: string[]; cte?: string; mangle: string }; disposition?: string; noBlank: boolean }, nl: string): string {
  const headers = [headerOf(p.ct), p.enc.cte !== undefined ? `Content-Transfer-Encoding: ${p.enc.cte}` : '', p.disposition !== undefined ? `Content-Disposition: ${p.disposition}` : ''].filter((h) => h !== '');
  return headers.map((h) => h + nl).join('') + (p.noBlank ? '' : nl) + encode(p.enc.body, p.enc.cte, p.enc.mangle, nl);
}

const subject = fc.constantFrom(undefined, '', 'Your code', '=?utf-8?B?w5xiZXI=?= code 123456', '=?UTF-8?Q?C=C3=B3digo?= 4821', 'Folded\r\n  subject', 'Ünïcode raw', '\uFEFFbom');

const message = fc.record({
  subject,
  nl: lineEnd,
  multipart: fc.boolean(),
  single: part,
  parts: fc.array(part, { minLength: 0, maxLength: 3 }),
  boundary: fc.constantFrom('b1', '"b 2"', '----=_Part_1', '"=?x?="', 'b1; boundary=b2'),
  preamble: fc.constantFrom('', 'This is a multi-part message.', '--b1x'),
  epilogue: fc.constantFrom('', 'after', '--b1'),
  terminated: fc.constantFrom(true, true, false),
  duplicateCt: fc.constantFrom(false, false, true),
});

function rawOf(m: {
  subject?: string;
  nl: string;
  multipart: boolean;
  single: Parameters<typeof partText>[0];
  parts: Array<Parameters<typeof partText>[0]>;
  boundary: string;
  preamble: string;
  epilogue: string;
  terminated: boolean;
  duplicateCt: boolean;
}): Buffer {
  const nl = m.nl;
  const head = ['From: a@b.test', 'To: joe@inbox.test', ...(m.subject !== undefined ? [`Subject: ${m.subject}`] : []), 'MIME-Version: 1.0'].map((h) => h + nl).join('');
  if (!m.multipart) return Buffer.from(head + (m.duplicateCt ? `Content-Type: text/html${nl}` : '') + partText(m.single, nl), 'utf8');
  const b = m.boundary.replace(/^"|"$/g, '').split(';')[0];
  let s = `${head}Content-Type: multipart/alternative; boundary=${m.boundary}${nl}${m.duplicateCt ? `Content-Type: text/plain${nl}` : ''}${nl}${m.preamble}${nl}`;
  for (const p of m.parts) s += `--${b}${nl}${partText(p, nl)}`;
  if (m.terminated) s += `--${b}--${nl}${m.epilogue}${nl}`;
  return Buffer.from(s, 'utf8');
}

describe('quickText: the subject and bodies the code is read from, as postal-mime reads them', function () {
  this.timeout(120_000);

  it('answers what postal-mime answers on every generated message it reads, and reads the common shapes', async () => {
    let read = 0;
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(message, async (m) => {
        runs++;
        const raw = rawOf(m);
        const quick = quickText(raw);
        if (quick === undefined) return;
        read++;
        assert.deepEqual(quick, await postal(raw), raw.toString('utf8'));
      }),
      { numRuns: 4000 },
    );
    // Not a test that passes by reading nothing: a good share of the messages take the quick path.
    assert.ok(read > runs / 4, `read ${read} of ${runs}`);
  });

  it('reads the messages nodemailer builds (text, HTML, both; any length and characters) and answers as postal-mime', async () => {
    const samples: nodemailer.SendMailOptions[] = [
      { subject: 'Your code', text: 'Your verification code is 482913.' },
      { subject: 'Bestätigungscode: 4821', text: 'Ihr Code lautet 4821.\nÜbrigens: ünïcödé 🔐' },
      { subject: 'Sign in', html: '<p>Your code is <b>551203</b></p>' },
      { subject: 'Both', text: 'Code: 663401', html: `<p>Code: <b>663401</b></p>${'<div>filler</div>'.repeat(200)}` },
      { subject: 'Long lines', text: `${'x'.repeat(300)} code 902117 ${'é'.repeat(300)}` },
      { subject: '验证码 123456', text: '您的验证码为123456，5分钟内有效。' },
    ];
    for (const s of samples) {
      const raw = await built(s);
      const quick = quickText(raw);
      assert.ok(quick, `read without the full parse: ${raw.toString('utf8').slice(0, 400)}`);
      assert.deepEqual(quick, await postal(raw));
    }
  });

  it('leaves to postal-mime what it does not read: attachments, nested multiparts, other charsets, flowed text', async () => {
    const others = [
      await built({ subject: 'With file', text: 'Code 482913', attachments: [{ filename: 'a.txt', content: 'hello' }] }),
      await built({ subject: 'Related', html: '<img src="cid:logo"> 482913', attachments: [{ filename: 'logo.png', content: Buffer.from([1, 2, 3]), cid: 'logo' }] }),
      await built({ subject: 'KOI8', text: 'Код 482913', textEncoding: 'base64', encoding: 'koi8-r' } as nodemailer.SendMailOptions),
      Buffer.from('Subject: flowed\r\nContent-Type: text/plain; format=flowed\r\n\r\nYour code \r\nis 482913\r\n'),
      Buffer.from('Subject: no body separator\r\nContent-Type: text/plain'),
    ];
    for (const raw of others) {
      const quick = quickText(raw);
      if (quick !== undefined) assert.deepEqual(quick, await postal(raw), raw.toString('utf8'));
    }
    assert.equal(quickText(others[0]), undefined);
    assert.equal(quickText(others[1]), undefined);
    assert.equal(quickText(others[3]), undefined);
  });
});
