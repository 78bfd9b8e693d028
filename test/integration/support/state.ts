// What the Test Inbox suites share: the extension's hidden debug state (the tree exactly as
// presented, the connection, the badge), and a local server on free ports in a temp folder.
import { promises as fs, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { DEFAULT_HTTP_PORT } from '../../../src/shared/contract';
import { atExit } from '../../support/atExit';

export interface PresentedNode {
  id: string;
  label: string;
  description?: string;
  tooltip?: string;
  icon: string;
  unread?: boolean;
  contextValue: string;
  command?: { command: string; args?: unknown[] };
  accessibilityLabel?: string;
  children?: PresentedNode[];
}

export interface DebugState {
  viewState: string;
  connection: { kind: string; baseUrl?: string; local?: boolean; testInbox?: boolean; defaultDomain?: string; mode?: string; smtp?: { host: string; port: number }; error?: string };
  tokenKey: string;
  localPid?: number;
  unread: number;
  badge: number;
  live: Record<string, string>;
  tree: PresentedNode[];
  mementos: { global: Record<string, unknown>; workspace: Record<string, unknown> };
  messageView: { openPanels: number; lastRendered: { id: string; kind: string; code?: string; verificationLink?: string; tabs: string[] } | null };
  /** Notifications, progress and status-bar messages shown lately, oldest first. */
  shown: Array<{ n: number; where: 'info' | 'warning' | 'error' | 'progress' | 'status'; text: string }>;
}

/** Generous: a local server start on a loaded 2-core machine. */
export const READY_TIMEOUT_MS = 15_000;

export async function debugState(): Promise<DebugState> {
  return vscode.commands.executeCommand<DebugState>('testInbox._debugState');
}

/** Depth-first search of the presented tree. */
export function findNode(nodes: PresentedNode[], pred: (n: PresentedNode) => boolean): PresentedNode | undefined {
  for (const n of nodes) {
    if (pred(n)) return n;
    const hit = n.children ? findNode(n.children, pred) : undefined;
    if (hit) return hit;
  }
  return undefined;
}

export function inboxNode(tree: PresentedNode[], domain: string, inbox: string): PresentedNode | undefined {
  return findNode(tree, (n) => n.id === `inbox:${domain}/${inbox}`);
}

export function messageLabels(tree: PresentedNode[], domain: string, inbox: string): string[] {
  return (inboxNode(tree, domain, inbox)?.children ?? []).filter((n) => /^testInbox\.message(\.code)?$/.test(n.contextValue)).map((n) => n.label);
}

const cfg = () => vscode.workspace.getConfiguration('testInbox');

export async function setSetting(key: string, value: unknown): Promise<void> {
  await cfg().update(key, value, vscode.ConfigurationTarget.Global);
}

/** One data folder per extension host (every suite file shares it), removed when the host exits. */
export const dataDir = path.join(os.tmpdir(), `test-inbox-it-${process.pid}`);

/** Points the extension at its own local server on free ports with a fresh data folder; resolves when connected. */
export async function useLocalServer(): Promise<DebugState & { connection: { baseUrl: string; smtp: { host: string; port: number } } }> {
  await fs.mkdir(dataDir, { recursive: true });
  // Every suite bundle carries its own copy of this module: the cleanup is keyed, so it is one.
  atExit(`integration data folder ${dataDir}`, () => rmSync(dataDir, { recursive: true, force: true }));
  await setSetting('local.httpPort', 0);
  await setSetting('local.smtpPort', 0);
  await setSetting('local.dataFolder', dataDir);
  await setSetting('server', 'local');
  return waitForState(
    (s) => s.connection.kind === 'ready' && s.connection.local === true && !s.connection.baseUrl?.endsWith(`:${DEFAULT_HTTP_PORT}`) && s.connection.smtp !== undefined,
    'the local server on free ports',
  ) as ReturnType<typeof useLocalServer>;
}

/** Polls the debug state until `pred` holds (the state is recomputed on each poll). */
export async function waitForState(pred: (s: DebugState) => boolean, what: string, timeoutMs = READY_TIMEOUT_MS): Promise<DebugState> {
  const deadline = Date.now() + timeoutMs;
  let last: DebugState | undefined;
  for (;;) {
    last = await debugState();
    if (pred(last)) return last;
    if (Date.now() > deadline) {
      throw new Error(`Timed out waiting for ${what}; last state: ${JSON.stringify({ viewState: last.viewState, connection: last.connection, live: last.live, tree: last.tree.map((n) => n.label) })}`);
    }
    await new Promise((r) => setTimeout(r, 150));
  }
}

export async function clipboard(): Promise<string> {
  return vscode.env.clipboard.readText();
}

/** A unique inbox name per test so suites sharing one server never see each other's mail. */
export function uniqueInbox(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}${Math.floor(Math.random() * 1e4).toString(36)}`;
}

/** How long a quick input takes to show on a loaded machine before it is answered. */
const ANSWER_EVERY_MS = 500;
/** Give up answering after this many tries (the command's own result then decides the test). */
const MAX_ANSWERS = 30;

/**
 * Answers the quick input (quick pick or input box) a command opens, as a user would: `next`
 * moves the selection down that many items and then accepts; `close` presses Escape. Repeated
 * until the command returns (an answer given before the input shows changes nothing).
 */
export async function answering<T>(run: Thenable<T>, answer: { next?: number } | 'close' = {}): Promise<T> {
  let done = false;
  const result = Promise.resolve(run).finally(() => {
    done = true;
  });
  for (let i = 0; i < MAX_ANSWERS && !done; i++) {
    await new Promise((r) => setTimeout(r, ANSWER_EVERY_MS));
    if (done) break;
    if (answer === 'close') {
      await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
      continue;
    }
    for (let n = 0; n < (answer.next ?? 0); n++) await vscode.commands.executeCommand('workbench.action.quickOpenSelectNext');
    await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
  }
  return result;
}
