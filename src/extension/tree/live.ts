// Live updates of the tree: the server's push stream where it offers one, polling of the
// shown domains while the view is visible otherwise. No vscode import.
import type { InboxApi, StreamState, Subscription } from '../../api/types';
import type { MessageSummary } from '../../core/wire';
import { errorText, type Logger } from '../log';
import type { InboxModel } from './model';

export interface NewMail {
  domain: string;
  msgs: MessageSummary[];
}

interface LiveDeps {
  model: InboxModel;
  /** The client when connected (never starts anything). */
  api(): InboxApi | undefined;
  pollSeconds(): number;
  log: Logger;
  onNewMail(mail: NewMail): void;
}

export class LiveUpdates {
  private readonly subs = new Map<string, { api: InboxApi; sub: Subscription; state: StreamState }>();
  private readonly polled = new Set<string>();
  private visible = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  private polling = false;

  constructor(private readonly deps: LiveDeps) {}

  /** The view's visibility: polling runs only while it is visible. */
  setVisible(visible: boolean): void {
    this.visible = visible;
    this.schedule();
  }

  /** Matches subscriptions to the domains the tree shows now (call after the roots load). */
  sync(): void {
    const api = this.deps.api();
    const domains = api ? this.deps.model.shownDomains : [];
    for (const [domain, s] of this.subs) {
      if (!domains.includes(domain) || s.api !== api) {
        s.sub.dispose();
        this.subs.delete(domain);
      }
    }
    for (const d of [...this.polled]) if (!domains.includes(d)) this.polled.delete(d);
    if (api) {
      for (const domain of domains) {
        if (this.subs.has(domain) || this.polled.has(domain)) continue;
        this.subscribe(api, domain);
      }
    }
    this.schedule();
  }

  private subscribe(api: InboxApi, domain: string): void {
    let wasOpen = false;
    const entry = { api, sub: undefined as unknown as Subscription, state: 'connecting' as StreamState };
    this.subs.set(domain, entry);
    entry.sub = api.subscribe(domain, undefined, {
      onEvent: (event) => {
        if (event.type === 'message' && event.msg) {
          const fresh = this.deps.model.applyNew(domain, [event.msg]);
          if (fresh.length > 0) this.deps.onNewMail({ domain, msgs: fresh });
        } else if (event.type === 'delete' && event.ids) {
          this.deps.model.applyDelete(domain, event.ids);
        }
      },
      onState: (state, error) => {
        entry.state = state;
        if (state === 'unsupported') {
          this.deps.log.info(`${api.baseUrl} offers no push stream for ${domain}; polling every ${this.deps.pollSeconds()} s while the view is visible.`);
          this.subs.delete(domain);
          this.polled.add(domain);
          this.schedule();
        } else if (state === 'open') {
          this.deps.log.debug(`Push stream open for ${domain}.`);
          // Mail may have arrived while the stream was down.
          if (wasOpen) void this.pollNow([domain]);
          wasOpen = true;
        } else if (state === 'reconnecting' || state === 'closed') {
          this.deps.log.debug(`Push stream for ${domain} ${state}${error ? `: ${errorText(error)}` : ''}.`);
        }
      },
    });
  }

  private schedule(): void {
    const want = this.visible && this.polled.size > 0;
    if (want && !this.timer) {
      this.timer = setInterval(() => void this.pollNow([...this.polled]), this.deps.pollSeconds() * 1000);
    } else if (!want && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** Polls now; overlapping polls are skipped. */
  async pollNow(domains: string[] = [...this.polled]): Promise<void> {
    if (this.polling || !this.deps.api()) return;
    this.polling = true;
    try {
      for (const domain of domains) {
        const fresh = await this.deps.model.poll([domain]);
        if (fresh.length > 0) this.deps.onNewMail({ domain, msgs: fresh });
      }
    } catch (e) {
      this.deps.log.warn(`Polling failed: ${errorText(e)}`);
    } finally {
      this.polling = false;
    }
  }

  /** Restarts the timer with a new interval (setting changed). */
  restartTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.schedule();
  }

  /** Stream state per domain, for the debug state. */
  describe(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [d, s] of this.subs) out[d] = `stream:${s.state}`;
    for (const d of this.polled) out[d] = 'polling';
    return out;
  }

  dispose(): void {
    for (const s of this.subs.values()) s.sub.dispose();
    this.subs.clear();
    this.polled.clear();
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
