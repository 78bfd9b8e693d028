// Response helpers: JSON bodies with safe headers. No CORS header is ever set, so browsers
// on other origins cannot read responses (docs/architecture.md: no permissive CORS).
import type { ServerResponse } from 'node:http';
import type { ErrorBody } from '../../core/wire';
import type { HttpError } from './errors';

const JSON_HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
} as const;

export function sendJson(res: ServerResponse, status: number, body: unknown, extra?: Record<string, string>): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { ...JSON_HEADERS, 'content-length': Buffer.byteLength(text), ...extra });
  res.end(text);
}

export function sendError(res: ServerResponse, err: HttpError, extra?: Record<string, string>): void {
  const body: ErrorBody = { status: 'error', message: err.message };
  sendJson(res, err.status, body, { ...err.headers, ...extra });
}

export function sendBytes(res: ServerResponse, bytes: Uint8Array, headers: Record<string, string>): void {
  res.writeHead(200, {
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    // Stored content is untrusted: if a browser ever renders it, it gets no scripts and no origin.
    'content-security-policy': 'sandbox',
    'content-length': String(bytes.byteLength),
    ...headers,
  });
  res.end(bytes);
}
