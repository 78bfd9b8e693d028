// How many fault rules the connected Test Inbox server has (docs/chaos.md), for the status-bar
// mark. Read from GET /api/v2/chaos when the connection becomes ready, after the editor changes
// the rules, every FAULT_RULES_POLL_MS (a test, the CLI or another window may add or clear
// them), and just after the soonest rule's time to live ends, so the mark goes when the last
// rule expires. Only a Test Inbox server has rules; the hosted service is never asked. No vscode import.
import type { InboxApi } from '../../api/types';
import type { ChaosRuleInfo } from '../../core/wire';
import { Emitter } from '../util/emitter';
import { errorText, type Logger } from '../log';

/** Rules set outside the editor (the CLI, a test's chaos()) show within this; a local GET costs well under a millisecond. */
export const FAULT_RULES_POLL_MS = 5_000;
/** Read again this long after the soonest expiry: the server drops a rule at its `expires`, not before. */
const AFTER_EXPIRY_MS = 250;

/** What the watch needs of the connection (connection/connection.ts's Connection). */
export interface FaultRulesConnection {
  /** Set while connected to a Test Inbox server. */
  readonly testInbox: unknown;
  /** The client when connected (never starts anything). */
  current(): InboxApi | undefined;
  onDidChangeState(listener: () => void): { dispose(): void };
}

export class FaultRulesWatch {
  private rulesValue: ChaosRuleInfo[] = [];
  private readonly emitter = new Emitter<ChaosRuleInfo[]>();
  readonly onDidChange = this.emitter.event;
  private readonly poll: ReturnType<typeof setInterval>;
  private expiry: ReturnType<typeof setTimeout> | undefined;
  private readonly sub: { dispose(): void };
  private reading: Promise<void> | undefined;
  private again = false;
  private warned = false;

  constructor(
    private readonly connection: FaultRulesConnection,
    private readonly log: Logger,
  ) {
    this.poll = setInterval(() => void this.refresh(), FAULT_RULES_POLL_MS);
    this.sub = connection.onDidChangeState(() => void this.refresh());
  }

  /** The active rules as last read (empty when not connected to a Test Inbox server). */
  get rules(): readonly ChaosRuleInfo[] {
    return this.rulesValue;
  }

  /** Reads the rules now; a call during a read reads once more after it. */
  refresh(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    this.reading = this.read().finally(() => {
      this.reading = undefined;
      if (this.again) {
        this.again = false;
        void this.refresh();
      }
    });
    return this.reading;
  }

  private async read(): Promise<void> {
    const api = this.connection.testInbox ? this.connection.current() : undefined;
    let rules: ChaosRuleInfo[] = [];
    if (api) {
      try {
        rules = (await api.chaosRules({ signal: AbortSignal.timeout(FAULT_RULES_POLL_MS) })).rules;
        this.warned = false;
      } catch (e) {
        // An older server without the route, or one that went away: no mark, said once in the log.
        if (!this.warned) this.log.debug(`Could not read the fault rules: ${errorText(e)}`);
        this.warned = true;
      }
    }
    this.set(rules);
  }

  private set(rules: ChaosRuleInfo[]): void {
    if (this.expiry) clearTimeout(this.expiry);
    this.expiry = undefined;
    const soonest = Math.min(...rules.map((r) => Date.parse(r.expires)).filter((t) => Number.isFinite(t)));
    if (Number.isFinite(soonest)) {
      this.expiry = setTimeout(() => void this.refresh(), Math.max(0, soonest - Date.now()) + AFTER_EXPIRY_MS);
    }
    const changed = rules.length !== this.rulesValue.length || rules.some((r, i) => r.id !== this.rulesValue[i]?.id || r.fired !== this.rulesValue[i]?.fired || r.evaluated !== this.rulesValue[i]?.evaluated);
    this.rulesValue = rules;
    if (changed) this.emitter.fire(rules);
  }

  dispose(): void {
    clearInterval(this.poll);
    if (this.expiry) clearTimeout(this.expiry);
    this.sub.dispose();
    this.emitter.dispose();
  }
}
