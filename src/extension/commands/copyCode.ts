import * as vscode from 'vscode';
import { bestCode } from '../../core/otp';
import { ExtensionError } from '../errors';
import { messageTexts } from '../messageText';
import type { Services } from '../services';
import { toAbortSignal } from '../ui/cancel';
import { checkInboxName } from '../inboxInput';
import { defaultDomain, resolveInbox, type RefArg } from '../ui/pick';

export const id = 'testInbox.copyCode';

/** Copies the one-time code of a message, or of the latest message of a picked inbox. */
export async function run(s: Services, arg?: unknown): Promise<string | undefined> {
  const a = (typeof arg === 'object' && arg !== null ? arg : {}) as RefArg & { kind?: string; summary?: { id: string } };
  let ref: { domain: string; inbox: string; id?: string } | undefined;
  if (a.kind === 'message' && a.summary && a.domain && a.inbox) ref = { domain: a.domain, inbox: a.inbox, id: a.summary.id };
  else if (a.kind === undefined && typeof a.id === 'string' && typeof a.inbox === 'string') ref = { domain: a.domain ?? defaultDomain(s), inbox: checkInboxName(a.inbox), id: a.id };
  if (!ref) ref = await resolveInbox(s, arg, 'Copy One-Time Code (latest message)', { allowNew: false });
  if (!ref) return undefined;
  const target = ref;
  return vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'Looking for a one-time code…', cancellable: true }, async (_p, token) => {
    const { signal, dispose } = toAbortSignal(token);
    try {
      const api = await s.connection.ensure();
      let msgId = target.id;
      if (!msgId) {
        const listing = await api.listInbox(target.domain, target.inbox, { limit: 1 }, { signal });
        if (listing.msgs.length === 0) throw new ExtensionError('noMessage', `Inbox ${target.inbox} has no messages yet.`);
        msgId = listing.msgs[0].id;
      }
      const message = await api.getMessage(target.domain, target.inbox, msgId, { signal });
      const code = bestCode(messageTexts(message));
      if (!code) throw new ExtensionError('noMessage', `No one-time code found in "${message.subject || msgId}".`);
      await vscode.env.clipboard.writeText(code);
      void vscode.window.setStatusBarMessage(`$(check) Copied code ${code}`, 5000);
      s.log.info(`Copied the one-time code of ${msgId}.`);
      return code;
    } finally {
      dispose();
    }
  });
}
