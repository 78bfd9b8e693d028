// TLS and AUTH of the SMTP listener, as smtp-server options. Kept apart from smtp.ts (ingest):
//
// - TLS is off by default. Advertising STARTTLS with a self-signed certificate breaks clients
//   that upgrade whenever it is offered and then verify the certificate (nodemailer's
//   defaults), so it is offered only when asked for (`starttls`), and `implicit` is TLS from
//   the first byte (the port-465 style, a listener of its own).
// - AUTH: by default any credentials (or none) are accepted, as a test server should. With
//   `credentials`, a client must log in with exactly those; others get 535, and mail without
//   AUTH gets 530.

import { createHash, timingSafeEqual } from 'node:crypto';
import type { SMTPServerAuthentication, SMTPServerAuthenticationResponse, SMTPServerOptions, SMTPServerSession } from 'smtp-server';

export interface SmtpCredentials {
  username: string;
  password: string;
}

interface SmtpTlsConfig {
  /** `starttls`: plain SMTP that offers STARTTLS; `implicit`: TLS from the first byte. */
  mode: 'starttls' | 'implicit';
  /** PEM. */
  key: string;
  /** PEM. */
  cert: string;
}

export interface SmtpSecurity {
  /** Absent: plain SMTP, no STARTTLS advertised. */
  tls?: SmtpTlsConfig;
  /** Absent: any AUTH, or none, is accepted. */
  credentials?: SmtpCredentials;
}

/** Every method smtp-server knows; with required credentials XOAUTH2 is left out (it carries a token, not the password). */
const ANY_AUTH_METHODS = ['PLAIN', 'LOGIN', 'CRAM-MD5', 'XOAUTH2'];
const PASSWORD_AUTH_METHODS = ['PLAIN', 'LOGIN', 'CRAM-MD5'];

/** RFC 4954 §6 reply to wrong credentials. */
const AUTH_FAILED_REPLY = '5.7.8 Authentication credentials invalid';

/** `user:password` (the password may contain `:`), or why it is not that. */
export function parseSmtpCredentials(text: string): SmtpCredentials | string {
  const colon = text.indexOf(':');
  if (colon <= 0) return 'expected user:password';
  const username = text.slice(0, colon);
  const password = text.slice(colon + 1);
  if (password === '') return 'the password is empty';
  if (/[\u0000-\u001f\u007f]/.test(text)) return 'it contains control characters';
  return { username, password };
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/** Constant-time comparison of two strings (SHA-256 digests, so lengths do not leak). */
function same(a: string | null | undefined, b: string): boolean {
  return typeof a === 'string' && timingSafeEqual(digest(a), digest(b));
}

type AuthCallback = (err: Error | null | undefined, response?: SMTPServerAuthenticationResponse) => void;

function authFailed(): Error {
  return Object.assign(new Error(AUTH_FAILED_REPLY), { responseCode: 535 });
}

/** Whether `auth` proves `credentials`: CRAM-MD5 through its challenge, the others by the password sent. */
function credentialsMatch(auth: SMTPServerAuthentication, credentials: SmtpCredentials): boolean {
  const userOk = same(auth.username, credentials.username);
  if (auth.method === 'CRAM-MD5') return userOk && typeof auth.validatePassword === 'function' && auth.validatePassword(credentials.password);
  const passwordOk = same(auth.password, credentials.password);
  return userOk && passwordOk;
}

/** The smtp-server options for TLS and AUTH. */
export function securityOptions(security: SmtpSecurity): Partial<SMTPServerOptions> {
  const { tls, credentials } = security;
  const tlsOptions: Partial<SMTPServerOptions> =
    tls === undefined
      ? { secure: false, disabledCommands: ['STARTTLS'], hideSTARTTLS: true }
      : tls.mode === 'implicit'
        ? { secure: true, key: tls.key, cert: tls.cert, disabledCommands: ['STARTTLS'], hideSTARTTLS: true }
        : { secure: false, key: tls.key, cert: tls.cert, disabledCommands: [], hideSTARTTLS: false };
  return {
    ...tlsOptions,
    authOptional: credentials === undefined,
    // Apps configured with a user and password but no TLS must still deliver to a local test server.
    allowInsecureAuth: true,
    authMethods: credentials === undefined ? ANY_AUTH_METHODS : PASSWORD_AUTH_METHODS,
    onAuth(auth: SMTPServerAuthentication, _session: SMTPServerSession, callback: AuthCallback) {
      // A test server: whatever the application under test logs in with is fine, unless credentials are required.
      if (credentials === undefined) return callback(null, { user: auth.username ?? 'anonymous' });
      if (!credentialsMatch(auth, credentials)) return callback(authFailed());
      callback(null, { user: credentials.username });
    },
  };
}
