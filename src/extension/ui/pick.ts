// Node-or-picker: commands get a tree node (or, from tests and other commands, a plain
// `{ domain, inbox, id }` object); from the palette they ask with a QuickPick.
import * as vscode from 'vscode';
import { isPhoneInbox, PRIVATE_DOMAIN } from '../../core/ids';
import { inert, inertText } from '../../core/inert';
import type { MessageSummary } from '../../core/wire';
import { ExtensionError } from '../errors';
import { checkInboxName, parseInboxInput } from '../inboxInput';
import type { Services } from '../services';
import type { TreeNode } from '../tree/model';
import { messageSender, messageTitle } from '../../core/title';
import type { InboxRef, MessageRef } from '../inboxRef';
import { relativeTime } from '../util/time';
import { toAbortSignal } from './cancel';

/** What commands accept besides a tree node. */
interface RefArg {
  domain?: string;
  inbox?: string;
  id?: string;
}

/** Messages offered when picking one of an inbox: its newest, as many as a QuickPick shows comfortably. */
const PICK_LIMIT = 50;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

/** The domain commands write to when none is given. */
export function defaultDomain(s: Services): string {
  const shown = s.model.shownDomains;
  if (shown.length > 0) return shown[0];
  const settings = s.settings();
  if (settings.domains.length > 0) return settings.domains[0];
  return s.connection.defaultDomain() ?? PRIVATE_DOMAIN;
}

/** An inbox from a node or argument, else from a QuickPick (undefined when dismissed). */
export async function resolveInbox(s: Services, arg: unknown, title: string, opts: { allowNew?: boolean } = {}): Promise<InboxRef | undefined> {
  if (isObject(arg)) {
    const node = arg as Partial<TreeNode> & RefArg;
    if (typeof node.inbox === 'string') {
      return { domain: typeof node.domain === 'string' ? node.domain : defaultDomain(s), inbox: checkInboxName(node.inbox) };
    }
  }
  return pickInbox(s, title, opts.allowNew ?? true);
}

/**
 * Before a picker lists what the tree knows: connect and load the tree's domains when nothing
 * is loaded yet, and when the server cannot be reached say so (the command's error boundary
 * shows it with Retry) instead of opening an empty list. Other connection problems still let
 * the user type a name.
 */
async function loadForPicker(s: Services): Promise<void> {
  if (s.connection.state.kind !== 'unreachable' && s.model.shownDomains.length === 0) {
    try {
      await s.connection.ensure();
      await s.model.roots();
    } catch {
      // Said below when it is that the server cannot be reached; otherwise the picker still helps.
    }
  }
  if (s.connection.state.kind === 'unreachable') await s.connection.ensure(); // rejects, saying where and why
}

async function pickInbox(s: Services, title: string, allowNew: boolean): Promise<InboxRef | undefined> {
  await loadForPicker(s);
  const fallback = defaultDomain(s);
  const seen = new Set<string>();
  const items: Array<vscode.QuickPickItem & { ref?: InboxRef }> = [];
  const domains = s.model.shownDomains.length > 0 ? s.model.shownDomains : [fallback];
  for (const domain of domains) {
    for (const inbox of s.model.knownInboxes(domain)) {
      const key = `${domain}/${inbox}`;
      if (seen.has(key)) continue;
      seen.add(key);
      items.push({ label: inertText(inbox), description: inertText(domain), iconPath: new vscode.ThemeIcon(isPhoneInbox(inbox) ? 'device-mobile' : 'inbox'), ref: { domain, inbox } });
    }
  }
  const qp = vscode.window.createQuickPick<vscode.QuickPickItem & { ref?: InboxRef }>();
  qp.title = title;
  qp.placeholder = allowNew ? `Pick an inbox or type a name (name or name@${fallback})` : 'Pick an inbox';
  qp.items = items;
  qp.matchOnDescription = true;
  return new Promise<InboxRef | undefined>((resolve) => {
    let done = false;
    const finish = (v: InboxRef | undefined) => {
      if (done) return;
      done = true;
      resolve(v);
      qp.dispose();
    };
    qp.onDidChangeValue((value) => {
      if (!allowNew) return;
      const typed = value.trim();
      const extra: Array<vscode.QuickPickItem & { ref?: InboxRef }> = [];
      if (typed) {
        try {
          const ref = parseInboxInput(typed, fallback);
          if (!seen.has(`${ref.domain}/${ref.inbox}`)) extra.push({ label: ref.inbox, description: `${ref.domain} (new)`, alwaysShow: true, ref });
        } catch (e) {
          // QuickPick has no validation message in 1.97: show the problem as an item that cannot be accepted.
          extra.push({ label: `$(error) ${(e as Error).message}`, alwaysShow: true });
        }
      }
      qp.items = [...extra, ...items];
    });
    qp.onDidAccept(() => {
      const sel = qp.selectedItems[0];
      if (sel?.ref) finish(sel.ref);
    });
    qp.onDidHide(() => finish(undefined));
    qp.show();
  });
}

interface ResolveMessageOptions {
  /** Without an argument naming a message or an inbox (the palette, the panel's title bar): the open message, when there is one (the caller passes messagePanel's activeMessageRef). */
  openMessage?: () => MessageRef | undefined;
  /** From an inbox, take its newest message instead of asking which (Copy One-Time Code). */
  latest?: boolean;
  /** Cancels the listing of the inbox. */
  token?: vscode.CancellationToken;
}

/** A message from a node or argument, else from an inbox (given, or picked) and then its newest messages (picked, or the latest). */
export async function resolveMessage(s: Services, arg: unknown, title: string, opts: ResolveMessageOptions = {}): Promise<MessageRef | undefined> {
  if (isObject(arg)) {
    const node = arg as Partial<TreeNode> & RefArg & { summary?: MessageSummary };
    if (node.kind === 'message' && node.summary && typeof node.domain === 'string' && typeof node.inbox === 'string') {
      return { domain: node.domain, inbox: node.inbox, id: node.summary.id };
    }
    if (typeof node.id === 'string' && typeof node.inbox === 'string' && node.kind === undefined) {
      return { domain: typeof node.domain === 'string' ? node.domain : defaultDomain(s), inbox: checkInboxName(node.inbox), id: node.id };
    }
  }
  if (opts.openMessage && !(isObject(arg) && typeof (arg as RefArg).inbox === 'string')) {
    const open = opts.openMessage();
    if (open) return open;
  }
  const ref = await resolveInbox(s, arg, title, { allowNew: false });
  if (!ref) return undefined;
  const api = await s.connection.ensure();
  const cancel = toAbortSignal(opts.token);
  let listing;
  try {
    listing = await api.listInbox(ref.domain, ref.inbox, { limit: opts.latest ? 1 : PICK_LIMIT }, { signal: cancel.signal });
  } finally {
    cancel.dispose();
  }
  if (listing.msgs.length === 0) throw new ExtensionError('no_message', `Inbox ${ref.inbox} has no messages${opts.latest ? ' yet' : ''}.`);
  if (opts.latest) return { ...ref, id: listing.msgs[0].id };
  const now = Date.now();
  const picked = await vscode.window.showQuickPick(
    // Subjects and senders come from mail: inert, so no `$(icon)` renders in the picker.
    listing.msgs.map((m) => ({ label: inertText(messageTitle(m)), description: inert`${messageSender(m)} · ${relativeTime(m.time, now)}`, detail: inertText(m.id), id: m.id })),
    { title, placeHolder: `Pick a message of ${ref.inbox}` },
  );
  return picked ? { ...ref, id: picked.id } : undefined;
}
