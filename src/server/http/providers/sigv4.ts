// AWS Signature Version 4 of a request to the SES route, checked with @smithy/signature-v4 (the
// signer the AWS SDKs use): the request is signed again with the provider key as the secret
// access key, from the signed headers, the date and the credential scope the request names, and
// the two signatures are compared in constant time. Any access key id is taken.
import { createHash, createHmac, type Hash, type Hmac, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import { SignatureV4 } from '@smithy/signature-v4';

/** AWS refuses a signature dated further than this from its clock. */
const SIGNATURE_WINDOW_MS = 5 * 60 * 1000;

export interface SignedRequest {
  accessKeyId: string;
  /** `YYYYMMDD/region/service/aws4_request`. */
  date: string;
  region: string;
  service: string;
  signedHeaders: string[];
  signature: string;
  /** The X-Amz-Date, as sent and as a time. */
  amzDate: string;
  time: number;
}

/** Why a request's signature cannot even be checked: AWS's error name and message. */
type SignatureProblem = { name: 'MissingAuthenticationTokenException' | 'IncompleteSignatureException'; message: string };

const AUTH_RE = /^AWS4-HMAC-SHA256\s+Credential=([^/,\s]+)\/(\d{8})\/([^/,\s]+)\/([^/,\s]+)\/aws4_request,\s*SignedHeaders=([a-z0-9;_.-]+),\s*Signature=([0-9a-f]{64})\s*$/;
const AMZ_DATE_RE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;

/** The parts of a SigV4 Authorization header, or what is missing from it. */
export function readSignature(req: http.IncomingMessage): SignedRequest | SignatureProblem {
  const auth = req.headers.authorization;
  if (auth === undefined || auth === '') return { name: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' };
  const m = AUTH_RE.exec(auth);
  if (!m) return { name: 'IncompleteSignatureException', message: "Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters of an AWS4-HMAC-SHA256 signature." };
  const amzDate = req.headers['x-amz-date'];
  const d = typeof amzDate === 'string' ? AMZ_DATE_RE.exec(amzDate) : null;
  if (!d || typeof amzDate !== 'string') return { name: 'IncompleteSignatureException', message: "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header." };
  const time = Date.UTC(Number(d[1]), Number(d[2]) - 1, Number(d[3]), Number(d[4]), Number(d[5]), Number(d[6]));
  if (!amzDate.startsWith(m[2])) return { name: 'IncompleteSignatureException', message: `The date of the credential scope ${m[2]} is not the date of X-Amz-Date ${amzDate}.` };
  const signedHeaders = m[5].split(';');
  if (!signedHeaders.includes('host')) return { name: 'IncompleteSignatureException', message: "'Host' must be a signed header." };
  return { accessKeyId: m[1], date: m[2], region: m[3], service: m[4], signedHeaders, signature: m[6], amzDate, time };
}

/** AWS's timestamp form of a time, `20250101T000000Z`. */
function amzDateOf(time: number): string {
  return new Date(time).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

/** Why the request's date is outside AWS's window around `now`, in AWS's words; undefined when inside. */
export function windowProblem(s: SignedRequest, now: number): string | undefined {
  if (s.time < now - SIGNATURE_WINDOW_MS) return `Signature expired: ${s.amzDate} is now earlier than ${amzDateOf(now - SIGNATURE_WINDOW_MS)} (${amzDateOf(now)} - 5 min.)`;
  if (s.time > now + SIGNATURE_WINDOW_MS) return `Signature not yet current: ${s.amzDate} is still later than ${amzDateOf(now + SIGNATURE_WINDOW_MS)} (${amzDateOf(now)} + 5 min.)`;
  return undefined;
}

/** SHA-256 and HMAC-SHA256 from node:crypto, in the shape the signer takes. */
class Sha256 {
  #h: Hash | Hmac;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.#h = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.#h.update(bytes(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.#h.digest()));
  }
  reset(): void {
    // The signer makes a new hash for each use.
  }
}

function bytes(v: string | ArrayBuffer | ArrayBufferView): string | Uint8Array {
  if (typeof v === 'string') return v;
  return v instanceof ArrayBuffer ? new Uint8Array(v) : new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
}

/**
 * True when the request, with this body, carries the signature the key makes. Without a body
 * (before it is read) only a request that signs its body's hash (`x-amz-content-sha256`, a hex
 * SHA-256, as the AWS SDKs send) can be checked: the signature covers that stated hash, and the
 * body read later must then be the one it names (checked again with the body).
 */
export async function signatureMatches(secret: string, s: SignedRequest, req: http.IncomingMessage, body: Buffer | undefined): Promise<boolean> {
  const headers: Record<string, string> = {};
  for (const name of s.signedHeaders) {
    const v = req.headers[name];
    if (v === undefined) return false;
    headers[name] = Array.isArray(v) ? v.join(',') : v;
  }
  // A hash the client states must be the body's: the signer would otherwise sign the stated one.
  // `UNSIGNED-PAYLOAD` (a signature that covers no body) is no hash of it, so it is refused too:
  // the signature always covers the body received. The AWS SDKs send SES the body's hash.
  const stated = headers['x-amz-content-sha256'];
  if (body === undefined) {
    if (stated === undefined || !/^[0-9a-f]{64}$/.test(stated)) return false;
  } else if (stated !== undefined && stated !== createHash('sha256').update(body).digest('hex')) return false;
  const target = req.url ?? '/';
  const q = target.indexOf('?');
  const query: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(q >= 0 ? target.slice(q + 1) : '')) {
    const prev = query[k];
    query[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  const signer = new SignatureV4({ credentials: { accessKeyId: s.accessKeyId, secretAccessKey: secret }, region: s.region, service: s.service, sha256: Sha256, applyChecksum: false });
  const signed = await signer.sign(
    { method: req.method ?? 'POST', protocol: 'http:', hostname: '', path: q >= 0 ? target.slice(0, q) : target, query, headers, body },
    { signingDate: new Date(s.time), signingRegion: s.region, signingService: s.service, signableHeaders: new Set(s.signedHeaders) },
  );
  const expected = /Signature=([0-9a-f]{64})/.exec(String(signed.headers.authorization))?.[1] ?? '';
  return expected.length === s.signature.length && timingSafeEqual(Buffer.from(expected), Buffer.from(s.signature));
}
