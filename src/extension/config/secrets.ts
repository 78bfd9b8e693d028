// Every secret key in one module. Tokens live only in the extension's SecretStorage, keyed
// by server URL. No vscode import: the store takes anything shaped like SecretStorage.

export type TokenKind = 'api' | 'webhook' | 'twilio';

/** The name each kind has in its secret key. */
const KEY_NAMES: Record<TokenKind, string> = { api: 'apiToken', webhook: 'webhookToken', twilio: 'twilioAuthToken' };

/** Prefix of every secret key, so they are recognisable in a secret-storage dump. */
const SECRET_PREFIX = 'testInbox';

/** The secret key of a token for one server (`baseUrl` already normalised). */
export function secretKey(kind: TokenKind, baseUrl: string): string {
  return `${SECRET_PREFIX}.${KEY_NAMES[kind]}:${baseUrl}`;
}

/** Parses a key made by `secretKey`, or undefined for someone else's key. */
export function parseSecretKey(key: string): { kind: TokenKind; baseUrl: string } | undefined {
  const m = /^testInbox\.(apiToken|webhookToken|twilioAuthToken):(.+)$/.exec(key);
  if (!m) return undefined;
  const kind = (Object.keys(KEY_NAMES) as TokenKind[]).find((k) => KEY_NAMES[k] === m[1]);
  return kind && { kind, baseUrl: m[2] };
}

/** The subset of vscode.SecretStorage used here. */
export interface SecretStorageLike {
  get(key: string): Thenable<string | undefined>;
  store(key: string, value: string): Thenable<void>;
  delete(key: string): Thenable<void>;
  onDidChange(listener: (e: { key: string }) => unknown): { dispose(): unknown };
}

/** Longest token accepted from the user: real tokens are far shorter; this stops pasted documents. */
const MAX_TOKEN_LENGTH = 4096;

/** Why a token typed by the user is not acceptable, or undefined. */
export function tokenProblem(token: string): string | undefined {
  if (token.trim() === '') return 'The token is empty.';
  if (token.length > MAX_TOKEN_LENGTH) return `The token is longer than ${MAX_TOKEN_LENGTH} characters.`;
  if (/\s/.test(token.trim())) return 'A token has no spaces or line breaks.';
  if (/[\u0000-\u001f\u007f]/.test(token.trim())) return 'The token contains control characters.';
  return undefined;
}

export class TokenStore {
  constructor(private readonly secrets: SecretStorageLike) {}

  get(kind: TokenKind, baseUrl: string): Promise<string | undefined> {
    return Promise.resolve(this.secrets.get(secretKey(kind, baseUrl)));
  }

  async set(kind: TokenKind, baseUrl: string, token: string): Promise<void> {
    const problem = tokenProblem(token);
    if (problem) throw new Error(problem);
    await this.secrets.store(secretKey(kind, baseUrl), token.trim());
  }

  async clear(kind: TokenKind, baseUrl: string): Promise<void> {
    await this.secrets.delete(secretKey(kind, baseUrl));
  }

  /** Calls back with the server URL whose token changed. */
  onDidChange(listener: (change: { kind: TokenKind; baseUrl: string }) => void): { dispose(): unknown } {
    return this.secrets.onDidChange((e) => {
      const parsed = parseSecretKey(e.key);
      if (parsed) listener(parsed);
    });
  }
}

/** The one secret that holds the named TOTP secrets of Copy TOTP Code… (a JSON object, name → secret and parameters). */
export const TOTP_SECRETS_KEY = `${SECRET_PREFIX}.totpSecrets`;
/** Longest name of a TOTP secret. */
const MAX_TOTP_NAME_LENGTH = 100;
/** Most named TOTP secrets kept: a picker, not a vault. */
const MAX_TOTP_SECRETS = 200;

/** A stored TOTP secret: base32, with the parameters of its otpauth URI (or the defaults). */
export interface StoredTotpSecret {
  secret: string;
  algorithm: 'SHA1' | 'SHA256' | 'SHA512';
  digits: number;
  period: number;
}

/** Why a name for a TOTP secret is not acceptable, or undefined. */
export function totpNameProblem(name: string): string | undefined {
  const n = name.trim();
  if (n === '') return 'Give the secret a name.';
  if (n.length > MAX_TOTP_NAME_LENGTH) return `The name is longer than ${MAX_TOTP_NAME_LENGTH} characters.`;
  if (/[\u0000-\u001f\u007f]/.test(n)) return 'The name contains control characters.';
  return undefined;
}

function isStored(v: unknown): v is StoredTotpSecret {
  const o = v as Partial<StoredTotpSecret> | null;
  return (
    typeof o === 'object' && o !== null && typeof o.secret === 'string' && /^[A-Z2-7]+$/.test(o.secret) &&
    (o.algorithm === 'SHA1' || o.algorithm === 'SHA256' || o.algorithm === 'SHA512') && Number.isInteger(o.digits) && Number.isInteger(o.period)
  );
}

/** Named TOTP secrets in SecretStorage. Entries that do not parse are skipped, never thrown on. */
export class TotpSecretStore {
  constructor(private readonly secrets: SecretStorageLike) {}

  private async read(): Promise<Map<string, StoredTotpSecret>> {
    const raw = await this.secrets.get(TOTP_SECRETS_KEY);
    const out = new Map<string, StoredTotpSecret>();
    if (!raw) return out;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      return out;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return out;
    for (const [name, v] of Object.entries(parsed as Record<string, unknown>)) {
      if (isStored(v) && !totpNameProblem(name)) out.set(name, { secret: v.secret, algorithm: v.algorithm, digits: v.digits, period: v.period });
    }
    return out;
  }

  private async write(all: Map<string, StoredTotpSecret>): Promise<void> {
    if (all.size === 0) await this.secrets.delete(TOTP_SECRETS_KEY);
    else await this.secrets.store(TOTP_SECRETS_KEY, JSON.stringify(Object.fromEntries(all)));
  }

  /** The names, sorted. */
  async names(): Promise<string[]> {
    return [...(await this.read()).keys()].sort((a, b) => a.localeCompare(b));
  }

  async get(name: string): Promise<StoredTotpSecret | undefined> {
    return (await this.read()).get(name);
  }

  /** Adds or replaces the secret of a name. */
  async set(name: string, secret: StoredTotpSecret): Promise<void> {
    const problem = totpNameProblem(name);
    if (problem) throw new Error(problem);
    const all = await this.read();
    const key = name.trim();
    if (!all.has(key) && all.size >= MAX_TOTP_SECRETS) throw new Error(`At most ${MAX_TOTP_SECRETS} TOTP secrets are kept; remove one first.`);
    all.set(key, { secret: secret.secret, algorithm: secret.algorithm, digits: secret.digits, period: secret.period });
    await this.write(all);
  }

  /** Removes a name; true when it was there. */
  async remove(name: string): Promise<boolean> {
    const all = await this.read();
    const had = all.delete(name);
    if (had) await this.write(all);
    return had;
  }
}
