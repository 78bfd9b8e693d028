// The one way a fetched message is split into its text and HTML bodies: used for code
// extraction (Copy One-Time Code, Wait for Code, notifications) and by the message view, so
// they always look at the same text. Pure, no vscode import.
import type { Message } from './types';

export interface MessageBodies {
  text?: string;
  html?: string;
}

export interface MessageTexts {
  subject: string;
  text: string;
  html: string;
  /**
   * `sms` lets code extraction apply its SMS rules to an SMS of any length. Left out for
   * email, so a short plain-text email (an injected test message) is still judged by length.
   */
  kind?: 'sms';
}

function header(headers: Record<string, string> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return v;
  return undefined;
}

/**
 * The text and HTML bodies of a message: an SMS's parts as text; an email's text/plain (or
 * untyped) and text/html parts that are not attachments, each kind joined by newlines.
 */
export function messageBodies(m: Message): MessageBodies {
  if (m.kind === 'sms') return { text: m.parts.map((p) => p.body).join('\n') };
  const text: string[] = [];
  const html: string[] = [];
  for (const part of m.parts) {
    const type = (header(part.headers, 'content-type') ?? '').toLowerCase().trim();
    const disposition = (header(part.headers, 'content-disposition') ?? '').toLowerCase().trim();
    if (disposition.startsWith('attachment')) continue;
    if (type.startsWith('text/html')) html.push(part.body);
    else if (type.startsWith('text/plain') || type === '') text.push(part.body);
  }
  const out: MessageBodies = {};
  if (text.length > 0) out.text = text.join('\n');
  if (html.length > 0) out.html = html.join('\n');
  return out;
}

/** Subject and bodies of a message for code extraction. */
export function messageTexts(m: Message): MessageTexts {
  const b = messageBodies(m);
  const texts: MessageTexts = { subject: m.subject ?? '', text: b.text ?? '', html: b.html ?? '' };
  if (m.kind === 'sms') texts.kind = 'sms';
  return texts;
}
