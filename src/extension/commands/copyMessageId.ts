import * as vscode from 'vscode';
import type { Services } from '../services';
import { resolveMessage } from '../ui/pick';

export const id = 'testInbox.copyMessageId';

export async function run(s: Services, arg?: unknown): Promise<string | undefined> {
  const ref = await resolveMessage(s, arg, 'Copy Message Id');
  if (!ref) return undefined;
  await vscode.env.clipboard.writeText(ref.id);
  void vscode.window.setStatusBarMessage(`$(check) Copied ${ref.id}`, 5000);
  return ref.id;
}
