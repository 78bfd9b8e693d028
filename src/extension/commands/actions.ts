// The command behind each node action and error action (tree/present.ts names them), by the
// ids of commandIds.ts: no command module is imported, so nothing here depends on Services.
import { COMMANDS } from '../commandIds';
import { SETTINGS_SECTION } from '../config/settings';
import type { NodeAction } from '../tree/present';

/** VS Code's own command that opens the Settings editor at a query. */
const OPEN_SETTINGS_COMMAND = 'workbench.action.openSettings';
/** The settings group the Change Port action opens: the local server's ports, domain and folder. */
const LOCAL_SETTINGS_QUERY = `${SETTINGS_SECTION}.local`;

export interface ActionCommand {
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
      return { command: OPEN_SETTINGS_COMMAND, args: [LOCAL_SETTINGS_QUERY] };
    case 'startLocalServer':
      return { command: COMMANDS.startLocalServer.id };
    case 'confirmServer':
      return { command: COMMANDS.confirmServer.id };
    case 'switchServer':
      return { command: COMMANDS.switchServer.id };
  }
}
