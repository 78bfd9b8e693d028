// The MIME work of the read views (parse, render, link extraction) and of the provider routes
// (composing their mail, reading a raw message's recipients), as one function of plain
// data in and plain data out, so it can run on a worker thread (workers/pool.ts) and keep the
// event loop free while a huge message is read.
import { extractLinks } from '../../core/links';
import type { LinkKind } from '../../core/linkKinds';
import type { LinkKindParam } from '../../core/clickKinds';
import { type ClickLink, linkToClick } from '../../core/message';
import type { SearchableBody } from '../../core/search';
import type { AttachmentInfo } from '../../core/wire';
import { type CompatParsed, compatParse } from '../mime/compatParse';
import { detectCode } from '../store/code';
import { type FileWrite, type FileWriteResult, writeFilesSync } from '../store/maildir/fileWrites';
import type { MessageMeta } from '../store/types';
import { type Composed, type ComposeSpool, composeToSpool, type OutgoingMail, rawRecipients } from '../mime/outgoing';
import { type MailosaurMessage, mailosaurMessage } from '../mime/mailosaurMessage';
import { type AttachmentContent, getAttachment, contentOfRaw, listAttachments, type RenderedMessage, renderMessage, searchableOf, textAndHtml } from '../mime/render';

export type MimeJob =
  | { op: 'message'; raw: Uint8Array; meta: MessageMeta; now: number }
  | { op: 'links'; raw: Uint8Array }
  | { op: 'attachments'; raw: Uint8Array }
  | { op: 'attachment'; raw: Uint8Array; n: number }
  | { op: 'linkToClick'; raw: Uint8Array; kind: LinkKindParam }
  | { op: 'searchable'; raw: Uint8Array; linkKinds?: readonly LinkKind[] }
  | { op: 'codes'; jobs: Array<{ raw: Uint8Array; sms: boolean }> }
  | { op: 'writeFiles'; ops: FileWrite[] }
  | { op: 'composeMail'; mail: OutgoingMail; domain: string; spool: ComposeSpool }
  | { op: 'rawRecipients'; raw: Uint8Array }
  | { op: 'mailosaur'; raw: Uint8Array; meta: MessageMeta; server: string }
  | { op: 'compat'; raw: Uint8Array; mailhog: boolean };

export interface MimeResults {
  message: RenderedMessage & { notice?: string };
  links: { links: string[]; notice?: string };
  attachments: { attachments: AttachmentInfo[]; notice?: string };
  attachment: AttachmentContent | { notice: string } | undefined;
  linkToClick: ClickLink | undefined;
  searchable: SearchableBody;
  codes: Array<string | undefined>;
  writeFiles: FileWriteResult[];
  composeMail: Composed;
  rawRecipients: string[];
  mailosaur: MailosaurMessage;
  compat: CompatParsed;
}

function asBuffer(raw: Uint8Array): Buffer {
  return Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
}

export async function runMimeJob(job: MimeJob): Promise<MimeResults[MimeJob['op']]> {
  if (job.op === 'codes') return Promise.all(job.jobs.map((j) => detectCode(asBuffer(j.raw), j.sms)));
  if (job.op === 'writeFiles') return writeFilesSync(job.ops);
  if (job.op === 'composeMail') return composeToSpool(job.mail, job.domain, job.spool);
  const raw = asBuffer(job.raw);
  switch (job.op) {
    case 'message':
      return renderMessage(job.meta, raw, job.now);
    case 'links': {
      const source = await textAndHtml(raw);
      const links = extractLinks(source).map((l) => l.url);
      return source.notice === undefined ? { links } : { links, notice: source.notice };
    }
    case 'attachments':
      return listAttachments(raw);
    case 'attachment':
      return getAttachment(raw, job.n);
    case 'linkToClick':
      return linkToClick(await contentOfRaw(raw), job.kind);
    case 'searchable':
      return searchableOf(raw, job.linkKinds);
    case 'rawRecipients':
      return rawRecipients(raw);
    case 'mailosaur':
      return mailosaurMessage(job.meta, raw, job.server);
    case 'compat':
      return compatParse(raw, job.mailhog);
  }
}
