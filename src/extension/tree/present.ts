// How each tree node looks: label, description, tooltip, codicon, contextValue, command.
// Pure, so the tree's contents are testable without a VS Code host. Every text a row shows is
// `Plain` (core/inert.ts): built with the `plain` template, so a subject, a sender or an inbox
// name reaches the tree without bidi controls or control characters, and cut when very long;
// toTreeItem (provider.ts) takes nothing else.
import { PRIVATE_DOMAIN } from '../../core/ids';
import { plain, plainMessage, type Plain } from '../../core/inert';
import { senderLine } from '../../core/sender';
import { messageSender, messageTitle } from '../../core/title';
import { commandTitle } from '../commandIds';
import type { ConnectionState } from '../connection/connection';
import { ACTION_TITLES, describeError, type ErrorAction } from '../errors';
import { absoluteTime, relativeTime } from '../util/time';
import type { ActionNode, TreeNode } from './model';

/** contextValues menus match on (package.json `view/item/context`). */
const NodeContext = {
  domain: 'testInbox.domain',
  inbox: 'testInbox.inbox',
  /** An inbox the user added (it can be removed). */
  addedInbox: 'testInbox.inbox.added',
  message: 'testInbox.message',
  /** A message with a known one-time code (Copy One-Time Code is offered only there). */
  messageWithCode: 'testInbox.message.code',
  loadMore: 'testInbox.loadMore',
  error: 'testInbox.error',
  action: 'testInbox.action',
  empty: 'testInbox.empty',
} as const;

/**
 * What clicking a node does: an error's action, or opening, loading more, injecting. The
 * command behind each is tree/actions.ts's (this module stays free of vscode).
 */
export type NodeAction = ErrorAction | 'openMessage' | 'loadMore' | 'injectMessage';

export interface Presentation {
  id: string;
  label: Plain;
  /** Unread message: its description starts with UNREAD_MARK and its accessible label with "Unread". */
  unread?: boolean;
  description?: Plain;
  tooltip?: Plain;
  icon: string;
  /** Theme color id for the icon. */
  iconColor?: string;
  contextValue: string;
  collapsible: 'none' | 'collapsed' | 'expanded';
  command?: { action: NodeAction; title: string; args?: unknown[]; withNode?: boolean };
  accessibilityLabel?: Plain;
}

/**
 * Marks an unread message at the start of its row's description, where a glance down the tree
 * finds it (the tree API has no bold; a label highlight looks like a search match). Screen
 * readers hear "Unread" from the row's accessible label instead.
 */
const UNREAD_MARK = '●';

/**
 * The view's message for a connection state that is not "ready": the server's URL and the
 * real reason, in full (the rows of connectionActions under it offer the fixes). `where` is the configured
 * server's URL, for states that carry none.
 */
export function connectionMessage(st: ConnectionState, where: string): Plain | undefined {
  switch (st.kind) {
    case 'idle':
    case 'starting':
    case 'ready':
      return undefined;
    case 'noToken':
      return plainMessage`${st.baseUrl} needs an API token. The token is kept in VS Code's secret storage.`;
    case 'stopped':
      return plainMessage`The local server (${where}) is stopped.`;
    case 'detached':
      return plainMessage`Detached from the local server at ${st.baseUrl} (process ${st.pid ?? '?'}, another window or a terminal); it keeps running.`;
    case 'unreachable':
      return plainMessage`${st.baseUrl} cannot be reached: ${st.reason}`;
    case 'failed':
      return plainMessage`${where}: ${describeError(st.error).message}`;
  }
}

/** The codicon of each action row. */
const ACTION_ICONS: Record<ErrorAction, string> = {
  setApiToken: 'key',
  setWebhookToken: 'key',
  showLog: 'output',
  retry: 'refresh',
  changePort: 'settings-gear',
  startLocalServer: 'play',
  confirmServer: 'shield',
  switchServer: 'arrow-swap',
};

/**
 * The fixes a state offers, as rows under the view's message (a view with a message shows no
 * welcome view, so the message and its actions are one place). None while connecting or ready;
 * a failure's actions come with its error row.
 */
export function connectionActions(kind: ConnectionState['kind']): ActionNode[] {
  const row = (action: ErrorAction, title?: string): ActionNode => ({ kind: 'action', id: `action:${kind}:${action}`, action, title });
  switch (kind) {
    case 'noToken':
      return [row('setApiToken'), row('switchServer')];
    case 'stopped':
      return [row('startLocalServer'), row('showLog')];
    case 'detached':
      return [row('startLocalServer', 'Attach Again'), row('switchServer')];
    case 'unreachable':
      return [row('retry'), row('showLog'), row('switchServer')];
    default:
      return [];
  }
}

/** Parts joined with `sep`, the empty ones left out; undefined when none is left. */
function joined(parts: Array<Plain | undefined>, sep: Plain): Plain | undefined {
  return (parts.filter(Boolean).join(sep) as Plain) || undefined;
}

export function present(node: TreeNode, now: number): Presentation {
  switch (node.kind) {
    case 'domain': {
      const inboxes = node.inboxCount !== undefined ? (node.inboxCount === 1 ? plain`1 inbox` : plain`${node.inboxCount} inboxes`) : undefined;
      const unread = node.unread > 0 ? plain`${node.unread} unread` : undefined;
      return {
        id: node.id,
        label: plain`${node.domain}`,
        description: joined([inboxes, unread], plain` · `),
        tooltip: node.domain === PRIVATE_DOMAIN ? plain`The private domains of this server` : plain`Domain ${node.domain}`,
        icon: 'globe',
        contextValue: NodeContext.domain,
        collapsible: 'expanded',
        accessibilityLabel: joined([plain`Domain ${node.domain}`, inboxes, unread], plain`, `),
      };
    }
    case 'inbox':
      return {
        id: node.id,
        label: plain`${node.inbox}`,
        description: node.unread > 0 ? plain`${node.unread} unread` : node.address !== undefined ? plain`${node.address}` : undefined,
        tooltip: joined(
          [
            node.phone ? plain`SMS inbox ${node.inbox}` : node.address ? plain`Inbox ${node.address}` : plain`Inbox ${node.inbox}`,
            node.added ? plain`Added by you` : plain`Seen in recent mail`,
            node.unread > 0 ? plain`${node.unread} unread` : undefined,
          ],
          plain`\n`,
        ),
        icon: node.phone ? 'device-mobile' : 'inbox',
        contextValue: node.added ? NodeContext.addedInbox : NodeContext.inbox,
        // A first message to a new inbox opens it (tree/model.ts marks it), so the message is seen.
        collapsible: node.expand ? 'expanded' : 'collapsed',
        accessibilityLabel: plain`${node.phone ? 'SMS inbox' : 'Inbox'} ${node.address ?? node.inbox}${node.unread > 0 ? `, ${node.unread} unread` : ''}`,
      };
    case 'message': {
      const m = node.summary;
      const sender = messageSender(m);
      const subject = messageTitle({ ...m, to: node.inbox });
      const when = relativeTime(m.time, now);
      const unread = node.unread ? `${UNREAD_MARK} ` : '';
      return {
        id: node.id,
        label: plain`${subject}`,
        unread: node.unread,
        description: plain`${unread}${sender} · ${when}`,
        tooltip: joined(
          [
            plain`${subject}`,
            plain`From: ${senderLine(m)}`,
            plain`To: ${m.to}`,
            plain`Received: ${absoluteTime(m.time)}`,
            plain`Id: ${m.id}`,
            node.code ? plain`Code: ${node.code}` : undefined,
            node.unread ? plain`Unread` : undefined,
          ],
          plain`\n`,
        ),
        // A key marks a row with a code (Copy One-Time Code is offered there); the mark and colour mark unread.
        icon: node.code ? 'key' : node.phone ? (node.unread ? 'comment-unresolved' : 'comment') : node.unread ? 'mail' : 'mail-read',
        iconColor: node.unread ? 'notificationsInfoIcon.foreground' : undefined,
        contextValue: node.code ? NodeContext.messageWithCode : NodeContext.message,
        collapsible: 'none',
        command: { action: 'openMessage', title: commandTitle('openMessage'), withNode: true },
        accessibilityLabel: plain`${node.unread ? 'Unread ' : ''}${node.phone ? 'SMS' : 'email'} from ${sender}, ${subject}, ${when}${node.code ? `, has code ${node.code}` : ''}`,
      };
    }
    case 'loadMore':
      return {
        id: node.id,
        label: plain`Load more…`,
        tooltip: plain`Load older messages of ${node.inbox}`,
        icon: 'ellipsis',
        contextValue: NodeContext.loadMore,
        collapsible: 'none',
        command: { action: 'loadMore', title: 'Load More', withNode: true },
        accessibilityLabel: plain`Load older messages of ${node.inbox}`,
      };
    case 'error': {
      const first = node.actions[0];
      return {
        id: node.id,
        label: plainMessage`${node.message}`,
        description: first ? plain`${ACTION_TITLES[first]}…` : undefined,
        tooltip: first ? plainMessage`${node.message}\n\nClick: ${ACTION_TITLES[first]}` : plainMessage`${node.message}`,
        icon: 'error',
        iconColor: 'errorForeground',
        contextValue: NodeContext.error,
        collapsible: 'none',
        command: first ? { action: first, title: ACTION_TITLES[first] } : undefined,
        accessibilityLabel: plainMessage`Error: ${node.message}`,
      };
    }
    case 'action': {
      const title = node.title ?? ACTION_TITLES[node.action];
      return {
        id: node.id,
        label: plain`${title}`,
        icon: ACTION_ICONS[node.action],
        contextValue: NodeContext.action,
        collapsible: 'none',
        command: { action: node.action, title },
        accessibilityLabel: plain`${title}`,
      };
    }
    case 'empty':
      return {
        id: node.id,
        label: plain`No messages yet`,
        description: plain`Inject…`,
        tooltip: plainMessage`${node.message}`,
        icon: 'info',
        contextValue: NodeContext.empty,
        collapsible: 'none',
        command: { action: 'injectMessage', title: 'Inject Test Message', args: [{ domain: node.domain, inbox: node.inbox }] },
        accessibilityLabel: plainMessage`${node.message}`,
      };
  }
}
