// The `testInbox.inboxes` view: the tree provider in a TreeView, the unread badge, and what
// follows the view's visibility (live updates, the redraw of relative times). The tree
// redraws on model changes only (tree/provider.ts); this module never redraws by itself
// except through model.refreshView().
import * as vscode from 'vscode';
import type { Connection } from '../connection/connection';
import type { LiveUpdates } from './live';
import type { Logger } from '../log';
import { isPhoneInbox } from '../../core/ids';
import type { MessageSummary } from '../../core/wire';
import type { InboxModel, MessageNode, TreeNode } from './model';
import { InboxTreeProvider } from './provider';
import { connectionMessage } from './present';

/** The view id contributed in package.json. */
const VIEW_ID = 'testInbox.inboxes';
/** Read marks of other windows (the shared store, tree/state.ts) are taken in this often: a cheap in-memory check. */
const READ_SYNC_MS = 2000;
/** Relative times in the tree ("5 min ago") are redrawn this often while it is visible. */
const RELATIVE_TIME_REFRESH_MS = 60_000;
/**
 * Rows arriving this soon after the view was first shown are what the user opened it for:
 * the first one takes focus (an empty tree had nothing to focus, so arrow keys did nothing).
 */
const FIRST_FOCUS_WINDOW_MS = 30_000;

interface InboxViewDeps {
  model: InboxModel;
  connection: Connection;
  live: LiveUpdates;
  log: Logger;
}

export class InboxView implements vscode.Disposable {
  readonly provider: InboxTreeProvider;
  readonly view: vscode.TreeView<TreeNode>;
  private timeTimer: ReturnType<typeof setInterval> | undefined;
  private readonly readTimer = setInterval(() => this.deps.model.syncReadState(), READ_SYNC_MS);
  private firstShownAt: number | undefined;
  private firstRowsSeen = false;
  private lastConnectionKind: string | undefined;
  private readonly subs: Array<{ dispose(): void }> = [];

  constructor(private readonly deps: InboxViewDeps) {
    const { model, connection, live, log } = deps;
    this.provider = new InboxTreeProvider({ model, connection, log, onRootsLoaded: () => {
        live.sync();
        // Mail already there when the tree first loads counts too (a first run of `npm start`).
        this.updateBadge();
      }, onRowsShown: (first) => this.focusFirstRow(first) });
    this.view = vscode.window.createTreeView(VIEW_ID, { treeDataProvider: this.provider, showCollapseAll: true });
    this.subs.push(
      this.provider,
      this.view,
      this.view.onDidChangeVisibility((e) => this.onVisible(e.visible)),
      model.onDidChange(() => this.updateBadge()),
      model.onDidChange(() => live.sync()),
      connection.onDidChangeState((st) => {
        if (st.kind === 'starting') return;
        const wasUnreachable = this.lastConnectionKind === 'unreachable';
        this.lastConnectionKind = st.kind;
        live.sync();
        // A new connection (another server, a token, Retry) or the server answers again: read
        // everything afresh, so nothing of the previous server or of the failed loads stays shown.
        if (st.kind === 'idle' || wasUnreachable) model.invalidate();
        else model.refreshView(); // the welcome view follows the connection
        // The view's message says where and why, in full (a tree row is cut at the view's width).
        this.view.message = connectionMessage(st, connection.tokenKey());
      }),
    );
    this.view.message = connectionMessage(connection.state, connection.tokenKey());
    this.onVisible(this.view.visible);
  }

  /**
   * Reveals and selects a message's row, expanding its domain and inbox (Inject Test Message
   * shows what it posted). The tree matches rows by id, so a node built here finds the row.
   * The change that added the row goes to VS Code first, so its reveal waits for that redraw.
   */
  async revealMessage(domain: string, inbox: string, summary: MessageSummary): Promise<void> {
    const node: MessageNode = { kind: 'message', id: `message:${domain}/${inbox}/${summary.id}`, domain, inbox, summary, unread: true, phone: isPhoneInbox(inbox) };
    this.provider.flushChanges();
    await this.view.reveal(node, { select: true, focus: false, expand: false });
  }

  private updateBadge(): void {
    const n = this.deps.model.unreadCount();
    this.view.badge = n > 0 ? { value: n, tooltip: `${n} unread message${n === 1 ? '' : 's'}` } : undefined;
  }

  /**
   * Once per session: when the first rows arrive while the view is shown and just opened, with
   * no editor that could hold the keyboard, the first row takes focus.
   */
  private focusFirstRow(first: TreeNode): void {
    if (this.firstRowsSeen) return;
    this.firstRowsSeen = true;
    const shownAt = this.firstShownAt;
    if (!this.view.visible || shownAt === undefined || Date.now() - shownAt > FIRST_FOCUS_WINDOW_MS) return;
    if (!vscode.window.state.focused || vscode.window.activeTextEditor) return;
    // After getChildren has answered: the row must be in the tree before it can take focus.
    setTimeout(() => {
      if (!this.view.visible) return;
      this.view.reveal(first, { focus: true, select: false }).then(undefined, (e: unknown) => this.deps.log.warn(`Tree: could not focus the first row: ${String(e)}`));
    }, 0);
  }

  private onVisible(visible: boolean): void {
    if (visible) this.firstShownAt ??= Date.now();
    this.deps.live.setVisible(visible);
    if (visible && !this.timeTimer) this.timeTimer = setInterval(() => this.deps.model.refreshView(), RELATIVE_TIME_REFRESH_MS);
    else if (!visible && this.timeTimer) {
      clearInterval(this.timeTimer);
      this.timeTimer = undefined;
    }
  }

  dispose(): void {
    clearInterval(this.readTimer);
    clearInterval(this.timeTimer);
    this.timeTimer = undefined;
    for (const s of this.subs.splice(0)) s.dispose();
  }
}
