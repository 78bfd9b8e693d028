// Reading and validating JSON request bodies (docs/api.md §2.5) with a size limit. A body that is
// too large, not JSON, not an object or has fields of the wrong type is refused before
// anything is written.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BudgetError, type ByteBudget, responseLifetime } from '../budget';
import type { InjectedMessage } from '../../core/wire';
import { HttpError, badRequest } from './errors';
import { unprovenAllowance } from './exchange';

/** Default largest request body: an injected text message is a few KB; 1 MiB leaves room and bounds memory per request. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** Of an oversized body we read (and discard) up to this much so the client can read the 413; beyond it the connection is closed. */
const MAX_DRAIN_BYTES = 16 * 1024 * 1024;

const STRING_FIELDS = ['from', 'subject', 'text', 'to'] as const;

function tooLarge(max: number, closeConnection: boolean): HttpError {
  return new HttpError(413, 'too_large', `request body is larger than ${max} bytes`, closeConnection ? { connection: 'close' } : undefined);
}

/** Refuses anything but `application/json` (or a `+json` type) with 415. */
export function requireJson(req: IncomingMessage): void {
  const header = req.headers['content-type'];
  const type = (header ?? '').split(';', 1)[0].trim().toLowerCase();
  if (type === 'application/json' || type.endsWith('+json')) return;
  throw new HttpError(
    415,
    'unsupported_media_type',
    header ? `content type ${JSON.stringify(type)} is not supported; send the body as application/json` : 'no content type; send the body as application/json',
  );
}

/** What reading a body needs: its size limit, and the shared byte budget it is held under. */
export interface BodyLimits {
  readonly maxBody: number;
  readonly budget: ByteBudget;
}

/**
 * The whole body, or a 413 HttpError when it exceeds `limits.maxBody` bytes. The only reader
 * of request bodies. Once the request has proven its credential (exchange.ts prove), it first
 * waits for the body's share of the shared byte budget (reading nothing meanwhile, so TCP
 * holds the sender back), held until the exchange ends (budget.ts responseLifetime: its
 * response or its socket). A client that goes away while it waits leaves the queue. Before
 * that, only the route's declared allowance is read, from the pool of unproven bodies.
 */
export async function readBody(req: IncomingMessage, res: ServerResponse, limits: BodyLimits): Promise<Buffer> {
  const unproven = unprovenAllowance(req);
  if (unproven) return readUnproven(req, res, Math.min(unproven.bytes, limits.maxBody), unproven.pool);
  const max = limits.maxBody;
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > Math.max(max, MAX_DRAIN_BYTES)) throw tooLarge(max, true);
  // An oversized body is drained, not kept: it needs no budget.
  const kept = req.headers['transfer-encoding'] !== undefined ? max : Number.isFinite(declared) && declared > 0 && declared <= max ? declared : 0;
  if (kept > 0) {
    try {
      await limits.budget.take(kept, responseLifetime(res));
    } catch (e) {
      if (BudgetError.is(e, 'CLOSED')) throw new HttpError(503, 'unavailable', 'the server is stopping; try again in a moment', { connection: 'close' });
      throw badRequest('bad_request', 'the request ended before its body was read');
    }
  }
  return receive(req, max, declared, MAX_DRAIN_BYTES);
}

/**
 * The body of a request that has proven no credential yet (a sign-in carries its token in
 * it): at most `max` bytes, held in `pool` (never the shared budget). Nothing past `max` is
 * read or drained: the answer is 413 and the connection closes. A full pool answers 503.
 */
async function readUnproven(req: IncomingMessage, res: ServerResponse, max: number, pool: ByteBudget | undefined): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  const chunked = req.headers['transfer-encoding'] !== undefined;
  const bodyless = !chunked && (!Number.isFinite(declared) || declared <= 0);
  if (bodyless) return Buffer.alloc(0);
  if (max <= 0) throw new HttpError(413, 'too_large', 'this route reads no request body before its credential is proven', { connection: 'close' });
  if (Number.isFinite(declared) && declared > max) throw new HttpError(413, 'too_large', `request body is larger than the ${max} bytes this route reads before its credential is proven`, { connection: 'close' });
  const kept = chunked ? max : declared;
  if (!pool?.tryTake(kept, responseLifetime(res))) {
    throw new HttpError(503, 'unavailable', 'too many requests are sending their credential at once; try again in a moment', { connection: 'close', 'retry-after': '1' });
  }
  return receive(req, max, declared, max);
}

function receive(req: IncomingMessage, max: number, declared: number, drainLimit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = Number.isFinite(declared) && declared > max;
    let settled = false;
    const done = (err: Error | undefined, value?: Buffer) => {
      if (settled) return;
      settled = true;
      if (err) reject(err);
      else resolve(value ?? Buffer.alloc(0));
    };
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) over = true;
      if (over) {
        chunks.length = 0;
        if (size > drainLimit) {
          req.pause();
          done(tooLarge(max, true));
        }
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => done(over ? tooLarge(max, false) : undefined, over ? undefined : Buffer.concat(chunks, size)));
    req.on('error', () => done(badRequest('bad_request', 'the request body was cut off')));
    req.on('close', () => {
      if (!req.complete) done(badRequest('bad_request', 'the request body was cut off'));
    });
  });
}

/** Parses a JSON body (any JSON value; a UTF-8 byte order mark is ignored). */
function parseJson(body: Buffer): unknown {
  if (body.length === 0) throw badRequest('bad_json', 'request body is empty; send a JSON object');
  try {
    const text = body.toString('utf8');
    // A UTF-8 byte order mark is not JSON, but some clients send one; it carries no content.
    return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (err) {
    throw badRequest('bad_json', `request body is not valid JSON: ${(err as Error).message}`);
  }
}

/** Parses a JSON body that must be an object. */
export function parseJsonObject(body: Buffer): Record<string, unknown> {
  const value = parseJson(body);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw badRequest('bad_json', `request body must be a JSON object, not ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`);
  }
  return value as Record<string, unknown>;
}

/** Parses a JSON body that must be an object or an array (a JSON-RPC message or batch). */
export function parseJsonObjectOrArray(body: Buffer): Record<string, unknown> | unknown[] {
  const value = parseJson(body);
  if (typeof value !== 'object' || value === null) throw badRequest('bad_json', `request body must be a JSON object or array, not ${value === null ? 'null' : typeof value}`);
  return value as Record<string, unknown> | unknown[];
}

/** docs/api.md §2.5: from, subject, text and to are strings when present; other fields are ignored. */
export function toInjectedMessage(obj: Record<string, unknown>): InjectedMessage {
  const out: InjectedMessage = {};
  for (const key of STRING_FIELDS) {
    if (!Object.prototype.hasOwnProperty.call(obj, key)) continue;
    const v = obj[key];
    if (v === undefined) continue;
    if (typeof v !== 'string') throw badRequest('bad_field', `field "${key}" must be a string, not ${v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v}`);
    out[key] = v;
  }
  return out;
}

export async function readInjectedMessage(req: IncomingMessage, res: ServerResponse, limits: BodyLimits): Promise<InjectedMessage> {
  requireJson(req);
  return toInjectedMessage(parseJsonObject(await readBody(req, res, limits)));
}
