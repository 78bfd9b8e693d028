import * as vscode from 'vscode';
import type { Services } from '../services';
import { inert } from '../../core/inert';
import { resolveMessage } from '../ui/pick';
import { showStatus } from '../ui/shown';
import { COMMANDS } from '../commandIds';

export const id = COMMANDS.copyMessageId.id;

export async function run(s: Services, arg?: unknown): Promise<string | undefined> {
  const ref = await resolveMessage(s, arg, 'Copy Message Id');
  if (!ref) return undefined;
  await vscode.env.clipboard.writeText(ref.id);
  showStatus(inert`$(check) Copied ${ref.id}`, 5000);
  return ref.id;
}
