import type { Services } from '../services';
import { lastRenderedMessage, messagePanelsInfo, openMessagePanels } from '../messagePanel/messagePanel';
import type { InboxTreeProvider } from '../tree/provider';
import { faultRulesMarkShown, statusBarShown } from '../ui/statusBar';
import { serverNoticeShown } from '../ui/serverNotice';
import { shownTexts } from '../ui/shown';
import { TEST_HOOK_COMMANDS } from '../commandIds';
import { searchPickShown } from './searchMessages';

export const id = TEST_HOOK_COMMANDS.debugState.id;

/** A test hook (registered only in test mode): the tree as presented, the connection and live-update state, for integration tests. */
export async function run(s: Services, provider: InboxTreeProvider): Promise<unknown> {
  const tree = await provider.snapshot();
  const st = s.connection.state;
  return {
    viewState: provider.state,
    connection:
      st.kind === 'ready'
        ? { kind: st.kind, ...st.server }
        : st.kind === 'failed'
          ? { kind: st.kind, error: String((st.error as Error)?.message ?? st.error) }
          : st.kind === 'unreachable'
            ? { kind: st.kind, baseUrl: st.baseUrl, error: st.reason }
            : st.kind === 'detached'
              ? { kind: st.kind, baseUrl: st.baseUrl, pid: st.pid }
              : { kind: st.kind },
    tokenKey: s.connection.tokenKey(),
    localPid: s.connection.localPid,
    unread: s.model.unreadCount(),
    badge: s.tree.view.badge?.value ?? 0,
    live: s.live.describe(),
    tree,
    shown: shownTexts(),
    /** The server notice on screen (ui/serverNotice.ts): its text and action titles, or null once withdrawn. */
    serverNotice: serverNoticeShown() ?? null,
    /** The open Search Messages picker: its title and rows. */
    search: searchPickShown() ?? null,
    messageView: { openPanels: openMessagePanels(), panels: messagePanelsInfo(), lastRendered: lastRenderedMessage() ?? null },
    /** The tree rows selected (ids) and whether the view is shown. */
    selection: s.tree.view.selection.map((n) => n.id),
    viewVisible: s.tree.view.visible,
    /** The view's message (tree/present.ts connectionMessage): the URL and the reason when not connected. */
    viewMessage: s.tree.view.message,
    statusBar: statusBarShown() ?? null,
    /** The fault-rules mark (docs/chaos.md): its text and tooltip, or null while hidden. */
    faultRules: faultRulesMarkShown() ?? null,
    // Everything the extension keeps outside SecretStorage, so tests can check no token is there.
    mementos: {
      global: Object.fromEntries(s.context.globalState.keys().map((k) => [k, s.context.globalState.get(k)])),
      workspace: Object.fromEntries(s.context.workspaceState.keys().map((k) => [k, s.context.workspaceState.get(k)])),
    },
  };
}
