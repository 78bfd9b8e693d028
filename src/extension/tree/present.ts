// How each tree node looks: label, description, tooltip, codicon, contextValue, command.
// Pure, so the tree's contents are testable without a VS Code host.
import { senderLine } from '../../core/sender';
import { firstWords, isPlaceholderSmsSubject } from '../../core/sms';
import { ACTION_TITLES, type ErrorAction } from '../errors';
import { absoluteTime, relativeTime } from '../util/time';
import type { TreeNode } from './model';

/** contextValues menus match on (package.json `view/item/context`). */
export const NodeContext = {
  domain: 'testInbox.domain',
  inbox: 'testInbox.inbox',
  /** An inbox the user added (it can be removed). */
  addedInbox: 'testInbox.inbox.added',
  message: 'testInbox.message',
  /** A message with a known one-time code (Copy One-Time Code is offered only there). */
  messageWithCode: 'testInbox.message.code',
  loadMore: 'testInbox.loadMore',
  error: 'testInbox.error',
  empty: 'testInbox.empty',
} as const;

/**
 * What clicking a node does: an error's action, or opening, loading more, injecting. The
 * command behind each is commands/actions.ts's (this module stays free of vscode).
 */
export type NodeAction = ErrorAction | 'openMessage' | 'loadMore' | 'injectMessage';

export interface Presentation {
  id: string;
  label: string;
  /** Unread message: its description starts with UNREAD_MARK and its accessible label with "Unread". */
  unread?: boolean;
  description?: string;
  tooltip?: string;
  icon: string;
  /** Theme color id for the icon. */
  iconColor?: string;
  contextValue: string;
  collapsible: 'none' | 'collapsed' | 'expanded';
  command?: { action: NodeAction; title: string; args?: unknown[]; withNode?: boolean };
  accessibilityLabel?: string;
}

/**
 * Marks an unread message at the start of its row's description, where a glance down the tree
 * finds it (the tree API has no bold; a label highlight looks like a search match). Screen
 * readers hear "Unread" from the row's accessible label instead.
 */
export const UNREAD_MARK = '●';

/** `Acme <no-reply@acme.test>` → `Acme`; a bare address stays. */
export function senderName(from: string): string {
  const m = /^\s*"?([^"<]*?)"?\s*<([^>]*)>\s*$/.exec(from);
  if (m) return m[1].trim() || m[2].trim();
  return from.trim();
}

export function present(node: TreeNode, now: number): Presentation {
  switch (node.kind) {
    case 'domain':
      return {
        id: node.id,
        label: node.domain,
        description: [
          node.inboxCount !== undefined ? (node.inboxCount === 1 ? '1 inbox' : `${node.inboxCount} inboxes`) : undefined,
          node.unread > 0 ? `${node.unread} unread` : undefined,
        ]
          .filter(Boolean)
          .join(' · ') || undefined,
        tooltip: node.domain === 'private' ? 'The private domains of this server' : `Domain ${node.domain}`,
        icon: 'globe',
        contextValue: NodeContext.domain,
        collapsible: 'expanded',
        accessibilityLabel: [
          `Domain ${node.domain}`,
          node.inboxCount !== undefined ? (node.inboxCount === 1 ? '1 inbox' : `${node.inboxCount} inboxes`) : undefined,
          node.unread > 0 ? `${node.unread} unread` : undefined,
        ]
          .filter(Boolean)
          .join(', '),
      };
    case 'inbox':
      return {
        id: node.id,
        label: node.inbox,
        description: node.unread > 0 ? `${node.unread} unread` : node.address,
        tooltip: [
          node.phone ? `SMS inbox ${node.inbox}` : node.address ? `Inbox ${node.address}` : `Inbox ${node.inbox}`,
          node.added ? 'Added by you' : 'Seen in recent mail',
          node.unread > 0 ? `${node.unread} unread` : undefined,
        ]
          .filter(Boolean)
          .join('\n'),
        icon: node.phone ? 'device-mobile' : 'inbox',
        contextValue: node.added ? NodeContext.addedInbox : NodeContext.inbox,
        collapsible: 'collapsed',
        accessibilityLabel: `${node.phone ? 'SMS inbox' : 'Inbox'} ${node.address ?? node.inbox}${node.unread > 0 ? `, ${node.unread} unread` : ''}`,
      };
    case 'message': {
      const m = node.summary;
      const sender = senderName(senderLine(m)) || '(unknown sender)';
      // An SMS has no subject of its own: its first words (the local server stores them as the subject, as the hosted service does).
      const subject = node.phone ? (isPlaceholderSmsSubject(m.subject) ? `SMS from ${sender}` : firstWords(m.subject)) : m.subject.trim() || '(no subject)';
      const when = relativeTime(m.time, now);
      return {
        id: node.id,
        label: subject,
        unread: node.unread,
        description: `${node.unread ? `${UNREAD_MARK} ` : ''}${sender} · ${when}`,
        tooltip: `${subject}\nFrom: ${senderLine(m)}\nTo: ${m.to}\nReceived: ${absoluteTime(m.time)}\nId: ${m.id}${node.code ? `\nCode: ${node.code}` : ''}${node.unread ? '\nUnread' : ''}`,
        // A key marks a row with a code (Copy One-Time Code is offered there); the mark and colour mark unread.
        icon: node.code ? 'key' : node.phone ? (node.unread ? 'comment-unresolved' : 'comment') : node.unread ? 'mail' : 'mail-read',
        iconColor: node.unread ? 'notificationsInfoIcon.foreground' : undefined,
        contextValue: node.code ? NodeContext.messageWithCode : NodeContext.message,
        collapsible: 'none',
        command: { action: 'openMessage', title: 'Open Message', withNode: true },
        accessibilityLabel: `${node.unread ? 'Unread ' : ''}${node.phone ? 'SMS' : 'email'} from ${sender}, ${subject}, ${when}${node.code ? `, has code ${node.code}` : ''}`,
      };
    }
    case 'loadMore':
      return {
        id: node.id,
        label: 'Load more…',
        tooltip: `Load older messages of ${node.inbox}`,
        icon: 'ellipsis',
        contextValue: NodeContext.loadMore,
        collapsible: 'none',
        command: { action: 'loadMore', title: 'Load More', withNode: true },
        accessibilityLabel: `Load older messages of ${node.inbox}`,
      };
    case 'error': {
      const first = node.actions[0];
      return {
        id: node.id,
        label: node.message,
        description: first ? `${ACTION_TITLES[first]}…` : undefined,
        tooltip: `${node.message}${node.actions.length ? `\n\nClick: ${ACTION_TITLES[node.actions[0]]}` : ''}`,
        icon: 'error',
        iconColor: 'errorForeground',
        contextValue: NodeContext.error,
        collapsible: 'none',
        command: first ? { action: first, title: ACTION_TITLES[first] } : undefined,
        accessibilityLabel: `Error: ${node.message}`,
      };
    }
    case 'empty':
      return {
        id: node.id,
        label: 'No messages yet',
        description: 'Inject…',
        tooltip: node.message,
        icon: 'info',
        contextValue: NodeContext.empty,
        collapsible: 'none',
        command: { action: 'injectMessage', title: 'Inject Test Message', args: [{ domain: node.domain, inbox: node.inbox }] },
        accessibilityLabel: node.message,
      };
  }
}
