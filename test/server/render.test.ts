import assert from 'node:assert/strict';
import MailComposer from 'nodemailer/lib/mail-composer';
import { composeMessage } from '../../src/server/http/compose';
import { getAttachment, listAttachments, renderMessage, summarize, textAndHtml } from '../../src/server/mime/render';
import type { MessageMeta } from '../../src/server/store/types';
import { PNG, multipartEmail } from '../support/messages';

function aMeta(over: Partial<MessageMeta> = {}): MessageMeta {
  return { id: 'joe-1763776000-1', domain: 'inbox.test', inbox: 'joe', time: 1763776000123, from: '"Acme Support" <support@acme.test>', subject: 'Welcome, Joe', size: 1000, source: 'smtp', ...over };
}

describe('render', () => {
  it('summarizes from the index with seconds_ago computed at response time', () => {
    const meta = aMeta();
    assert.deepEqual(summarize(meta, meta.time + 61_999), {
      subject: 'Welcome, Joe',
      domain: 'inbox.test',
      from: '"Acme Support" <support@acme.test>',
      id: 'joe-1763776000-1',
      to: 'joe',
      time: 1763776000123,
      seconds_ago: 61,
    });
    assert.equal(summarize(meta, meta.time - 5000).seconds_ago, 0);
  });

  it('renders an email as docs/api.md §2.3 with lowercase headers and text, html and attachment parts', async () => {
    const meta = aMeta();
    const msg = await renderMessage(meta, await multipartEmail(), meta.time + 3000);
    assert.ok('headers' in msg);
    assert.deepEqual(Object.keys(msg).sort(), ['from', 'fromfull', 'headers', 'id', 'parts', 'seconds_ago', 'subject', 'time', 'to']);
    assert.equal(msg.fromfull, '"Acme Support" <support@acme.test>');
    assert.equal(msg.from, 'Acme Support');
    assert.equal(msg.subject, 'Welcome, Joe');
    assert.equal(msg.to, 'joe');
    assert.equal(msg.id, 'joe-1763776000-1');
    assert.equal(msg.time, 1763776000123);
    assert.equal(msg.seconds_ago, 3);
    for (const name of ['mime-version', 'date', 'subject', 'content-type', 'from', 'to', 'message-id']) assert.equal(typeof msg.headers[name], 'string', name);
    for (const name of Object.keys(msg.headers)) assert.equal(name, name.toLowerCase());
    assert.equal(msg.headers.subject, 'Welcome, Joe');
    assert.match(msg.headers['content-type'], /^multipart\//);

    assert.equal(msg.parts.length, 4);
    assert.equal(msg.parts[0].headers['content-type'], 'text/plain; charset=utf-8');
    assert.match(msg.parts[0].body, /your code is 482913/);
    assert.equal(msg.parts[1].headers['content-type'], 'text/html; charset=utf-8');
    assert.match(msg.parts[1].body, /<b>482913<\/b>/);
    // Attachments follow in document order (nodemailer puts the related image first).
    const pdf = msg.parts.find((p) => p.headers['content-type'] === 'application/pdf');
    assert.ok(pdf);
    assert.equal(pdf.headers['content-type'], 'application/pdf');
    assert.equal(pdf.headers['content-transfer-encoding'], 'base64');
    assert.match(pdf.headers['content-disposition'], /^attachment; filename="invoice ü\.pdf"$/);
    assert.equal(Buffer.from(pdf.body, 'base64').toString(), '%PDF-1.4 fake but bytes');
    const logo = msg.parts.find((p) => p.headers['content-type'] === 'image/png');
    assert.ok(logo);
    assert.equal(logo.headers['content-id'], '<logo@acme>');
    assert.deepEqual(Buffer.from(logo.body, 'base64'), PNG);
  });

  it('decodes RFC 2047 words in headers and subject', async () => {
    const raw = await multipartEmail({ subject: 'Ünïcödé ✓ subject', from: '"Zoë" <zoe@x.test>' });
    const msg = await renderMessage(aMeta({ from: 'Zoë <zoe@x.test>' }), raw, Date.now());
    assert.ok('headers' in msg);
    assert.equal(msg.subject, 'Ünïcödé ✓ subject');
    assert.equal(msg.headers.subject, 'Ünïcödé ✓ subject');
    assert.equal(msg.from, 'Zoë');
  });

  it('uses the address as from when the sender has no display name', async () => {
    const raw = await composeMessage({ from: 'bare@x.test', inbox: 'joe', domain: 'inbox.test', source: 'inject' });
    const msg = await renderMessage(aMeta({ from: 'bare@x.test' }), raw, Date.now());
    assert.equal(msg.fromfull, 'bare@x.test');
    assert.ok('from' in msg);
    assert.equal(msg.from, 'bare@x.test');
  });

  it('renders a phone inbox message as SMS (docs/api.md §2.4): parts carry only body, plus id', async () => {
    const raw = await composeMessage({ from: '+14155550100', subject: 'SMS', text: 'Your code is 123456', inbox: '14155550199', domain: 'inbox.test', source: 'webhook' });
    const meta = aMeta({ id: '14155550199-1763776000-7', inbox: '14155550199', from: '+14155550100', subject: 'SMS', source: 'webhook' });
    const msg = await renderMessage(meta, raw, meta.time + 10_000);
    assert.deepEqual(msg, {
      fromfull: '+14155550100',
      subject: 'SMS',
      parts: [{ body: 'Your code is 123456' }],
      to: '14155550199',
      time: meta.time,
      seconds_ago: 10,
      id: '14155550199-1763776000-7',
    });
  });

  it('gives an HTML-only email that reached a phone inbox the visible text of its HTML as SMS body', async () => {
    const raw = await new MailComposer({ from: 'gw@sms.test', to: '14155550199@inbox.test', subject: 'SMS', html: '<p>Your code is <b>551177</b></p>' }).compile().build();
    const meta = aMeta({ id: '14155550199-1763776000-8', inbox: '14155550199', from: 'gw@sms.test', subject: 'SMS' });
    const msg = await renderMessage(meta, raw, meta.time);
    assert.deepEqual(msg.parts, [{ body: 'Your code is 551177' }]);
  });

  it('lists attachments with 0-based ids and returns their exact bytes', async () => {
    const raw = await multipartEmail();
    const { attachments: list, notice } = await listAttachments(raw);
    assert.equal(notice, undefined);
    assert.deepEqual(list.map((a) => a.attachment_id), [0, 1]);
    assert.deepEqual(
      list.map((a) => [a.filename, a['content-type'], a.size]).sort(),
      [
        ['invoice ü.pdf', 'application/pdf', 23],
        ['logo.png', 'image/png', PNG.length],
      ],
    );
    const logoInfo = list.find((a) => a.filename === 'logo.png');
    assert.equal(logoInfo?.['content-id'], '<logo@acme>');
    const logo = await getAttachment(raw, logoInfo?.attachment_id ?? -1);
    assert.ok(!logo || !('notice' in logo));
    assert.deepEqual(Buffer.from(logo?.bytes ?? []), PNG);
    assert.equal(logo?.contentType, 'image/png');
    assert.equal(await getAttachment(raw, 2), undefined);
  });

  it('has no parts other than text for a composed message, and no attachments', async () => {
    const raw = await composeMessage({ text: 'plain', inbox: 'joe', domain: 'inbox.test', source: 'inject' });
    const msg = await renderMessage(aMeta(), raw, Date.now());
    assert.equal(msg.parts.length, 1);
    assert.deepEqual(await listAttachments(raw), { attachments: [] });
    assert.deepEqual(await textAndHtml(raw), { text: 'plain\n', html: undefined });
  });
});
