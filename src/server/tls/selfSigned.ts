// A self-signed X.509 certificate for the local SMTP server's TLS, made with node:crypto.
//
// Why not a library: Node 20 generates the key pair, signs, and parses certificates
// (X509Certificate), but has no API to *create* one. The packages that do (`selfsigned` 5,
// which wraps @peculiar/x509 and pkijs; node-forge) add 80–90 KB compressed to dist/cli.js,
// which ships in the VSIX (limit 600 KB), for a feature that is off by default. What is
// missing is only the DER encoding of one fixed certificate shape (RFC 5280 §4.1), below;
// the tests read every certificate back with X509Certificate and verify it with OpenSSL in
// real TLS handshakes (nodemailer, Python's ssl).
//
// The shape is that of `openssl req -x509`: v3, RSA-2048 with SHA-256, subject = issuer,
// basicConstraints CA:TRUE and keyUsage (both critical), subject and authority key identifiers, plus
// subjectAltName for the names clients connect to. Trusting this one certificate (e.g.
// Python's `cafile=`, nodemailer's `tls.ca`) then verifies the server.

import { createHash, generateKeyPair, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';

/** RSA-2048: what every SMTP client library verifies (older Java and PHP stacks included). */
const SELF_SIGNED_KEY_BITS = 2048;

interface SelfSignedOptions {
  /** Subject and issuer common name. */
  commonName: string;
  /** Host names and IP addresses (v4 or v6) clients may connect to; they go into subjectAltName. */
  altNames: string[];
  /** Start of validity. Default: now minus a day (clocks of clients differ). */
  notBefore?: Date;
  notAfter: Date;
}

interface SelfSigned {
  /** PEM `CERTIFICATE`. */
  cert: string;
  /** PEM `PRIVATE KEY` (PKCS#8), unencrypted: it is written to a 0600 file. */
  key: string;
}

// ---- DER (X.690) ----------------------------------------------------------------------------
// Exported for the local CA of the CONNECT proxy (localCa.ts), which builds other shapes from them.

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
}

export const seq = (...items: Buffer[]): Buffer => tlv(0x30, ...items);
export const set = (...items: Buffer[]): Buffer => tlv(0x31, ...items);
/** Context-specific, constructed ([n] EXPLICIT). */
export const explicit = (n: number, inner: Buffer): Buffer => tlv(0xa0 | n, inner);
const NULL = Buffer.from([0x05, 0x00]);
export const TRUE = Buffer.from([0x01, 0x01, 0xff]);

/** A non-negative INTEGER from big-endian bytes (a leading 0 keeps it positive). */
export function integer(bytes: Buffer): Buffer {
  let b = bytes;
  while (b.length > 1 && b[0] === 0 && b[1] < 0x80) b = b.subarray(1);
  return tlv(0x02, b[0] >= 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
}

export function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const out: number[] = [40 * parts[0] + parts[1]];
  for (const p of parts.slice(2)) {
    const base128: number[] = [];
    for (let v = p; ; v = Math.floor(v / 128)) {
      base128.unshift((v & 0x7f) | (base128.length > 0 ? 0x80 : 0));
      if (v < 128) break;
    }
    out.push(...base128);
  }
  return tlv(0x06, Buffer.from(out));
}

export const utf8 = (s: string): Buffer => tlv(0x0c, Buffer.from(s, 'utf8'));
export const octets = (b: Buffer): Buffer => tlv(0x04, b);
/** BIT STRING with no unused bits. */
export const bits = (b: Buffer): Buffer => tlv(0x03, Buffer.from([0]), b);

/** RFC 5280 §4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050. */
export function time(d: Date): Buffer {
  const iso = d.toISOString(); // 2026-11-23T08:31:17.000Z
  const digits = iso.slice(0, 19).replace(/[-:T]/g, ''); // 20261123083117
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(`${digits.slice(2)}Z`, 'ascii')) : tlv(0x18, Buffer.from(`${digits}Z`, 'ascii'));
}

// ---- The certificate ------------------------------------------------------------------------

export const OID = {
  sha256WithRSAEncryption: '1.2.840.113549.1.1.11',
  commonName: '2.5.4.3',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyIdentifier: '2.5.29.35',
};

export function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return critical ? seq(oid(id), TRUE, octets(value)) : seq(oid(id), octets(value));
}

/** GeneralName: [2] dNSName (IA5String) or [7] iPAddress (4 or 16 octets), both IMPLICIT. */
export function generalName(name: string): Buffer {
  const family = isIP(name);
  if (family === 4) return tlv(0x87, Buffer.from(name.split('.').map(Number)));
  if (family === 6) return tlv(0x87, ipv6Bytes(name));
  return tlv(0x82, Buffer.from(name, 'ascii'));
}

function ipv6Bytes(ip: string): Buffer {
  const [head, tail = ''] = ip.split('::');
  const groups = (s: string): number[] => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const h = groups(head);
  const t = ip.includes('::') ? groups(tail) : [];
  const all = [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
  const out = Buffer.alloc(16);
  all.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return out;
}

/** Whether a name can go into subjectAltName: an IP address or a DNS name of ASCII labels. */
export function isCertificateName(name: string): boolean {
  return isIP(name) !== 0 || /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i.test(name);
}

function keyPair(): Promise<{ publicKey: KeyObject; privateKey: KeyObject }> {
  return new Promise((resolve, reject) => {
    generateKeyPair('rsa', { modulusLength: SELF_SIGNED_KEY_BITS, publicExponent: 0x10001 }, (err, publicKey, privateKey) => (err ? reject(err) : resolve({ publicKey, privateKey })));
  });
}

export function pem(label: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

/** A new key pair and a self-signed certificate for it. The key is generated off the main thread. */
export async function createSelfSigned(options: SelfSignedOptions): Promise<SelfSigned> {
  const names = [...new Set(options.altNames)];
  const bad = names.find((n) => !isCertificateName(n));
  if (bad !== undefined) throw new RangeError(`cannot put ${JSON.stringify(bad)} into a certificate: not a host name or IP address`);
  const notBefore = options.notBefore ?? new Date(Date.now() - 24 * 3600_000);
  if (!(options.notAfter > notBefore)) throw new RangeError('notAfter must be after notBefore');

  const { publicKey, privateKey } = await keyPair();
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  // Key identifier: SHA-1 of the public key info (RFC 7093 §2 allows a hash of the whole SPKI).
  const keyId = createHash('sha1').update(spki).digest();
  const algorithm = seq(oid(OID.sha256WithRSAEncryption), NULL);
  const name = seq(set(seq(oid(OID.commonName), utf8(options.commonName))));
  // 16 random bytes, top bit cleared: positive and at most 20 octets (RFC 5280 §4.1.2.2).
  const serial = randomBytes(16);
  serial[0] &= 0x7f;
  serial[0] |= 0x01;

  const extensions = seq(
    extension(OID.basicConstraints, true, seq(TRUE)),
    // digitalSignature, keyEncipherment (TLS with RSA) and keyCertSign (it signs itself): 0xa4, 2 unused bits.
    extension(OID.keyUsage, true, Buffer.from([0x03, 0x02, 0x02, 0xa4])),
    extension(OID.subjectKeyIdentifier, false, octets(keyId)),
    extension(OID.authorityKeyIdentifier, false, seq(tlv(0x80, keyId))),
    ...(names.length > 0 ? [extension(OID.subjectAltName, false, seq(...names.map(generalName)))] : []),
  );
  const tbs = seq(
    explicit(0, integer(Buffer.from([2]))), // v3
    integer(serial),
    algorithm,
    name,
    seq(time(notBefore), time(options.notAfter)),
    name,
    spki,
    explicit(3, extensions),
  );
  const signature = sign('sha256', tbs, privateKey);
  const cert = seq(tbs, algorithm, bits(signature));
  return { cert: pem('CERTIFICATE', cert), key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}
