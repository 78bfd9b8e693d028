// Proofs of identity in the `/healthz` answer (docs/architecture.md, "Proof of identity"):
// the server answers a client's random challenge with an HMAC that only the right server can
// compute, before any request carries a token. Web Crypto only, so the extension, the server,
// the API client and the test library share this one implementation.

/** The query parameter of `/healthz` carrying the client's challenge. */
export const HEALTH_CHALLENGE_PARAM = 'challenge';
/** A challenge is a random token; anything longer than this is not one. */
export const MAX_CHALLENGE_LENGTH = 128;

/**
 * PBKDF2 rounds that turn an API token into the key of its proof. The answer to any challenge
 * goes to whoever asks, so the key must not be cheap to guess from it: a token a person chose
 * costs a guesser this many SHA-256 rounds per try. Each side derives it once per token.
 */
const TOKEN_PROOF_ROUNDS = 100_000;
const TOKEN_PROOF_SALT = 'test-inbox token proof v1';

const encode = (s: string): Uint8Array<ArrayBuffer> => new TextEncoder().encode(s);
const hex = (buf: ArrayBuffer): string => Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, '0')).join('');

/** HMAC-SHA256 of `message` keyed by `key`, hex. */
export async function hmacHex(key: string, message: string): Promise<string> {
  const k = await globalThis.crypto.subtle.importKey('raw', encode(key), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return hex(await globalThis.crypto.subtle.sign('HMAC', k, encode(message)));
}

/**
 * Keys derived in this process, by token, newest last: a process that connects again with the
 * same token (the test library's every wait, the extension's every reconnect) derives it once.
 * Bounded, as a process may see many tokens; the tokens are already in this process's memory.
 */
const derivedKeys = new Map<string, Promise<string>>();
const MAX_DERIVED_KEYS = 16;

/** The key of an API token's proof (hex): PBKDF2-SHA256 of the token, TOKEN_PROOF_ROUNDS rounds, once per token in a process. */
export function tokenProofKey(apiToken: string): Promise<string> {
  const known = derivedKeys.get(apiToken);
  if (known !== undefined) return known;
  const key = deriveProofKey(apiToken);
  derivedKeys.set(apiToken, key);
  if (derivedKeys.size > MAX_DERIVED_KEYS) derivedKeys.delete(derivedKeys.keys().next().value as string);
  // A failed derivation is forgotten, unless a newer one for the token took its place meanwhile.
  key.catch(() => derivedKeys.get(apiToken) === key && derivedKeys.delete(apiToken));
  return key;
}

async function deriveProofKey(apiToken: string): Promise<string> {
  const base = await globalThis.crypto.subtle.importKey('raw', encode(apiToken), 'PBKDF2', false, ['deriveBits']);
  return hex(await globalThis.crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt: encode(TOKEN_PROOF_SALT), iterations: TOKEN_PROOF_ROUNDS }, base, 256));
}

/** Equal proofs, compared without an early exit (a proof is hex of fixed length). */
export function sameProof(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
