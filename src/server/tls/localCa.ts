// The local CA of the CONNECT proxy (`--compat`, docs/compat.md "Mailosaur"): a suite trusts it
// through NODE_EXTRA_CA_CERTS so that the Mailosaur SDK (and the provider SDKs) reach this
// server through `https_proxy` with their default base URLs. It can vouch for nothing else:
// - basicConstraints CA with pathLen 0 (critical), keyUsage keyCertSign only (critical),
//   extendedKeyUsage serverAuth only;
// - critical Name Constraints permitting exactly the proxied host names (http/compat/hosts.ts) as
//   dNSName subtrees and excluding every IPv4 and IPv6 address (0.0.0.0/0, ::/0);
// - valid at most CA_VALIDITY_DAYS, replaced at start when fewer than CA_RENEW_DAYS remain;
// - kept in `<data>/.compat-ca/`: the certificate readable (it is given to clients), the key 0600
//   and refused when another user can read it; never printed, logged or served.
// Leaf certificates are minted in memory once per host (P-256, signed by the CA) and cached.
import { X509Certificate, createHash, createPrivateKey, generateKeyPair, randomBytes, sign, type KeyObject } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { createSecureContext, type SecureContext } from 'node:tls';
import { modesApply } from '../../shared/portableFs';
import { writePrivateFile } from '../../shared/privateFile';
import { ownershipProblemOf } from '../serverFiles';
import { bits, explicit, extension, generalName, integer, oid, OID, octets, pem, seq, set, time, tlv, TRUE, utf8 } from './selfSigned';
import { codedError, type CodedError } from '../../core/errors';

/** Folder of the CA in the data folder, and its two files. */
export const CA_DIR = '.compat-ca';
export const CA_CERT_FILE = 'ca.pem';
export const CA_KEY_FILE = 'ca.key';
/** At most 90 days (issue 38): a CA that leaked is of no use for long. */
const CA_VALIDITY_DAYS = 90;
/** Replaced at start when this close to its end, so a long test run never sees it expire. */
const CA_RENEW_DAYS = 30;
const DAY_MS = 86_400_000;
const CA_COMMON_NAME = 'Test Inbox local CA (compat proxy; trust only in test processes)';
/** The certificate is public (clients are given it to trust): readable by others. */
const CERT_FILE_MODE = 0o644;

const EC = {
  ecdsaWithSHA256: '1.2.840.10045.4.3.2',
};
const EXT = {
  extKeyUsage: '2.5.29.37',
  nameConstraints: '2.5.29.30',
  serverAuth: '1.3.6.1.5.5.7.3.1',
};

/** A CA key that Test Inbox refuses to use (one readable by others): its one code. */
export const LocalCaError = codedError<'ca_key_unsafe'>('LocalCaError');
export type LocalCaError = CodedError<'ca_key_unsafe'>;

function ecKeyPair(): Promise<{ publicKey: KeyObject; privateKey: KeyObject }> {
  return new Promise((resolve, reject) => {
    generateKeyPair('ec', { namedCurve: 'prime256v1' }, (err, publicKey, privateKey) => (err ? reject(err) : resolve({ publicKey, privateKey })));
  });
}

function serial(): Buffer {
  const s = randomBytes(16);
  s[0] &= 0x7f;
  s[0] |= 0x01;
  return s;
}

const name = (cn: string): Buffer => seq(set(seq(oid(OID.commonName), utf8(cn))));
const keyIdOf = (spki: Buffer): Buffer => createHash('sha1').update(spki).digest();

/** Signs a TBSCertificate with the issuer's EC key: the DER certificate. */
function signed(tbs: Buffer, issuerKey: KeyObject): Buffer {
  const algorithm = seq(oid(EC.ecdsaWithSHA256));
  return seq(tbs, algorithm, bits(sign('sha256', tbs, issuerKey)));
}

function tbsOf(o: { serial: Buffer; issuer: Buffer; subject: Buffer; notBefore: Date; notAfter: Date; spki: Buffer; extensions: Buffer[] }): Buffer {
  return seq(explicit(0, integer(Buffer.from([2]))), integer(o.serial), seq(oid(EC.ecdsaWithSHA256)), o.issuer, seq(time(o.notBefore), time(o.notAfter)), o.subject, o.spki, explicit(3, seq(...o.extensions)));
}

/** NameConstraints: permitted dNSName subtrees for `hosts`, excluded iPAddress 0.0.0.0/0 and ::/0. */
function nameConstraints(hosts: readonly string[]): Buffer {
  const subtree = (general: Buffer): Buffer => seq(general);
  const permitted = tlv(0xa0, ...hosts.map((h) => subtree(generalName(h))));
  const excluded = tlv(0xa1, subtree(tlv(0x87, Buffer.alloc(8))), subtree(tlv(0x87, Buffer.alloc(32))));
  return seq(permitted, excluded);
}

/** A new CA for `hosts`: PEM certificate and PKCS#8 key. */
export async function createLocalCa(hosts: readonly string[], now: number): Promise<{ cert: string; key: string }> {
  const { publicKey, privateKey } = await ecKeyPair();
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const keyId = keyIdOf(spki);
  const subject = name(CA_COMMON_NAME);
  const tbs = tbsOf({
    serial: serial(),
    issuer: subject,
    subject,
    // An hour back for clocks that differ; the whole span stays within CA_VALIDITY_DAYS.
    notBefore: new Date(now - 3600_000),
    notAfter: new Date(now - 3600_000 + CA_VALIDITY_DAYS * DAY_MS),
    spki,
    extensions: [
      extension(OID.basicConstraints, true, seq(TRUE, integer(Buffer.from([0])))),
      // keyCertSign only (bit 5): 0x04, 2 unused bits.
      extension(OID.keyUsage, true, Buffer.from([0x03, 0x02, 0x02, 0x04])),
      extension(EXT.extKeyUsage, false, seq(oid(EXT.serverAuth))),
      extension(EXT.nameConstraints, true, nameConstraints(hosts)),
      extension(OID.subjectKeyIdentifier, false, octets(keyId)),
    ],
  });
  return { cert: pem('CERTIFICATE', signed(tbs, privateKey)), key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

/** A leaf certificate for `host`, signed by the CA, valid no longer than the CA. */
async function createLeaf(host: string, ca: X509Certificate, caKey: KeyObject, now: number): Promise<{ cert: string; key: string }> {
  const { publicKey, privateKey } = await ecKeyPair();
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const caSpki = ca.publicKey.export({ type: 'spki', format: 'der' });
  const tbs = tbsOf({
    serial: serial(),
    issuer: name(CA_COMMON_NAME),
    subject: name(host),
    notBefore: new Date(now - 3600_000),
    notAfter: new Date(Date.parse(ca.validTo)),
    spki,
    extensions: [
      extension(OID.basicConstraints, true, seq()),
      // digitalSignature only (bit 0): 0x80, 7 unused bits.
      extension(OID.keyUsage, true, Buffer.from([0x03, 0x02, 0x07, 0x80])),
      extension(EXT.extKeyUsage, false, seq(oid(EXT.serverAuth))),
      extension(OID.subjectKeyIdentifier, false, octets(keyIdOf(spki))),
      extension(OID.authorityKeyIdentifier, false, seq(tlv(0x80, keyIdOf(caSpki)))),
      extension(OID.subjectAltName, false, seq(generalName(host))),
    ],
  });
  return { cert: pem('CERTIFICATE', signed(tbs, caKey)), key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

/** The CA of a data folder, and the TLS contexts of the hosts it vouches for. */
export class LocalCa {
  /** Absolute path of the CA certificate's PEM (what NODE_EXTRA_CA_CERTS names); never the key. */
  readonly certFile: string;
  readonly #cert: X509Certificate;
  readonly #certPem: string;
  readonly #key: KeyObject;
  readonly #hosts: ReadonlySet<string>;
  readonly #leaves = new Map<string, Promise<SecureContext>>();

  private constructor(certFile: string, certPem: string, key: KeyObject, hosts: readonly string[]) {
    this.certFile = certFile;
    this.#certPem = certPem;
    this.#cert = new X509Certificate(certPem);
    this.#key = key;
    this.#hosts = new Set(hosts);
  }

  /**
   * The CA of `<dataDir>/.compat-ca/`, made when there is none, when it ends within
   * CA_RENEW_DAYS or names other hosts. A key file that another user owns or can read is
   * refused (LocalCaError), never replaced: someone else may hold it.
   */
  static async open(dataDir: string, hosts: readonly string[], log: (msg: string) => void = () => undefined): Promise<LocalCa> {
    const dir = path.join(dataDir, CA_DIR);
    const certFile = path.join(dir, CA_CERT_FILE);
    const keyFile = path.join(dir, CA_KEY_FILE);
    const now = Date.now();
    const problem = await keyFileProblem(keyFile);
    if (problem !== undefined) throw new LocalCaError('ca_key_unsafe', `the compat CA key ${keyFile} ${problem}; Test Inbox refuses it (as ssh refuses such a key): remove the folder ${dir} and start again to make a new CA`);
    let why = 'there is none yet';
    try {
      const [certPem, keyPem] = await Promise.all([fs.readFile(certFile, 'utf8'), fs.readFile(keyFile, 'utf8')]);
      const stale = staleReason(certPem, keyPem, hosts, now);
      if (stale === undefined) return new LocalCa(certFile, certPem, createPrivateKey(keyPem), hosts);
      why = stale;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') why = `the one there cannot be read (${(e as Error).message})`;
    }
    const made = await createLocalCa(hosts, now);
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    // The key first: a crash between the two leaves no certificate, so the next start makes a new pair.
    await writePrivateFile(keyFile, made.key);
    await writePrivateFile(certFile, made.cert);
    await fs.chmod(certFile, CERT_FILE_MODE);
    log(`compat: made a local CA for the CONNECT proxy (${why}): ${certFile}`);
    return new LocalCa(certFile, made.cert, createPrivateKey(made.key), hosts);
  }

  /** The CA certificate (PEM). */
  get certPem(): string {
    return this.#certPem;
  }

  /** The TLS context that presents `host`'s leaf certificate, minted on first use and cached; undefined for a host it does not vouch for. */
  contextFor(host: string): Promise<SecureContext> | undefined {
    if (!this.#hosts.has(host)) return undefined;
    let ctx = this.#leaves.get(host);
    if (!ctx) {
      ctx = createLeaf(host, this.#cert, this.#key, Date.now()).then((leaf) => createSecureContext({ cert: leaf.cert + this.#certPem, key: leaf.key }));
      ctx.catch(() => this.#leaves.delete(host));
      this.#leaves.set(host, ctx);
    }
    return ctx;
  }
}

/** Why the key file must not be used (another user owns it, or others can read or write it), or undefined. */
async function keyFileProblem(keyFile: string): Promise<string | undefined> {
  const owner = await ownershipProblemOf(keyFile, 'file');
  if (owner !== undefined) return `is not yours alone: ${owner}`;
  if (!modesApply(process.platform)) return undefined;
  try {
    const st = await fs.lstat(keyFile);
    if ((st.mode & 0o077) !== 0) return `can be read by other users (mode 0${(st.mode & 0o777).toString(8)})`;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  return undefined;
}

/** Why the CA on disk must be replaced, or undefined when it serves `hosts` for long enough. */
function staleReason(certPem: string, keyPem: string, hosts: readonly string[], now: number): string | undefined {
  let cert: X509Certificate;
  let key: KeyObject;
  try {
    cert = new X509Certificate(certPem);
    key = createPrivateKey(keyPem);
  } catch (e) {
    return `the one there cannot be parsed (${(e as Error).message})`;
  }
  if (!cert.ca || !cert.checkPrivateKey(key)) return 'the one there is not a CA with its key';
  if (Date.parse(cert.validTo) - now < CA_RENEW_DAYS * DAY_MS) return `the one there ends on ${cert.validTo}`;
  const permitted = permittedNames(cert.raw);
  if (permitted === undefined || permitted.length !== hosts.length || permitted.some((h, i) => h !== hosts[i])) return 'the one there names other hosts';
  return undefined;
}

/** One DER element at `at`: its tag, where its content starts and where it ends. */
function element(der: Buffer, at: number): { tag: number; start: number; end: number } {
  const tag = der[at];
  let len = der[at + 1];
  let start = at + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + der[start + i];
    start += n;
  }
  return { tag, start, end: start + len };
}

/** The dNSName subtrees a certificate's Name Constraints permit, in order; undefined when it has none. */
export function permittedNames(der: Buffer): string[] | undefined {
  const at = der.indexOf(Buffer.concat([oid(EXT.nameConstraints)]));
  if (at < 0) return undefined;
  let next = element(der, at).end;
  if (der[next] === 0x01) next = element(der, next).end; // critical
  const value = element(der, next); // OCTET STRING
  const constraints = element(der, value.start); // SEQUENCE
  const permitted = element(der, constraints.start);
  if (permitted.tag !== 0xa0) return undefined;
  const names: string[] = [];
  for (let p = permitted.start; p < permitted.end; ) {
    const subtree = element(der, p);
    const general = element(der, subtree.start);
    if (general.tag === 0x82) names.push(der.subarray(general.start, general.end).toString('latin1'));
    p = subtree.end;
  }
  return names;
}
