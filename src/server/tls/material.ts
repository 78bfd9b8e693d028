// The certificate and key of the local SMTP server's TLS: the user's own files
// (`--smtp-tls-cert`, `--smtp-tls-key`), or a self-signed pair generated once into the data
// folder (`<data>/.tls/`, the key 0600) and reused while it is valid for the names served.

import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { isIP } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { createSecureContext } from 'node:tls';
import { isWildcardHost } from '../../core/urls';
import { SMTP_TLS_CERT_FILE, SMTP_TLS_DIR, SMTP_TLS_KEY_FILE } from '../../shared/contract';
import { writePrivateFile } from '../../shared/privateFile';
import { createSelfSigned, isCertificateName } from './selfSigned';
import { codedError, type CodedError } from '../../core/errors';

/**
 * 825 days: the longest validity Apple's platforms accept for a TLS server certificate, so
 * the generated one still works when a user adds it to the macOS keychain.
 */
const SELF_SIGNED_VALIDITY_DAYS = 825;
/** A generated certificate this close to its end is replaced at start, before clients see it expire. */
const SELF_SIGNED_RENEW_DAYS = 30;
/** Common name of the generated certificate. */
const SELF_SIGNED_COMMON_NAME = 'Test Inbox local SMTP';
/** Largest certificate or key file read: PEM chains are a few KB. */
const MAX_PEM_BYTES = 1024 * 1024;
const DAY_MS = 86_400_000;
/** The certificate is public (clients are given it to trust): readable by others. */
const CERT_FILE_MODE = 0o644;

type SmtpTlsErrorCode = 'tls_files' | 'tls_io';

/** A certificate or key that cannot be used, with what to do about it. */
export const SmtpTlsError = codedError<SmtpTlsErrorCode>('SmtpTlsError');
export type SmtpTlsError = CodedError<SmtpTlsErrorCode>;

export interface SmtpTlsMaterial {
  /** PEM certificate (a chain when the user's file holds one). */
  cert: string;
  /** PEM private key. */
  key: string;
  /** Where the certificate is, to tell users what to trust. */
  certFile: string;
  /** True when it is the generated self-signed certificate. */
  selfSigned: boolean;
}

/** The names a generated certificate is made for: the loopback names and the bound host. */
function certificateNames(host: string): string[] {
  const names = ['localhost', '127.0.0.1', '::1'];
  const extra = isWildcardHost(host) ? os.hostname().toLowerCase() : host.replace(/^\[|\]$/g, '').toLowerCase();
  if (isCertificateName(extra) && !names.includes(extra)) names.push(extra);
  return names;
}

async function readPem(file: string, what: string, flag: string): Promise<string> {
  let stat;
  try {
    stat = await fs.stat(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new SmtpTlsError('tls_files', code === 'ENOENT' ? `${flag} ${file}: no such file` : `${flag} ${file}: cannot read the ${what} (${(e as Error).message})`, { cause: e });
  }
  if (!stat.isFile()) throw new SmtpTlsError('tls_files', `${flag} ${file}: not a file`);
  if (stat.size > MAX_PEM_BYTES) throw new SmtpTlsError('tls_files', `${flag} ${file}: larger than ${MAX_PEM_BYTES} bytes, not a PEM ${what}`);
  try {
    return await fs.readFile(file, 'utf8');
  } catch (e) {
    throw new SmtpTlsError('tls_files', `${flag} ${file}: cannot read the ${what} (${(e as Error).message})`, { cause: e });
  }
}

/** The leaf certificate and key of PEM texts, or why they do not make a TLS server identity. */
function checkPair(certPem: string, keyPem: string): { cert: X509Certificate; key: KeyObject } | string {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch {
    return 'the certificate file holds no PEM certificate (-----BEGIN CERTIFICATE-----)';
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(keyPem);
  } catch {
    return 'the key file holds no unencrypted PEM private key (-----BEGIN PRIVATE KEY----- or RSA/EC PRIVATE KEY)';
  }
  if (!cert.checkPrivateKey(key)) return 'the private key does not belong to the certificate';
  try {
    createSecureContext({ cert: certPem, key: keyPem });
  } catch (e) {
    return `TLS cannot use them: ${(e as Error).message}`;
  }
  return { cert, key };
}

/** The user's certificate and key (`--smtp-tls-cert`, `--smtp-tls-key`), checked to belong together. */
export async function loadOwnTlsFiles(certFile: string, keyFile: string, log: (msg: string) => void = () => undefined): Promise<SmtpTlsMaterial> {
  const cert = await readPem(certFile, 'certificate', '--smtp-tls-cert');
  const key = await readPem(keyFile, 'private key', '--smtp-tls-key');
  const pair = checkPair(cert, key);
  if (typeof pair === 'string') throw new SmtpTlsError('tls_files', `--smtp-tls-cert ${certFile} / --smtp-tls-key ${keyFile}: ${pair}`);
  if (Date.parse(pair.cert.validTo) < Date.now()) log(`smtp tls: the certificate ${certFile} expired on ${pair.cert.validTo}; clients that verify it will refuse it`);
  return { cert, key, certFile: path.resolve(certFile), selfSigned: false };
}

/** Why a generated pair on disk must be replaced, or undefined when it serves `names`. */
function staleReason(certPem: string, keyPem: string, names: string[], now: number): string | undefined {
  const pair = checkPair(certPem, keyPem);
  if (typeof pair === 'string') return pair;
  if (Date.parse(pair.cert.validTo) - now < SELF_SIGNED_RENEW_DAYS * DAY_MS) return `it ends on ${pair.cert.validTo}`;
  const missing = names.find((n) => (isIP(n) !== 0 ? pair.cert.checkIP(n) === undefined : pair.cert.checkHost(n) === undefined));
  if (missing !== undefined) return `it does not name ${missing}`;
  return undefined;
}

/**
 * The self-signed certificate of the data folder (`<data>/.tls/`), generated when there is
 * none or when the one there no longer serves `host`. Call it with the data folder's lock
 * held (after the store opened), so that two servers never generate at once.
 */
export async function loadOrCreateSelfSigned(dataDir: string, host: string, log: (msg: string) => void = () => undefined): Promise<SmtpTlsMaterial> {
  const dir = path.join(dataDir, SMTP_TLS_DIR);
  const certFile = path.join(dir, SMTP_TLS_CERT_FILE);
  const keyFile = path.join(dir, SMTP_TLS_KEY_FILE);
  const names = certificateNames(host);
  const now = Date.now();
  let why = 'there is none yet';
  try {
    const [cert, key] = await Promise.all([fs.readFile(certFile, 'utf8'), fs.readFile(keyFile, 'utf8')]);
    const stale = staleReason(cert, key, names, now);
    if (stale === undefined) return { cert, key, certFile, selfSigned: true };
    why = `the one there cannot be used: ${stale}`;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') why = `the one there cannot be read (${(e as Error).message})`;
  }
  try {
    const made = await createSelfSigned({
      commonName: SELF_SIGNED_COMMON_NAME,
      altNames: names,
      notBefore: new Date(now - DAY_MS),
      notAfter: new Date(now + SELF_SIGNED_VALIDITY_DAYS * DAY_MS),
    });
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    // The key first: a crash between the two leaves no certificate, so the next start makes a new pair.
    await writePrivateFile(keyFile, made.key);
    await writePrivateFile(certFile, made.cert);
    await fs.chmod(certFile, CERT_FILE_MODE);
    log(`smtp tls: generated a self-signed certificate for ${names.join(', ')} (${why}): ${certFile}`);
    return { cert: made.cert, key: made.key, certFile, selfSigned: true };
  } catch (e) {
    throw new SmtpTlsError('tls_io', `cannot write the SMTP TLS certificate into ${dir}: ${(e as Error).message}`, { cause: e });
  }
}
