import type * as vscode from 'vscode';

export function activate(_context: vscode.ExtensionContext): void {
  // Composed in later steps: client, token store, tree, commands.
}

export function deactivate(): void {}
