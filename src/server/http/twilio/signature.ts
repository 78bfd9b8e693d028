// The `X-Twilio-Signature` of an inbound webhook: base64 of HMAC-SHA1, keyed with the auth
// token, over the full URL Twilio requested followed by every form field as name + value, the
// names in sorted order (a repeated name: its distinct values sorted). Compared in constant time.
// A body that is not a form (JSON) is signed through the URL alone, which carries the body's
// SHA-256 in its `bodySHA256` query parameter (the SDKs' validateRequestWithBody).
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FormFields } from './form';

export const SIGNATURE_HEADER = 'x-twilio-signature';

function twilioSignature(authToken: string, url: string, fields: FormFields): string {
  const byName = new Map<string, Set<string>>();
  for (const [n, v] of fields) {
    const set = byName.get(n) ?? new Set<string>();
    set.add(v);
    byName.set(n, set);
  }
  let data = url;
  for (const name of [...byName.keys()].sort()) {
    for (const value of [...(byName.get(name) ?? [])].sort()) data += name + value;
  }
  return createHmac('sha1', authToken).update(Buffer.from(data, 'utf8')).digest('base64');
}

/**
 * The URLs Twilio may have signed for this request. Behind a tunnel or proxy the scheme and
 * host Twilio used differ from what reaches this server, so the forwarded ones are tried,
 * then both schemes, each with and without an explicit port.
 */
function candidateUrls(req: IncomingMessage): string[] {
  const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v)?.split(',')[0].trim() || undefined;
  const hosts = new Set<string>();
  for (const h of [first(req.headers['x-forwarded-host']), first(req.headers.host)]) {
    if (!h) continue;
    hosts.add(h);
    hosts.add(h.replace(/:\d+$/, ''));
  }
  const schemes = new Set<string>();
  const proto = first(req.headers['x-forwarded-proto']);
  if (proto === 'http' || proto === 'https') schemes.add(proto);
  schemes.add('https');
  schemes.add('http');
  const target = req.url ?? '/';
  const out: string[] = [];
  for (const s of schemes) for (const h of hosts) out.push(`${s}://${h}${target}`);
  return out;
}

/** True when the request's signature matches one of the URLs it may have been sent to. */
export function verifySignature(authToken: string, req: IncomingMessage, fields: FormFields): boolean {
  const header = req.headers[SIGNATURE_HEADER];
  const given = Buffer.from(typeof header === 'string' ? header : '', 'utf8');
  if (given.length === 0) return false;
  let ok = false;
  for (const url of candidateUrls(req)) {
    const expected = Buffer.from(twilioSignature(authToken, url, fields), 'utf8');
    // Every candidate is compared (no early exit), each in constant time.
    if (expected.length === given.length && timingSafeEqual(expected, given)) ok = true;
  }
  return ok;
}

/** True when a request whose body is not a form is signed: its URL's `bodySHA256` is the body's hash, and the signature covers that URL. */
export function verifyBodySignature(authToken: string, req: IncomingMessage, body: Buffer): boolean {
  const given = Buffer.from(new URL(req.url ?? '/', 'http://x').searchParams.get('bodySHA256') ?? '', 'utf8');
  const expected = Buffer.from(createHash('sha256').update(body).digest('hex'), 'utf8');
  const hashOk = given.length === expected.length && timingSafeEqual(given, expected);
  // The signature is always checked, so a wrong hash and a wrong signature take the same time.
  const signed = verifySignature(authToken, req, []);
  return hashOk && signed;
}
