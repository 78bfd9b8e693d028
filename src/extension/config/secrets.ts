// Every secret key in one module. Tokens live only in the extension's SecretStorage, keyed
// by server URL. No vscode import: the store takes anything shaped like SecretStorage.

export type TokenKind = 'api' | 'webhook' | 'twilio';

/** The name each kind has in its secret key. */
const KEY_NAMES: Record<TokenKind, string> = { api: 'apiToken', webhook: 'webhookToken', twilio: 'twilioAuthToken' };

/** Prefix of every secret key, so they are recognisable in a secret-storage dump. */
export const SECRET_PREFIX = 'testInbox';

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
export const MAX_TOKEN_LENGTH = 4096;

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
