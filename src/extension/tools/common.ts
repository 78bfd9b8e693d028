// What the language-model tools share: the inbox an input names, the answer as a JSON text
// part, and the bridge from the tool's CancellationToken to the client's AbortSignal.
import * as vscode from 'vscode';
import type { InboxApi } from '../../api/types';
import { ExtensionError } from '../errors';
import type { Services } from '../services';
import { toAbortSignal } from '../ui/cancel';
import { defaultDomain } from '../ui/pick';
import { ApiError } from '../../api/errors';
import { MAX_TOOL_WAIT_SECONDS } from '../../api/queries';
import { readInbox, readSince, readWaitSeconds } from '../../api/toolInput';

/** Input of the tools that read one inbox. */
export interface InboxInput {
  /** `name`, `name@domain`, or a phone number (`+15551234567` or its digits: an SMS inbox). */
  inbox: string;
  domain?: string;
}

/** Input of the tools that look for something new. */
export interface FindInput extends InboxInput {
  /** Only messages received after this time, in ms since the epoch. */
  sinceMs?: number;
  /** Wait up to this many seconds (at most 60) for a matching message. */
  waitSeconds?: number;
}

/** JSON schema of InboxInput (package.json repeats it in `languageModelTools`; a test checks they agree). */
export const INBOX_PROPERTIES = {
  inbox: { type: 'string', description: 'The inbox: a name ("signup"), an address ("signup@inbox.test") or, for SMS, the phone number ("+15551234567" or its digits "15551234567").' },
  domain: { type: 'string', description: 'The domain, when the inbox is given without one. Default: the first domain the Test Inbox view shows.' },
} as const;

export const FIND_PROPERTIES = {
  ...INBOX_PROPERTIES,
  sinceMs: { type: 'number', description: 'Only messages received after this time, in milliseconds since the Unix epoch (e.g. when the test started the sign-up).' },
  waitSeconds: { type: 'number', minimum: 0, maximum: MAX_TOOL_WAIT_SECONDS, description: `Wait up to this many seconds (0–${MAX_TOOL_WAIT_SECONDS}) for a matching message to arrive. Default 0: answer from the mail already there.` },
} as const;

/** The input reader's (api/toolInput.ts) `invalid_input` as the extension's, whose message a command would show. */
function read<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw ApiError.is(e, 'invalid_input') ? new ExtensionError('invalid_input', e.message) : e;
  }
}

/** The server, domain and inbox an input names (the MCP tools' reader, api/toolInput.ts); a clear error for a bad one. */
export async function target(s: Services, input: InboxInput): Promise<{ api: InboxApi; domain: string; inbox: string; testInbox: boolean }> {
  const ref = read(() => readInbox({ inbox: input?.inbox, domain: input?.domain }, defaultDomain(s)));
  const api = await s.connection.ensure();
  return { api, domain: ref.domain, inbox: ref.inbox, testInbox: s.connection.testInbox !== undefined };
}

/** Checks the optional search fields (api/toolInput.ts); returns them in range, and as the core's find options. */
export function findFields(input: FindInput): { sinceMs?: number; waitSeconds?: number; since?: number; waitMs: number } {
  return read(() => {
    const since = readSince({ sinceMs: input?.sinceMs }, { sinceMs: 'sinceMs' }) as number | undefined;
    const waitSeconds = readWaitSeconds(input?.waitSeconds, 'waitSeconds', MAX_TOOL_WAIT_SECONDS);
    return { ...(since === undefined ? {} : { sinceMs: since, since }), ...(input?.waitSeconds === undefined ? {} : { waitSeconds }), waitMs: waitSeconds * 1000 };
  });
}

/** A tool answer: one text part holding JSON (what models read best, and what tests parse). */
export function jsonResult(value: unknown): vscode.LanguageModelToolResult {
  return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(JSON.stringify(value, null, 2))]);
}

/** Runs `f` with an AbortSignal that follows the tool's cancellation token. */
export async function withSignal<T>(token: vscode.CancellationToken, f: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const c = toAbortSignal(token);
  try {
    return await f(c.signal);
  } finally {
    c.dispose();
  }
}

/** The inbox as said in progress messages. */
export function describeInput(input: InboxInput): string {
  const inbox = typeof input?.inbox === 'string' ? input.inbox : '?';
  return inbox.includes('@') || !input.domain ? inbox : `${inbox}@${input.domain}`;
}
