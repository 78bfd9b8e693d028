import * as vscode from 'vscode';
import { inert } from '../../core/inert';
import type { MessageSummary } from '../../core/wire';
import type { Services } from '../services';
import { toAbortSignal } from '../ui/cancel';
import { resolveInbox } from '../ui/pick';
import { showInfo } from '../ui/shown';
import * as openMessage from './openMessage';
import { COMMANDS } from '../commandIds';

export const id = COMMANDS.injectMessage.id;
/** Needs the server: the command registry checks it before the command asks anything. */
export const needsServer = true;

/** Sender used when the user leaves "from" empty. */
export const DEFAULT_FROM = 'Test Inbox <test@test-inbox.invalid>';
/** A subject and text with a code, so Copy One-Time Code has something to find. */
export const DEFAULT_SUBJECT = 'Test message';
export const DEFAULT_TEXT = 'Your verification code is 123456.';

interface InjectArgs {
  domain?: string;
  inbox?: string;
  from?: string;
  subject?: string;
  text?: string;
}

/** The notification's button that opens the injected message. */
const OPEN = 'Open';

/**
 * Injects a message with progress and cancel. It lands in the tree, whose row is revealed and
 * selected (its inbox expanded), and a notification confirms it with Open.
 */
export async function run(s: Services, arg?: unknown): Promise<{ id: string; domain: string; inbox: string } | undefined> {
  const ref = await resolveInbox(s, arg, 'Inject Test Message', { allowNew: true });
  if (!ref) return undefined;
  const a = (typeof arg === 'object' && arg !== null ? arg : {}) as InjectArgs;
  const scripted = typeof a.subject === 'string' || typeof a.text === 'string' || typeof a.from === 'string';
  const from = scripted ? (a.from ?? DEFAULT_FROM) : await vscode.window.showInputBox({ title: 'Inject Test Message (1/3)', prompt: 'From', value: DEFAULT_FROM });
  if (from === undefined) return undefined;
  const subject = scripted ? (a.subject ?? DEFAULT_SUBJECT) : await vscode.window.showInputBox({ title: 'Inject Test Message (2/3)', prompt: 'Subject', value: DEFAULT_SUBJECT });
  if (subject === undefined) return undefined;
  const text = scripted ? (a.text ?? DEFAULT_TEXT) : await vscode.window.showInputBox({ title: 'Inject Test Message (3/3)', prompt: 'Text', value: DEFAULT_TEXT });
  if (text === undefined) return undefined;

  const posted = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: inert`Injecting a message into ${ref.inbox}…`, cancellable: true },
    async (_progress, token) => {
      const { signal, dispose } = toAbortSignal(token);
      try {
        const api = await s.connection.ensure();
        const result = await api.inject(ref.domain, ref.inbox, { from, subject, text }, { signal });
        s.log.info(`Injected ${result.id} into ${ref.inbox} (${ref.domain}).`);
        // Show it at once, whether or not a push stream announces it too.
        const listing = await api.listInbox(ref.domain, ref.inbox, { limit: 5 }, { signal });
        s.model.applyNew(ref.domain, listing.msgs);
        // The listing's row of what was posted: by the id the server answered, else (a server
        // that answers no id) the newest with this subject.
        const summary: MessageSummary | undefined = listing.msgs.find((m) => m.id === result.id) ?? listing.msgs.find((m) => m.subject === subject);
        return { id: summary?.id ?? result.id, summary };
      } finally {
        dispose();
      }
    },
  );
  const { summary } = posted;
  if (summary) {
    await s.tree.revealMessage(ref.domain, ref.inbox, summary).then(undefined, (e: unknown) => s.log.warn(`Inject: could not reveal ${summary.id} in the tree: ${String(e)}`));
  }
  void showInfo(inert`Injected "${subject}" into ${ref.inbox}.`, ...(summary ? [OPEN] : [])).then((choice) => {
    if (choice === OPEN && summary) void vscode.commands.executeCommand(openMessage.id, { domain: ref.domain, inbox: ref.inbox, id: summary.id });
  });
  return { id: posted.id, domain: ref.domain, inbox: ref.inbox };
}
