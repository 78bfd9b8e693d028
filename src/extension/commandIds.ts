// Every command of the extension, its id and its title, written once (as GitLens keeps them in
// src/constants.commands.ts). A leaf: it imports nothing, so any module can name a command
// without importing the command's module. package.json's `contributes.commands` says the same
// (test/unit/commandIds.test.ts checks it).

export const COMMANDS = {
  addInbox: { id: 'testInbox.addInbox', title: 'Add Inbox…' },
  clearApiToken: { id: 'testInbox.clearApiToken', title: 'Clear API Token' },
  clearInbox: { id: 'testInbox.clearInbox', title: 'Clear Inbox…' },
  clearWebhookToken: { id: 'testInbox.clearWebhookToken', title: 'Clear Webhook Token' },
  confirmServer: { id: 'testInbox.confirmServer', title: 'Review Server…' },
  copyApiToken: { id: 'testInbox.copyApiToken', title: 'Copy API Token' },
  copyCode: { id: 'testInbox.copyCode', title: 'Copy One-Time Code' },
  copyMcpConfig: { id: 'testInbox.copyMcpConfig', title: 'Copy MCP Server Config…' },
  copyMessageId: { id: 'testInbox.copyMessageId', title: 'Copy Message Id' },
  copyProviderSettings: { id: 'testInbox.copyProviderSettings', title: 'Copy Provider Settings…' },
  copySmsSettings: { id: 'testInbox.copySmsSettings', title: 'Copy SMS Settings' },
  copySmtpSettings: { id: 'testInbox.copySmtpSettings', title: 'Copy SMTP Settings' },
  copyTotpCode: { id: 'testInbox.copyTotpCode', title: 'Copy TOTP Code…' },
  copyVerificationLink: { id: 'testInbox.copyVerificationLink', title: 'Copy Verification Link' },
  copyWebhookUrl: { id: 'testInbox.copyWebhookUrl', title: 'Copy Webhook URL…' },
  deleteMessage: { id: 'testInbox.deleteMessage', title: 'Delete Message' },
  exportEml: { id: 'testInbox.exportEml', title: 'Export as .eml…' },
  injectMessage: { id: 'testInbox.injectMessage', title: 'Inject Test Message…' },
  keepMessageOpen: { id: 'testInbox.keepMessageOpen', title: 'Keep Open' },
  loadMore: { id: 'testInbox._loadMore', title: 'Load More' },
  openMessage: { id: 'testInbox.openMessage', title: 'Open Message' },
  openInBrowser: { id: 'testInbox.openInBrowser', title: 'Open in Browser' },
  openMessageInNewPanel: { id: 'testInbox.openMessageInNewPanel', title: 'Open in New Panel' },
  refresh: { id: 'testInbox.refresh', title: 'Refresh' },
  removeInbox: { id: 'testInbox.removeInbox', title: 'Remove Inbox' },
  searchMessages: { id: 'testInbox.searchMessages', title: 'Search Messages…' },
  setApiToken: { id: 'testInbox.setApiToken', title: 'Set API Token…' },
  setWebhookToken: { id: 'testInbox.setWebhookToken', title: 'Set Webhook Token…' },
  showLog: { id: 'testInbox.showLog', title: 'Show Log' },
  showMenu: { id: 'testInbox.showMenu', title: 'Show Menu' },
  simulateFailures: { id: 'testInbox.simulateFailures', title: 'Simulate Failures…' },
  startLocalServer: { id: 'testInbox.startLocalServer', title: 'Start Local Server' },
  stopLocalServer: { id: 'testInbox.stopLocalServer', title: 'Stop Local Server' },
  switchServer: { id: 'testInbox.switchServer', title: 'Switch Server…' },
  waitForCode: { id: 'testInbox.waitForCode', title: 'Wait for Next Code…' },
} as const;

/**
 * Commands for test harnesses only, registered only in test mode (testHooksOn) and not in
 * package.json: the integration tests and the benches read the extension's state through them.
 */
export const TEST_HOOK_COMMANDS = {
  debugState: { id: 'testInbox._debugState', title: 'Debug State' },
} as const;

/**
 * Set to 1 in the extension host's environment, this turns the test hooks on in an installed
 * extension too (VS Code runs a VSIX in production mode); the bench's host driver sets it.
 */
export const TEST_HOOKS_ENV = 'TEST_INBOX_TEST_HOOKS';

/**
 * Whether the test hooks (TEST_HOOK_COMMANDS) are registered: in a test or development extension
 * host (not `production`), or with TEST_HOOKS_ENV=1 (a harness driving an installed VSIX).
 */
export function testHooksOn(production: boolean, env: Record<string, string | undefined>): boolean {
  return !production || env[TEST_HOOKS_ENV] === '1';
}

type CommandName = keyof typeof COMMANDS;

/** A command's title as said in messages ("Copy One-Time Code failed"): without the ellipsis the palette shows. */
export function commandTitle(name: CommandName): string {
  return COMMANDS[name].title.replace(/…$/, '');
}
