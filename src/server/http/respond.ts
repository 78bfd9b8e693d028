// Response helpers: JSON bodies with safe headers. No CORS header is ever set, so browsers
// on other origins cannot read responses (docs/architecture.md: no permissive CORS).
import type { ServerResponse } from 'node:http';
import type { ErrorBody } from '../../core/wire';
import type { HttpError } from './errors';
import { nextTurn } from '../slices';

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

/** Items written per piece of a sendJsonList body. */
const LIST_PIECE_ITEMS = 100;

/**
 * A 200 JSON body `{"<key>": [items…], …rest}` written in pieces of LIST_PIECE_ITEMS items, each
 * made in a turn of its own (slices.ts nextTurn: the process's slices take turns, so twenty large
 * lists hold the event loop for a few pieces per turn, not twenty); while the client reads slower
 * than the body is made the rest waits for it (the socket's `drain`), so a large list holds
 * neither the loop nor the memory of its whole body. Stops when the client leaves.
 */
export async function sendJsonList<T>(res: ServerResponse, key: string, items: readonly T[], toJson: (item: T) => unknown, rest: Record<string, unknown>): Promise<void> {
  const restText = JSON.stringify(rest).slice(1);
  const tail = `]${restText === '}' ? '}' : `,${restText}`}`;
  // One piece or less (the usual page of 50): at once, in one write with its length, as sendJson.
  if (items.length <= LIST_PIECE_ITEMS) {
    const text = `{${JSON.stringify(key)}:[${items.map((item) => JSON.stringify(toJson(item))).join(',')}${tail}`;
    res.writeHead(200, { ...JSON_HEADERS, 'content-length': Buffer.byteLength(text) });
    res.end(text);
    return;
  }
  res.writeHead(200, { ...JSON_HEADERS });
  let text = `{${JSON.stringify(key)}:[`;
  for (let i = 0; i < items.length; i += LIST_PIECE_ITEMS) {
    await nextTurn();
    if (res.destroyed) return;
    text += items
      .slice(i, i + LIST_PIECE_ITEMS)
      .map((item) => JSON.stringify(toJson(item)))
      .join(',');
    if (i + LIST_PIECE_ITEMS < items.length) text += ',';
    const more = res.write(text);
    text = '';
    if (!more) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
    }
  }
  if (res.destroyed) return;
  res.end(text + tail);
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
