// The new-mail notification (notify.ts) shown by the editor: VS Code's information message,
// the Open Message command and the clipboard.
import * as vscode from 'vscode';
import { COMMANDS } from '../commandIds';
import type { NotifyDeps } from './notify';
import { showInfo } from './shown';

export function withEditorUi(deps: Omit<NotifyDeps, 'show' | 'open' | 'copy'>): NotifyDeps {
  return {
    ...deps,
    show: (text, buttons) => showInfo(text, ...buttons),
    open: (ref) => vscode.commands.executeCommand(COMMANDS.openMessage.id, ref),
    copy: (text) => vscode.env.clipboard.writeText(text),
  };
}
