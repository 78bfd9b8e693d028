// The command behind each node action and error action (tree/present.ts names them), by the
// exported `id` of the command module. Ids are read when asked, not at load, so the import
// cycles through the command modules (they use Services) never see a half-loaded module.
import { SETTINGS_SECTION } from '../config/settings';
import type { NodeAction } from '../tree/present';
import * as confirmServer from './confirmServer';
import * as injectMessage from './injectMessage';
import * as loadMore from './loadMore';
import * as openMessage from './openMessage';
import * as refresh from './refresh';
import * as setApiToken from './setApiToken';
import * as setWebhookToken from './setWebhookToken';
import * as showLog from './showLog';
import * as startLocalServer from './startLocalServer';
import * as switchServer from './switchServer';

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
      return { command: openMessage.id };
    case 'loadMore':
      return { command: loadMore.id };
    case 'injectMessage':
      return { command: injectMessage.id };
    case 'setApiToken':
      return { command: setApiToken.id };
    case 'setWebhookToken':
      return { command: setWebhookToken.id };
    case 'showLog':
      return { command: showLog.id };
    case 'retry':
      return { command: refresh.id };
    case 'changePort':
      return { command: OPEN_SETTINGS_COMMAND, args: [LOCAL_SETTINGS_QUERY] };
    case 'startLocalServer':
      return { command: startLocalServer.id };
    case 'confirmServer':
      return { command: confirmServer.id };
    case 'switchServer':
      return { command: switchServer.id };
  }
}
