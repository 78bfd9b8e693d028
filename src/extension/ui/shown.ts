// Every notification, progress message and status-bar message the extension shows goes
// through here (lint forbids VS Code's own calls elsewhere): the text must be `Inert`, built
// with core/inert's `inert` template, so message- and server-derived values cannot add links,
// icons or bidi overrides, and the last few texts are kept in memory for the debug state, so
// integration tests can check what the user was shown.
import * as vscode from 'vscode';
import type { Inert, Plain } from '../../core/inert';

/** Enough to cover one test's notifications; older ones are dropped. */
const MAX_KEPT = 40;

type ShownWhere = 'info' | 'warning' | 'error' | 'progress' | 'status';

/** `n` counts every text ever shown, so a reader can take what came after a point even once older ones are dropped. */
const kept: Array<{ n: number; where: ShownWhere; text: string }> = [];
let shownCount = 0;

/** Records a text shown by other means (ui/serverNotice.ts) for the debug state. */
export function noteShown(where: ShownWhere, text: string): void {
  keep(where, text);
}

function keep(where: ShownWhere, text: string): void {
  kept.push({ n: ++shownCount, where, text });
  if (kept.length > MAX_KEPT) kept.shift();
}

/** The texts shown lately, oldest first (the debug state). */
export function shownTexts(): Array<{ n: number; where: ShownWhere; text: string }> {
  return [...kept];
}

export function showInfo(text: Inert, ...buttons: string[]): Thenable<string | undefined> {
  keep('info', text);
  return vscode.window.showInformationMessage(text, ...buttons);
}

export function showWarning(text: Inert, ...buttons: string[]): Thenable<string | undefined> {
  keep('warning', text);
  return vscode.window.showWarningMessage(text, ...buttons);
}

export function showError(text: Inert, ...buttons: string[]): Thenable<string | undefined> {
  keep('error', text);
  return vscode.window.showErrorMessage(text, ...buttons);
}

/** A modal warning (a confirmation): `detail` is plain text under it. */
export function showModalWarning(text: Inert, detail: Plain, ...buttons: string[]): Thenable<string | undefined> {
  keep('warning', text);
  return vscode.window.showWarningMessage(text, { modal: true, detail }, ...buttons);
}

export function showStatus(text: Inert, ms: number): vscode.Disposable {
  keep('status', text);
  return vscode.window.setStatusBarMessage(text, ms);
}

/** A progress message (the notification's second line). */
export function reportProgress(progress: vscode.Progress<{ message?: string }>, message: Inert): void {
  keep('progress', message);
  progress.report({ message });
}
