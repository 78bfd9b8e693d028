// Registers the language-model tools (package.json `contributes.languageModelTools`), one module
// per tool exporting its `name`. A failing tool rejects with the message the user would see for
// a command (describeError), which VS Code hands to the model.
import * as vscode from 'vscode';
import { describeError } from '../errors';
import { errorText } from '../log';
import type { Services } from '../services';
import * as getNewestCode from './getNewestCode';
import * as getVerificationLink from './getVerificationLink';
import * as listInboxes from './listInboxes';
import * as readNewestMessage from './readNewestMessage';

const TOOLS = [listInboxes, readNewestMessage, getNewestCode, getVerificationLink];

/** Every tool name; test/integration/tools.test.ts checks it against the manifest. */
export const TOOL_NAMES = TOOLS.map((t) => t.name);

function guarded<T>(s: Services, name: string, tool: vscode.LanguageModelTool<T>): vscode.LanguageModelTool<T> {
  return {
    prepareInvocation: tool.prepareInvocation?.bind(tool),
    invoke: async (options, token) => {
      try {
        return await tool.invoke(options, token);
      } catch (e) {
        const d = describeError(e);
        if (!d.silent) s.log.warn(`Tool ${name} failed: ${errorText(e)}`);
        throw new Error(d.silent ? 'Cancelled.' : d.message);
      }
    },
  };
}

export function registerTools(s: Services): vscode.Disposable[] {
  // Editors without the language-model API (older builds, some forks): no tools, nothing else changes.
  if (typeof vscode.lm?.registerTool !== 'function') return [];
  return TOOLS.map((t) => vscode.lm.registerTool(t.name, guarded(s, t.name, (t.create as (s: Services) => vscode.LanguageModelTool<unknown>)(s))));
}
