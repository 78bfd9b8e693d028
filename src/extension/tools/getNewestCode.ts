import type * as vscode from 'vscode';
import type { Services } from '../services';
import { describeInput, findFields, jsonResult, target, withSignal, type FindInput } from './common';
import { findCode } from '../../api/queries';

export const name = 'testInbox_getNewestCode';

export type Input = FindInput;

/** The one-time code of the newest message that has one (after `sinceMs`, waiting up to `waitSeconds`). Read-only: no confirmation. */
export function create(s: Services): vscode.LanguageModelTool<Input> {
  return {
    prepareInvocation: (options) => ({
      invocationMessage: options.input?.waitSeconds ? `Waiting up to ${options.input.waitSeconds} s for a one-time code in ${describeInput(options.input)}` : `Reading the newest one-time code in ${describeInput(options.input)}`,
    }),
    invoke: (options, token) =>
      withSignal(token, async (signal) => {
        const fields = findFields(options.input);
        const t = await target(s, options.input);
        const found = await findCode({ ...t, since: fields.since, waitMs: fields.waitMs, signal });
        if (!found) return jsonResult({ found: false, message: `No message with a one-time code in ${t.inbox} (${t.domain})${fields.sinceMs !== undefined ? ' after the given time' : ''}${fields.waitSeconds ? ` within ${fields.waitSeconds} s` : ''}.` });
        return jsonResult({ found: true, code: found.value, id: found.id, subject: found.subject, from: found.from, time: new Date(found.time).toISOString() });
      }),
  };
}
