// Loading a message for its panel: the message, its attachment list and raw source (each a note
// when it fails, not an error), and the inline (`cid:`) images its HTML refers to as data: URLs,
// within size limits; and what a failed load tells the user.
import type { InboxApi } from '../../api/types';
import { messageBodies } from '../../core/message';
import type { AttachmentInfo } from '../../core/wire';
import { contentIdOf, referencedContentIds } from '../../webview-ui/viewContent';
import type { Logger } from '../log';
import type { MessageRef } from '../inboxRef';

/** Largest inline (`cid:`) image fetched to show in the HTML; bigger ones stay as placeholders. */
const MAX_INLINE_IMAGE_BYTES = 2 * 1024 * 1024;
/** Total inline image bytes fetched for one message (they travel to the view as base64). */
const MAX_INLINE_TOTAL_BYTES = 8 * 1024 * 1024;
/** Raster types shown inline; the sanitizer accepts no others as data: URLs. */
const INLINE_IMAGE_TYPES = /^image\/(png|gif|jpe?g|webp|bmp|avif)$/i;

type FetchedMessage = Awaited<ReturnType<InboxApi['getMessage']>>;

/** What a panel shows of a message, fetched once and rendered again when a setting changes. */
export interface LoadedMessage {
  message: FetchedMessage;
  attachments?: AttachmentInfo[];
  raw?: string;
  /** What could not be loaded (attachments, raw source), for the view to say. */
  notes: string[];
  /** Inline images by content id, as data: URLs. */
  inline: Map<string, string>;
}

function errorCode(e: unknown): string | undefined {
  const c = (e as { code?: unknown } | null)?.code;
  return typeof c === 'string' ? c : undefined;
}

/** A load given up because another replaced it or the panel closed: nothing to tell. */
export function isCancelled(e: unknown): boolean {
  const name = (e as { name?: unknown } | null)?.name;
  return errorCode(e) === 'cancelled' || name === 'AbortError';
}

/** What the panel says of a failed load, and whether Retry may help. */
export function describeLoadError(e: unknown): { message: string; retryable: boolean } {
  const message = e instanceof Error && e.message ? e.message : 'The message could not be loaded.';
  switch (errorCode(e)) {
    case 'not_found':
      return { message: `${message} It may have been deleted or removed by retention.`, retryable: true };
    case 'unauthorized':
      return { message: `${message} Set the API token for this server, then retry.`, retryable: true };
    case 'invalid_input':
    case 'bad_request':
      return { message, retryable: false };
    default:
      return { message, retryable: true };
  }
}

/** Fetches the message and its extras; rejects only when the message itself cannot be fetched (or the load is cancelled). */
export async function loadMessage(api: InboxApi, ref: MessageRef, log: Logger, signal: AbortSignal): Promise<LoadedMessage> {
  const { domain, inbox, id } = ref;
  const message = await api.getMessage(domain, inbox, id, { signal });
  const notes: string[] = [];
  const [attachments, raw] = await Promise.all([
    message.kind === 'email'
      ? api.listAttachments(domain, inbox, id, { signal }).catch((e: unknown) => {
          if (isCancelled(e)) throw e;
          log.warn(`message view: attachments of ${id} could not be listed: ${(e as Error).message}`);
          notes.push(`Attachments could not be listed: ${(e as Error).message}`);
          return undefined;
        })
      : Promise.resolve(undefined),
    api.getRaw(domain, inbox, id, { signal }).catch((e: unknown) => {
      if (isCancelled(e)) throw e;
      log.warn(`message view: raw source of ${id} could not be loaded: ${(e as Error).message}`);
      notes.push(`The raw source could not be loaded: ${(e as Error).message}`);
      return undefined;
    }),
  ]);
  const inline = await loadInlineImages(api, ref, log, message, attachments ?? [], signal);
  return { message, attachments, raw, notes, inline };
}

/** Fetches inline images the HTML refers to by `cid:`, within the size limits, as data: URLs. */
async function loadInlineImages(api: InboxApi, ref: MessageRef, log: Logger, message: FetchedMessage, attachments: AttachmentInfo[], signal: AbortSignal): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const html = messageBodies(message).html;
  if (!html || !html.toLowerCase().includes('cid:')) return out;
  const wanted = referencedContentIds(html);
  let total = 0;
  for (const a of attachments) {
    const cid = contentIdOf(a);
    if (!cid || !wanted.has(cid) || !INLINE_IMAGE_TYPES.test(a['content-type'] ?? '')) continue;
    if (a.size > MAX_INLINE_IMAGE_BYTES || total + a.size > MAX_INLINE_TOTAL_BYTES) continue;
    try {
      const file = await api.downloadAttachment(ref.domain, ref.inbox, ref.id, a.attachment_id, { signal });
      if (file.bytes.byteLength > MAX_INLINE_IMAGE_BYTES) continue;
      total += file.bytes.byteLength;
      const type = INLINE_IMAGE_TYPES.test(file.contentType.split(';')[0].trim()) ? file.contentType.split(';')[0].trim() : a['content-type'];
      out.set(cid, `data:${type.toLowerCase()};base64,${Buffer.from(file.bytes).toString('base64')}`);
    } catch (e) {
      if (isCancelled(e)) throw e;
      log.warn(`message view: inline image ${a.attachment_id} of ${ref.id} could not be loaded: ${(e as Error).message}`);
    }
  }
  return out;
}
