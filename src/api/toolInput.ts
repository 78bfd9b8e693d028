// The one reader of the tools' inputs: the MCP tools (src/mcp/tools.ts) and the language-model
// tools (src/extension/tools/common.ts) read the inbox and its domain, `since`, the wait and the
// link kind here, each under its own field names. A bad input rejects with an ApiError
// `invalid_input` whose `field` is the input's field and whose message names it. No vscode, no Node.
import { ApiError } from './errors';
import { splitInbox } from './connection';
import { isLinkKindParam, LINK_KINDS, type LinkKindParam } from '../core/clickKinds';
import { ALL_INBOXES } from '../core/ids';

function bad(field: string, message: string): ApiError {
  return new ApiError('invalid_input', message, { field });
}

/** A string field, trimmed; undefined when absent, null or blank (a required one then rejects). */
export function readText(value: unknown, field: string, required: boolean): string | undefined {
  if (value === undefined || value === null) {
    if (required) throw bad(field, `"${field}" is required.`);
    return undefined;
  }
  if (typeof value !== 'string') throw bad(field, `"${field}" must be a string.`);
  if (required && value.trim() === '') throw bad(field, `"${field}" must not be empty.`);
  return value.trim() === '' ? undefined : value.trim();
}

/**
 * The one inbox and its domain an input names: `name`, `name@domain` or a phone number
 * (api/connection.ts splitInbox), in `domain` when the inbox names none, else in `fallback`.
 * Never `*`: the ids of its messages then embed the name the caller gave, not one a sender chose.
 */
export function readInbox(input: { inbox: unknown; domain?: unknown }, fallback: string, fields = { inbox: 'inbox', domain: 'domain' }): { inbox: string; domain: string } {
  const inbox = readText(input.inbox, fields.inbox, true) as string;
  const domain = readText(input.domain, fields.domain, false)?.toLowerCase() ?? fallback;
  let t: { inbox: string; domain: string };
  try {
    t = splitInbox(inbox, domain);
  } catch (e) {
    throw ApiError.is(e) ? bad(fields.inbox, e.message) : e;
  }
  if (t.inbox === ALL_INBOXES) throw bad(fields.inbox, `"${fields.inbox}" must name one inbox, not "*": list the inboxes to find the ones that have mail.`);
  return t;
}

/**
 * The `since` a wait takes (the core's rule: a message id, "now", or ms since the epoch), from
 * `since` or its alias in ms, either of which a surface may lack. Undefined: every message counts.
 */
export function readSince(input: { since?: unknown; sinceMs?: unknown }, fields: { since?: string; sinceMs?: string }): string | number | undefined {
  const { since, sinceMs } = input;
  if (sinceMs !== undefined && sinceMs !== null) {
    const f = fields.sinceMs ?? 'sinceMs';
    if (typeof sinceMs !== 'number' || !Number.isSafeInteger(sinceMs) || sinceMs < 0) throw bad(f, `"${f}" must be a whole number of milliseconds since the epoch (a server time of an earlier answer).`);
    if (since !== undefined && since !== null && String(since) !== String(sinceMs)) throw bad(f, `Pass either "${fields.since ?? 'since'}" or "${f}", not both.`);
    return sinceMs;
  }
  const f = fields.since ?? 'since';
  if (since === undefined || since === null || since === '') return undefined;
  if (typeof since === 'number') {
    if (!Number.isSafeInteger(since) || since < 0) throw bad(f, `"${f}" as a number must be a whole number of milliseconds since the epoch.`);
    return since;
  }
  if (typeof since !== 'string') throw bad(f, `"${f}" must be a message id, "now" or a time in milliseconds.`);
  const s = since.trim();
  return s.toLowerCase() === 'now' ? 'now' : s;
}

/** A wait in seconds, 0 when absent, at most `max`; `longer` says how to wait longer than that. */
export function readWaitSeconds(value: unknown, field: string, max: number, longer?: string): number {
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > max) {
    throw bad(field, `"${field}" must be a number of seconds from 0 to ${max} (got ${JSON.stringify(value)})${longer ? `; ${longer}` : ''}.`);
  }
  return value;
}

/** Which link (core/clickKinds.ts LINK_KINDS), `any` when absent. */
export function readLinkKind(value: unknown, field = 'kind'): LinkKindParam {
  const k = readText(value, field, false) ?? 'any';
  if (!isLinkKindParam(k)) throw bad(field, `"${field}" must be one of ${Object.keys(LINK_KINDS).join(', ')} (got ${JSON.stringify(k.slice(0, 40))}).`);
  return k;
}
