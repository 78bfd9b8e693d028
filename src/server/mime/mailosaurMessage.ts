// A stored message in the shape of Mailosaur's `GET /api/messages/{id}` (docs/compat.md
// "Mailosaur"), made on a MIME worker (workers/jobs.ts): the SDK's Message model reads these
// fields. `html.codes`/`text.codes` and `html.links`/`text.links` come from the one code and
// link core (core/otp.ts extractCodes, core/links.ts extractLinks), entities decoded there.
import type PostalMime from 'postal-mime';
import { extractLinks } from '../../core/links';
import { extractCodes } from '../../core/otp';
import { parse } from './render';
import { decodeEncodedWords } from '../store/headers';
import type { MessageMeta } from '../store/types';

export interface MailosaurAddress {
  name: string;
  email: string;
}

interface MailosaurContent {
  links: Array<{ href: string; text?: string }>;
  codes: Array<{ value: string }>;
  body?: string;
}

export interface MailosaurMessage {
  id: string;
  type: 'Email';
  from: MailosaurAddress[];
  to: MailosaurAddress[];
  cc: MailosaurAddress[];
  bcc: MailosaurAddress[];
  received: string;
  subject: string;
  html: MailosaurContent;
  text: MailosaurContent;
  attachments: Array<{ id: string; contentType: string; fileName: string; contentId?: string; length: number }>;
  metadata: { headers: Array<{ field: string; value: string }>; mailFrom: string; rcptTo: Array<{ name: string; email: string }> };
  server: string;
}

/** Mailosaur's address objects of a parsed address list (group members flattened). */
function addresses(list: PostalMime.Address[] | PostalMime.Address | undefined): MailosaurAddress[] {
  const all = list === undefined ? [] : Array.isArray(list) ? list : [list];
  return all.flatMap((a) => (a.group ? a.group : [a])).map((a) => ({ name: a.name ?? '', email: a.address ?? '' }));
}

function content(body: string | undefined, kind: 'html' | 'text'): MailosaurContent {
  if (body === undefined) return { links: [], codes: [] };
  const source = kind === 'html' ? { html: body } : { text: body };
  const links = extractLinks(source).map((l) => (l.text !== undefined ? { href: l.url, text: l.text } : { href: l.url }));
  const codes = extractCodes({ ...source, kind: 'email' }).map((c) => ({ value: c.code }));
  return { links, codes, body };
}

export async function mailosaurMessage(meta: MessageMeta, raw: Buffer, server: string): Promise<MailosaurMessage> {
  const { email } = await parse(raw);
  const recipient = `${meta.inbox}@${meta.domain}`;
  return {
    id: meta.id,
    type: 'Email',
    from: addresses(email.from),
    to: addresses(email.to),
    cc: addresses(email.cc),
    bcc: addresses(email.bcc),
    received: new Date(meta.time).toISOString(),
    subject: email.subject ?? meta.subject,
    html: content(email.html, 'html'),
    text: content(email.text, 'text'),
    attachments: email.attachments.map((a, n) => ({
      id: `${meta.id}.${n}`,
      contentType: a.mimeType,
      fileName: a.filename ?? '',
      ...(a.contentId ? { contentId: a.contentId.replace(/^<|>$/g, '') } : {}),
      length: typeof a.content === 'string' ? Buffer.byteLength(a.content) : a.content.byteLength,
    })),
    metadata: {
      headers: email.headers.map((h) => ({ field: h.originalKey ?? h.key, value: decodeEncodedWords(h.value) })),
      mailFrom: email.from?.address ?? '',
      rcptTo: [{ name: '', email: recipient }],
    },
    server,
  };
}
