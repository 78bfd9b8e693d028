// The `testInbox.inboxes` tree. getChildren never throws and never pops notifications:
// failures become error nodes, or the fixes of the connection's state as action rows.
import * as vscode from 'vscode';
import { ApiError } from '../../api/errors';
import { isPhoneInbox } from '../../core/ids';
import { commandFor } from './actions';
import { ContextKey } from '../config/contextKeys';
import type { Connection } from '../connection/connection';
import { describeError, ExtensionError } from '../errors';
import { errorText, type Logger } from '../log';
import { type DomainNode, domainRowId, type InboxModel, type InboxNode, inboxRowId, type TreeChange, type TreeNode } from './model';
import { connectionActions, present, type Presentation } from './present';
import { RefreshPacer } from './refreshPacer';

/** The phase the tree shows (its `testInbox.state` context key): the connection's, as the welcome views and menus read it. Not the message view's ViewContent (the debug state's `viewState` is this phase). */
type TreePhase = 'idle' | 'starting' | 'ready' | 'noToken' | 'stopped' | 'detached' | 'unreachable' | 'failed';

/** Errors that mean "the server is not there": shown as the unreachable state. */
function isUnreachable(e: unknown): boolean {
  return ApiError.is(e, 'network') || ApiError.is(e, 'timeout') || ExtensionError.is(e, 'no_server') || ExtensionError.is(e, 'unreachable');
}

interface ProviderDeps {
  model: InboxModel;
  connection: Connection;
  log: Logger;
  /** Called after the root level loaded (live updates follow the shown domains). */
  onRootsLoaded(): void;
  /** Told the first row each time the roots load with rows (the view may move focus to it). */
  onRowsShown?(first: TreeNode): void;
}

export class InboxTreeProvider implements vscode.TreeDataProvider<TreeNode>, vscode.Disposable {
  private readonly changeEmitter = new vscode.EventEmitter<TreeNode | TreeNode[] | undefined | void>();
  readonly onDidChangeTreeData = this.changeEmitter.event;
  private phase: TreePhase = 'idle';
  private empty = false;
  private readonly subs: vscode.Disposable[] = [];

  /** Paces the redraws to VS Code's 200 ms coalescing of tree changes (refreshPacer.ts). */
  private readonly pacer = new RefreshPacer<TreeChange>((changes) => this.redraw(changes));
  /**
   * The domain and inbox rows VS Code holds, as the very objects getChildren gave it, by id: a
   * change under one row redraws that row alone. VS Code finds a row to redraw by object, so an
   * entry is dropped whenever VS Code forgets the row (its parent redrawn, or everything).
   */
  private readonly rows = new Map<string, DomainNode | InboxNode>();

  /** The tree redraws when the model changes, and only then: model.refreshView() redraws, model.invalidate() reloads. */
  constructor(private readonly deps: ProviderDeps) {
    this.subs.push(this.changeEmitter, this.pacer, { dispose: deps.model.onDidChange((change) => this.pacer.request(change)).dispose });
  }

  /**
   * Redraws the rows the changes touched, or everything. A row redrawn by VS Code reads its
   * children again (the messages of an inbox, the inboxes of a domain): a new message redraws its
   * domain, "Load more" its inbox, and the rows of every other inbox stay as they are. Before,
   * every change redrew the whole tree: three round trips to the workbench one after the other
   * (root, domain, inbox) and every row of every expanded inbox rebuilt, each time.
   */
  private redraw(changes: TreeChange[] | undefined): void {
    const rows = changes && this.rowsOf(changes);
    if (!rows) this.rows.clear();
    this.changeEmitter.fire(rows);
  }

  /** The shown rows of the changes, brought up to date in place (VS Code reads them again by object); undefined when one is not shown. */
  private rowsOf(changes: TreeChange[]): TreeNode[] | undefined {
    const out: Array<DomainNode | InboxNode> = [];
    for (const change of changes) {
      // An inbox VS Code has not asked for (its domain collapsed): its domain's row stands for it.
      const at = change.inbox !== undefined && this.rows.has(inboxRowId(change.domain, change.inbox)) ? change : { domain: change.domain };
      const shown = this.rows.get(at.inbox === undefined ? domainRowId(at.domain) : inboxRowId(at.domain, at.inbox));
      const now = this.deps.model.rowNow(at);
      if (!shown || !now) return undefined;
      // `expand` only as the row is now: a first arrival opens its row once (model.rowsShown).
      Object.assign(shown, { expand: undefined }, now);
      out.push(shown);
    }
    // VS Code forgets the rows under a redrawn domain until it asks for them again.
    for (const row of out) if (row.kind === 'domain') this.forgetInboxRows(row.domain);
    return out;
  }

  private forgetInboxRows(domain: string): void {
    for (const [id, r] of this.rows) if (r.kind === 'inbox' && r.domain === domain) this.rows.delete(id);
  }

  get state(): TreePhase {
    return this.phase;
  }

  private setState(state: TreePhase, empty = false): void {
    if (state !== this.phase) {
      this.phase = state;
      void vscode.commands.executeCommand('setContext', ContextKey.state, state);
    }
    if (empty !== this.empty) {
      this.empty = empty;
      void vscode.commands.executeCommand('setContext', ContextKey.empty, empty);
    }
  }

  /** A state that is not ready: the view's message says where and why (view.ts), these rows offer the fixes. */
  private stateRows(state: 'noToken' | 'stopped' | 'detached' | 'unreachable'): TreeNode[] {
    this.setState(state);
    return connectionActions(state);
  }

  /** Hands VS Code the tree changes the pacer still holds (a reveal must follow them, refreshPacer.ts). */
  flushChanges(): void {
    this.pacer.flush();
  }

  getTreeItem(node: TreeNode): vscode.TreeItem {
    return toTreeItem(node, present(node, Date.now()));
  }

  /** What VS Code shows under a row; the domain and inbox rows are kept to redraw them alone later. */
  async getChildren(node?: TreeNode): Promise<TreeNode[]> {
    const kids = await this.children(node);
    if (!node) this.rows.clear();
    if (!node || node.kind === 'domain') {
      if (node) this.forgetInboxRows(node.domain);
      for (const k of kids) if (k.kind === 'domain' || k.kind === 'inbox') this.rows.set(k.id, k);
      this.deps.model.rowsShown(kids);
    }
    return kids;
  }

  private async children(node?: TreeNode): Promise<TreeNode[]> {
    try {
      if (!node) return await this.roots();
      if (node.kind === 'domain') return await this.deps.model.domainChildren(node.domain);
      if (node.kind === 'inbox') return await this.deps.model.inboxChildren(node.domain, node.inbox);
      return [];
    } catch (e) {
      // The model catches its own errors; this is the last line of defence.
      this.deps.log.error(`Tree: ${errorText(e)}`);
      const d = describeError(e);
      return [{ kind: 'error', id: `error:tree:${node?.id ?? 'root'}`, message: d.message, actions: d.actions }];
    }
  }

  private async roots(): Promise<TreeNode[]> {
    const c = this.deps.connection;
    const k = c.state.kind;
    if ((k === 'idle' || k === 'starting' || k === 'ready') && !c.current()) {
      // Connecting (first use, another server, a restart): nothing of a previous server stays on
      // screen meanwhile; the connection's next state redraws the view (view.ts).
      c.ensure().catch(() => undefined);
      return this.setState('starting'), [];
    }
    try {
      await c.ensure();
    } catch (e) {
      const st = c.state;
      if (st.kind === 'noToken' || st.kind === 'stopped' || st.kind === 'detached') return this.stateRows(st.kind);
      if (isUnreachable(e)) return this.stateRows('unreachable');
      const d = describeError(e);
      // Superseded by a newer connection attempt (settings changed): it refreshes the tree when done.
      if (d.silent) return this.setState('starting'), [];
      this.setState('failed');
      return [{ kind: 'error', id: 'error:connection', message: d.message, actions: d.actions }];
    }
    const roots = await this.deps.model.roots();
    const rootError = roots.length === 1 && roots[0].kind === 'error' ? roots[0] : undefined;
    // A listing found nobody at the server's address (the connection says so): the view's message
    // explains it, rather than domain rows with cut-off error rows under them.
    if (c.state.kind === 'unreachable' || (rootError && c.state.kind !== 'ready')) return this.stateRows('unreachable');
    this.deps.onRootsLoaded();
    // Empty server and nothing added: the welcome view explains how mail gets in.
    let empty = false;
    if (!rootError) {
      const children = await Promise.all(roots.map((r) => (r.kind === 'domain' ? this.deps.model.domainChildren(r.domain) : Promise.resolve([r]))));
      empty = children.every((list) => list.length === 0);
    }
    this.setState('ready', empty);
    if (!empty && roots[0]) this.deps.onRowsShown?.(roots[0]);
    return empty ? [] : roots;
  }

  /**
   * For reveal (view.ts focuses the first row): a row's parent by id, which is how the tree
   * matches rows (TreeItem.id); domains and errors are roots.
   */
  getParent(node: TreeNode): TreeNode | undefined {
    switch (node.kind) {
      case 'domain':
      case 'error':
      case 'action':
        return undefined;
      case 'inbox':
        return { kind: 'domain', id: domainRowId(node.domain), domain: node.domain, unread: 0 };
      default:
        return { kind: 'inbox', id: inboxRowId(node.domain, node.inbox), domain: node.domain, inbox: node.inbox, added: false, phone: isPhoneInbox(node.inbox), unread: 0 };
    }
  }

  /** The whole tree as presented (for tests and the debug command), commands as the tree items have them; every level expanded. */
  async snapshot(): Promise<SnapshotNode[]> {
    const walk = async (node: TreeNode | undefined, depth: number): Promise<SnapshotNode[]> => {
      // Not getChildren: these rows are not VS Code's, so they must not stand in for its own.
      const kids = await this.children(node);
      const now = Date.now();
      const out: SnapshotNode[] = [];
      for (const k of kids) {
        const presented = present(k, now);
        const p: SnapshotNode = { ...presented, command: presented.command && snapshotCommand(presented.command) };
        if ((k.kind === 'domain' || k.kind === 'inbox') && depth < 3) p.children = await walk(k, depth + 1);
        out.push(p);
      }
      return out;
    };
    return walk(undefined, 0);
  }

  dispose(): void {
    for (const s of this.subs) s.dispose();
  }
}

/** A node of snapshot(): its presentation with the command id a click runs. */
type SnapshotNode = Omit<Presentation, 'command'> & {
  command?: { command: string; title: string; args?: unknown[]; withNode?: boolean };
  children?: unknown[];
};

/** The command of a node in snapshot(): the id and arguments it runs (the node itself for `withNode`). */
function snapshotCommand(c: NonNullable<Presentation['command']>): NonNullable<SnapshotNode['command']> {
  const target = commandFor(c.action);
  return { command: target.command, title: c.title, args: c.args ?? target.args, withNode: c.withNode };
}

/** The command a click on the node runs. */
function itemCommand(node: TreeNode, c: NonNullable<Presentation['command']>): vscode.Command {
  const target = commandFor(c.action);
  return { command: target.command, title: c.title, arguments: c.withNode ? [node] : (c.args ?? target.args) };
}

/** One ThemeIcon per icon and colour, shared by every row that shows it (10,000 rows held 10,000 copies). */
const themeIcons = new Map<string, vscode.ThemeIcon>();

function themeIcon(icon: string, color: string | undefined): vscode.ThemeIcon {
  const key = `${icon}\n${color ?? ''}`;
  let t = themeIcons.get(key);
  if (!t) themeIcons.set(key, (t = new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined)));
  return t;
}

function toTreeItem(node: TreeNode, p: Presentation): vscode.TreeItem {
  const collapsible =
    p.collapsible === 'expanded'
      ? vscode.TreeItemCollapsibleState.Expanded
      : p.collapsible === 'collapsed'
        ? vscode.TreeItemCollapsibleState.Collapsed
        : vscode.TreeItemCollapsibleState.None;
  const item = new vscode.TreeItem(p.label, collapsible);
  item.id = p.id;
  item.description = p.description;
  item.tooltip = p.tooltip;
  item.iconPath = themeIcon(p.icon, p.iconColor);
  item.contextValue = p.contextValue;
  if (p.command) item.command = itemCommand(node, p.command);
  if (p.accessibilityLabel) item.accessibilityInformation = { label: p.accessibilityLabel };
  return item;
}
