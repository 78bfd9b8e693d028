// The text, HTML and subject of a fetched message, for code extraction. Pure.
import type { Message } from '../api/types';

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

function contentType(headers: Record<string, string> | undefined): string {
  if (!headers) return '';
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === 'content-type') return v.toLowerCase();
  return '';
}

export function messageTexts(m: Message): MessageTexts {
  if (m.kind === 'sms') return { subject: m.subject ?? '', text: m.parts.map((p) => p.body).join('\n'), html: '', kind: 'sms' };
  const text: string[] = [];
  const html: string[] = [];
  for (const p of m.parts) {
    const ct = contentType(p.headers);
    if (ct.startsWith('text/html')) html.push(p.body);
    else if (ct.startsWith('text/plain') || ct === '') text.push(p.body);
  }
  return { subject: m.subject ?? '', text: text.join('\n'), html: html.join('\n') };
}
