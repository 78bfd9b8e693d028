// Which hosted-server URLs need the user's confirmation before the extension sends them a
// token, and the confirmations given (kept in global state, per URL and reason). Pure but for
// the memento passed in; no vscode import.
import { isLoopbackHost } from '../../core/urls';
import type { MementoLike } from '../util/memento';
import type { ServerSetting } from './settings';

/** `workspace`: the workspace's settings chose the URL, not the user. `plainHttp`: http to another machine, the token would travel unencrypted. */
export type TrustReason = 'workspace' | 'plainHttp';

/** Global-state key of the confirmations: `{ [baseUrl]: TrustReason[] }`. */
const CONFIRMED_SERVERS_KEY = 'testInbox.confirmedServers';

export const REASON_TEXT: Record<TrustReason, string> = {
  workspace: 'The workspace settings chose this server, not you.',
  plainHttp: 'It is reached over plain http on another machine: the API token would travel unencrypted.',
};

/** What a URL needs confirmed before it is used. */
export function trustReasons(server: ServerSetting): TrustReason[] {
  if (server.kind !== 'remote') return [];
  const out: TrustReason[] = [];
  if (server.fromWorkspace) out.push('workspace');
  const url = new URL(server.baseUrl);
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) out.push('plainHttp');
  return out;
}

export class ConfirmedServers {
  constructor(private readonly memento: MementoLike) {}

  private all(): Record<string, TrustReason[]> {
    const v = this.memento.get<Record<string, TrustReason[]>>(CONFIRMED_SERVERS_KEY);
    return v && typeof v === 'object' ? v : {};
  }

  /** The reasons not yet confirmed for `baseUrl`. */
  missing(baseUrl: string, reasons: TrustReason[]): TrustReason[] {
    const given = this.all()[baseUrl] ?? [];
    return reasons.filter((r) => !given.includes(r));
  }

  async confirm(baseUrl: string, reasons: TrustReason[]): Promise<void> {
    const all = this.all();
    all[baseUrl] = [...new Set([...(all[baseUrl] ?? []), ...reasons])];
    await this.memento.update(CONFIRMED_SERVERS_KEY, all);
  }
}
