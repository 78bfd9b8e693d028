// What every email provider route shares: the store and its limits (mail.ts), the provider key,
// the server's clock, and the error type each route answers in its provider's own shape.
import type http from 'node:http';
import type { ChaosRules } from '../../chaos/rules';
import type { Clock } from '../../clock';
import { type AuthOutcome, checkToken, type TokenCheck } from '../auth';
import type { HttpError } from '../errors';
import type { TwilioContext } from '../twilio/api';
import type { MailStoreOptions } from './mail';

export interface ProviderContext extends MailStoreOptions {
  /** The provider key's check; undefined: no key is configured and every request is refused. */
  key?: TokenCheck;
  /** The provider key itself: Amazon SES signs requests with it (AWS Signature V4), so the signature is recomputed with it. */
  secret?: string;
  clock: Clock;
  /** The fault rules (docs/chaos.md): each route asks them once per request (http/fault.ts requestFault). */
  chaos?: ChaosRules;
  /** Twilio's auth token and default domain, for Twilio Verify (verify.ts). */
  twilio?: TwilioContext;
  /** The shared layer's mapping of a failure (store, body reading) to an HttpError, logging what the sender must not see. */
  toHttpError: (what: string, err: unknown) => HttpError;
}

/** The provider key check, one function for every provider route: each passes the credential its provider's auth shape carries. */
export function checkProviderKey(ctx: ProviderContext, candidate: string | undefined): AuthOutcome {
  if (!ctx.key) return candidate === undefined || candidate === '' ? 'missing' : 'wrong';
  return checkToken(ctx.key, candidate);
}

/** An answer in a provider's own error shape: its status, body and headers. */
export class ProviderError extends Error {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Record<string, string>;
  constructor(status: number, body: unknown, message: string, headers?: Record<string, string>) {
    super(message);
    this.name = 'ProviderError';
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
  static is(err: unknown): err is ProviderError {
    return err instanceof ProviderError;
  }
}

/** What went wrong, for a provider to put in its own shape. */
export type FailureKind = /** A fault rule's status (http/fault.ts), in the provider's shape for that status. */ 'injected' | 'auth_missing' | 'auth_wrong' | 'bad_request' | 'unprocessable' | 'too_large' | 'not_found' | 'method' | 'unsupported_media_type' | 'unavailable' | 'internal';

/** One provider API: its routes' handler and its error shape. */
export interface ProviderApiModule<R> {
  /** Largest request body the provider takes (its own limit). */
  maxRequestBytes: number;
  /** Checks the provider's key (throws its 401/403): called before the body is read, so a request without it takes no budget. */
  authenticate(ctx: ProviderContext, req: http.IncomingMessage): void | Promise<void>;
  /**
   * True when the credential cannot always be proven from the headers (SES: a signature that
   * does not sign the body's hash). authenticate() then calls exchange.ts prove() itself when
   * it can; otherwise the body is read only within the route's unproven allowance (table.ts).
   */
  proofMayNeedBody?: true;
  handle(ctx: ProviderContext, req: http.IncomingMessage, res: http.ServerResponse, route: R, body: Buffer): Promise<void>;
  /** A failure in the provider's own shape; `code` is a fault rule's Twilio error code (Verify). */
  fail(kind: FailureKind, message: string, status: number, code?: number): ProviderError;
}
