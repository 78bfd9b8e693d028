import type * as vscode from 'vscode';
import type { Services } from '../services';
import { describeInput, findFields, jsonResult, target, withSignal, type FindInput } from './common';
import { findLink } from '../../api/queries';

export const name = 'testInbox_getVerificationLink';

export type Input = FindInput;

/**
 * The verification link (else sign-in, else password reset link) of the newest message that has
 * one, as Copy Verification Link finds it. Read-only: it returns the URL and opens nothing.
 */
export function create(s: Services): vscode.LanguageModelTool<Input> {
  return {
    prepareInvocation: (options) => ({
      invocationMessage: options.input?.waitSeconds ? `Waiting up to ${options.input.waitSeconds} s for a verification link in ${describeInput(options.input)}` : `Reading the newest verification link in ${describeInput(options.input)}`,
    }),
    invoke: (options, token) =>
      withSignal(token, async (signal) => {
        const fields = findFields(options.input);
        const t = await target(s, options.input);
        const found = await findLink({ ...t, since: fields.since, waitMs: fields.waitMs, signal });
        if (!found) return jsonResult({ found: false, message: `No message with a verification, sign-in or password reset link in ${t.inbox} (${t.domain})${fields.sinceMs !== undefined ? ' after the given time' : ''}${fields.waitSeconds ? ` within ${fields.waitSeconds} s` : ''}.` });
        return jsonResult({ found: true, url: found.value.url, kind: found.value.kind, text: found.value.text ?? '', id: found.id, subject: found.subject, from: found.from, time: new Date(found.time).toISOString() });
      }),
  };
}
