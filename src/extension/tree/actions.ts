// The command behind each node action and error action (tree/present.ts names them), by the
// ids of commandIds.ts: no command module is imported, so nothing here depends on Services.
import { COMMANDS } from '../commandIds';
import { SETTINGS_SECTION } from '../config/settings';
import type { NodeAction } from './present';

/** VS Code's own command that opens the Settings editor at a query (the User tab). */
const OPEN_SETTINGS_COMMAND = 'workbench.action.openSettings';
/**
 * The same on the Remote tab: in a remote window (`vscode.env.remoteName` set) the local
 * server's settings are machine-scoped and can be edited only there.
 */
const OPEN_REMOTE_SETTINGS_COMMAND = 'workbench.action.openRemoteSettings';
/** The setting the Change Port action lands on (the local server's port settings sit beside it). */
const PORT_SETTING_ID = `${SETTINGS_SECTION}.local.httpPort`;

/** The window's remote name (`vscode.env.remoteName`), told once at activation; undefined in a local window. */
let remoteName: string | undefined;
export function useRemoteName(name: string | undefined): void {
  remoteName = name || undefined;
}

/** The command that opens the Settings editor on `settingId`, on the tab where it can be edited. */
export function openSettingCommand(settingId: string, remote: string | undefined = remoteName): ActionCommand {
  return { command: remote ? OPEN_REMOTE_SETTINGS_COMMAND : OPEN_SETTINGS_COMMAND, args: [settingId] };
}

interface ActionCommand {
  command: string;
  args?: unknown[];
}

export function commandFor(action: NodeAction): ActionCommand {
  switch (action) {
    case 'openMessage':
      return { command: COMMANDS.openMessage.id };
    case 'loadMore':
      return { command: COMMANDS.loadMore.id };
    case 'injectMessage':
      return { command: COMMANDS.injectMessage.id };
    case 'setApiToken':
      return { command: COMMANDS.setApiToken.id };
    case 'setWebhookToken':
      return { command: COMMANDS.setWebhookToken.id };
    case 'showLog':
      return { command: COMMANDS.showLog.id };
    case 'retry':
      return { command: COMMANDS.refresh.id };
    case 'changePort':
      return openSettingCommand(PORT_SETTING_ID);
    case 'startLocalServer':
      return { command: COMMANDS.startLocalServer.id };
    case 'confirmServer':
      return { command: COMMANDS.confirmServer.id };
    case 'switchServer':
      return { command: COMMANDS.switchServer.id };
  }
}
