// Search Messages… (palette, and the view's title bar): a QuickPick that searches the server as
// the user types (GET /api/v2/search, docs/api.md "Search"), each keystroke's request cancelling
// the one before; Enter opens the message in the message panel. The hosted service has no
// search route: against it the command says so.
import * as vscode from 'vscode';
import { inert, inertText } from '../../core/inert';
import type { MessageSummary } from '../../core/wire';
import { COMMANDS } from '../commandIds';
import { ACTION_TITLES, describeError, isCancellation } from '../errors';
import { runAction } from '../ui/reportError';
import { showWarning } from '../ui/shown';
import type { Services } from '../services';
import { messageSender, messageTitle } from '../../core/title';
import type { MessageRef } from '../inboxRef';
import { relativeTime } from '../util/time';
import { run as openMessage } from './openMessage';

export const id = COMMANDS.searchMessages.id;

/** Typing pauses this long before a search is sent. */
export const SEARCH_DEBOUNCE_MS = 250;
/** Results shown: as many as a QuickPick shows comfortably. */
const SEARCH_LIMIT = 50;
const TITLE = 'Search Messages';
const SWITCH = ACTION_TITLES.switchServer;
const PLACEHOLDER = 'Words, "a phrase", -word, from: to: subject: inbox: domain: code: has:code has:attachment has:link is:sms after:1h before:2026-01-31';

type Item = vscode.QuickPickItem & { ref?: MessageRef };

/** What the open search shows (title and rows), for the debug state: tests read what the user saw. */
let shown: { title: string; items: Array<{ label: string; description?: string }> } | undefined;

export function searchPickShown(): typeof shown {
  return shown;
}

/** One result row: subject; sender, inbox and age. Mail-derived text is inert (no `$(icon)` renders). */
function itemOf(m: MessageSummary, now: number): Item {
  return {
    label: inertText(messageTitle(m)),
    description: inert`${messageSender(m)} · ${m.to}@${m.domain} · ${relativeTime(m.time, now)}`,
    // Every result is the server's match: the QuickPick must not filter them again by the typed query.
    alwaysShow: true,
    ref: { domain: m.domain, inbox: m.to, id: m.id },
  };
}

/** `initial`: a query to start with (from another command or a test); the user can change it. */
export async function run(s: Services, initial?: unknown): Promise<MessageRef | undefined> {
  const api = await s.connection.ensure();
  if (!s.connection.testInbox) {
    // Not awaited: the command returns while the message waits for the user.
    void showWarning(inert`The hosted service has no search. Search Messages works on a Test Inbox server: the local one, or a team server.`, SWITCH).then((choice) => (choice === SWITCH ? runAction('switchServer') : undefined));
    return undefined;
  }
  const ref = await pick(s, api, typeof initial === 'string' ? initial : '');
  if (!ref) return undefined;
  return openMessage(s, ref);
}

function pick(s: Services, api: Awaited<ReturnType<Services['connection']['ensure']>>, initial: string): Promise<MessageRef | undefined> {
  const qp = vscode.window.createQuickPick<Item>();
  qp.title = TITLE;
  qp.placeholder = PLACEHOLDER;
  qp.matchOnDescription = false;
  let inFlight: AbortController | undefined;
  let timer: NodeJS.Timeout | undefined;
  const show = (title: string, items: Item[]): void => {
    qp.title = title;
    qp.items = items;
    shown = { title, items: items.map((i) => ({ label: i.label, ...(i.description === undefined ? {} : { description: i.description }) })) };
  };

  const search = async (q: string, ac: AbortController): Promise<void> => {
    qp.busy = true;
    try {
      const r = await api.search(q, { limit: SEARCH_LIMIT }, { signal: ac.signal });
      if (ac.signal.aborted) return;
      const now = Date.now();
      const some = r.msgs.length < r.total ? `, the newest ${r.msgs.length} shown` : '';
      show(
        `${TITLE}: ${r.total}${r.partial ? '+' : ''} found${some}${r.partial ? ' (the newest messages searched; narrow with inbox:, domain: or after:)' : ''}`,
        r.msgs.length > 0 ? r.msgs.map((m) => itemOf(m, now)) : [{ label: 'No message matches', alwaysShow: true }],
      );
    } catch (e) {
      if (ac.signal.aborted || isCancellation(e)) return;
      s.log.warn(`search ${JSON.stringify(q)} failed: ${(e as Error).message}`);
      // A QuickPick has no validation message: the problem (a malformed query names what is wrong) is an item that cannot be accepted.
      show(TITLE, [{ label: `$(error) ${inertText(describeError(e).message)}`, alwaysShow: true }]);
    } finally {
      if (inFlight === ac) qp.busy = false;
    }
  };

  const changed = (value: string): void => {
    inFlight?.abort();
    inFlight = undefined;
    clearTimeout(timer);
    const q = value.trim();
    if (q === '') {
      show(TITLE, []);
      qp.busy = false;
      return;
    }
    timer = setTimeout(() => {
      const ac = new AbortController();
      inFlight = ac;
      void search(q, ac);
    }, SEARCH_DEBOUNCE_MS);
  };

  return new Promise<MessageRef | undefined>((resolve) => {
    let done = false;
    const finish = (ref: MessageRef | undefined): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      inFlight?.abort();
      resolve(ref);
      shown = undefined;
      qp.dispose();
    };
    shown = { title: TITLE, items: [] };
    qp.onDidChangeValue(changed);
    qp.onDidAccept(() => {
      const sel = qp.selectedItems[0];
      if (sel?.ref) finish(sel.ref);
    });
    qp.onDidHide(() => finish(undefined));
    if (initial !== '') {
      qp.value = initial;
      changed(initial);
    }
    qp.show();
  });
}
