import * as vscode from 'vscode';
import { shownDomains } from '../config/settings';
import type { Services } from '../services';
import { jsonResult, withSignal } from './common';
import { LIST_LOOK_BACK, listInboxes } from '../../api/queries';

export const name = 'testInbox_listInboxes';

export interface Input {
  /** One domain instead of every shown one. */
  domain?: string;
}

/** Lists the inboxes with recent mail in the domains the Test Inbox view shows (or one domain). Read-only: no confirmation. */
export function create(s: Services): vscode.LanguageModelTool<Input> {
  return {
    prepareInvocation: (options) => ({
      invocationMessage: options.input?.domain ? `Listing the test inboxes of ${options.input.domain}` : 'Listing the test inboxes',
    }),
    invoke: (options, token) =>
      withSignal(token, async (signal) => {
        const api = await s.connection.ensure();
        const one = typeof options.input?.domain === 'string' && options.input.domain.trim() !== '' ? options.input.domain.trim().toLowerCase() : undefined;
        const domains = one ? [one] : await shownDomains(s.settings(), s.connection.serverDomains(api, signal), () => s.added().list());
        const st = s.connection.state;
        return jsonResult({
          server: st.kind === 'ready' ? (st.server.local ? 'local' : st.server.baseUrl) : s.connection.describe(),
          note: `Inboxes with mail among the ${LIST_LOOK_BACK} most recent messages of each domain.`,
          domains: await listInboxes(api, domains, signal),
        });
      }),
  };
}
