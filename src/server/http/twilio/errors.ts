// Errors of the Twilio-compatible API, in Twilio's JSON shape:
// `{"code": <Twilio error code>, "message": …, "more_info": <Twilio's page of that code>, "status": <HTTP status>}`.
// The codes are Twilio's own (the table in docs/twilio.md).
import type { ServerResponse } from 'node:http';
import { HttpError } from '../errors';
import type { InjectedFailure } from '../fault';
import { sendJson } from '../respond';

/** The Twilio error codes this server answers with. */
export const TWILIO_ERROR = {
  /** Authentication failed: wrong Account SID or auth token, or none. */
  AUTHENTICATE: 20003,
  /** Method not allowed on this resource. */
  METHOD_NOT_ALLOWED: 20004,
  /** The resource was not found. */
  NOT_FOUND: 20404,
  /** Internal error (storage). */
  INTERNAL: 20500,
  /** The `To` number is not a valid phone number. */
  INVALID_TO: 21211,
  /** `Body` is required. */
  BODY_REQUIRED: 21602,
  /** `From` or `MessagingServiceSid` is required. */
  FROM_REQUIRED: 21603,
  /** `To` is required (also what Twilio answers when the body is not a readable form). */
  TO_REQUIRED: 21604,
  /** The body is over 1,600 characters. */
  BODY_TOO_LONG: 21617,
  /** A query parameter is invalid (Twilio's "Parameter Validation Failed"). */
  BAD_PARAM: 80701,
} as const;

/** One of TWILIO_ERROR, or 20000 + the HTTP status for a failure of no more specific code (Twilio's own pattern: 20404). */
type TwilioErrorCode = (typeof TWILIO_ERROR)[keyof typeof TWILIO_ERROR] | number;

/** A failure with no more specific code gets 20000 + its HTTP status, as Twilio's 20404 does. */
const GENERIC_CODE_BASE = 20000;

/** Where Twilio documents each code; sent as `more_info`, as Twilio does. */
const MORE_INFO_BASE = 'https://www.twilio.com/docs/errors/';

export class TwilioApiError extends Error {
  readonly status: number;
  readonly code: TwilioErrorCode;
  readonly headers?: Record<string, string>;

  constructor(status: number, code: TwilioErrorCode, message: string, headers?: Record<string, string>) {
    super(message);
    this.name = 'TwilioApiError';
    this.status = status;
    this.code = code;
    this.headers = headers;
  }

  static is(err: unknown, code?: TwilioErrorCode): err is TwilioApiError {
    return err instanceof TwilioApiError && (code === undefined || err.code === code);
  }
}

/** The JSON body of an error, as Twilio writes it. */
export interface TwilioErrorBody {
  code: number;
  message: string;
  more_info: string;
  status: number;
}

export function sendTwilioError(res: ServerResponse, err: TwilioApiError): void {
  const body: TwilioErrorBody = { code: err.code, message: err.message, more_info: `${MORE_INFO_BASE}${err.code}`, status: err.status };
  sendJson(res, err.status, body, err.headers);
}

/** Twilio's error code for a status with no more specific code: 20000 + the status (20429 Too Many Requests, 20503 Service Unavailable), as Twilio's 20404 is. */
export function twilioCodeOf(status: number): number {
  return GENERIC_CODE_BASE + status;
}

/** A fault rule's answer (http/fault.ts) in Twilio's shape: the rule's Twilio error code, else 20000 + its status. */
export function fromInjected(err: InjectedFailure): TwilioApiError {
  return new TwilioApiError(err.status, err.twilioCode ?? twilioCodeOf(err.status), err.message, err.headers);
}

/** A failure of the shared HTTP layer (routing, body size, storage) on a Twilio route, in Twilio's shape. */
export function fromHttpError(err: HttpError): TwilioApiError {
  switch (err.status) {
    case 401:
    case 403:
      return new TwilioApiError(401, TWILIO_ERROR.AUTHENTICATE, 'Authenticate');
    case 404:
      return new TwilioApiError(404, TWILIO_ERROR.NOT_FOUND, err.message);
    case 405:
      return new TwilioApiError(405, TWILIO_ERROR.METHOD_NOT_ALLOWED, err.message, err.headers);
    case 413:
      return new TwilioApiError(413, TWILIO_ERROR.BODY_TOO_LONG, err.message, err.headers);
    default:
      if (err.status >= 500) return new TwilioApiError(err.status, TWILIO_ERROR.INTERNAL, err.message, err.headers);
      return new TwilioApiError(err.status, GENERIC_CODE_BASE + err.status, err.message, err.headers);
  }
}
