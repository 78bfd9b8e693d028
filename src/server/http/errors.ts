// Typed errors of the HTTP API. Each carries the HTTP status and a `code`; the message
// names the problem and goes to the client as `{"status":"error","message":…}`.
import { codedError } from '../../core/errors';

type HttpErrorCode =
  | 'bad_request'
  | 'bad_json'
  | 'bad_field'
  | 'bad_name'
  | 'bad_id'
  | 'bad_param'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'too_large'
  | 'unsupported_media_type'
  | 'misdirected'
  | 'unavailable'
  /** 507: the disk of the data dir is full. */
  | 'insufficient_storage'
  | 'internal';

export class HttpError extends codedError<HttpErrorCode>('HttpError') {
  readonly status: number;
  /** Extra response headers, e.g. `Allow` on 405. */
  readonly headers?: Record<string, string>;

  constructor(status: number, code: HttpErrorCode, message: string, headers?: Record<string, string>) {
    super(code, message);
    this.status = status;
    this.headers = headers;
  }
}

export const badRequest = (code: HttpErrorCode, message: string): HttpError => new HttpError(400, code, message);
export const notFound = (message: string): HttpError => new HttpError(404, 'not_found', message);
