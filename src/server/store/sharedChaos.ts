// The shape of a fault rule (docs/chaos.md) as the rule set of chaos/rules.ts keeps it and a team
// server's store persists it (store/postgres/chaosRules.ts), and SharedChaosRules, what such a store
// offers to keep them: the vocabulary both share, one floor below both, so the store never imports
// chaos/. chaos/rules.ts re-exports it, and checks, matches and draws.

export const CHAOS_SURFACES = ['smtp', 'resend', 'sendgrid', 'postmark', 'mailgun', 'ses', 'twilio', 'verify', 'delivery', 'mailosaur'] as const;
export type ChaosSurface = (typeof CHAOS_SURFACES)[number];

export const SMTP_STAGES = ['connect', 'ehlo', 'auth', 'mail', 'rcpt', 'data'] as const;
export type SmtpStage = (typeof SMTP_STAGES)[number];

/** What a rule matches. `all: true` is required to match everything. */
export interface ChaosMatch {
  all?: true;
  /** An address (`joe@inbox.test`), an inbox of any domain (`joe`), or a domain (`*@inbox.test`); case-insensitive. */
  recipient?: string;
  /** The same patterns, for the sender. */
  sender?: string;
  /** SMTP only: the stage the rule applies at (default `rcpt`). */
  stage?: SmtpStage;
  /** SMTP only: the client's IP address. */
  client?: string;
}

/** What happens when a rule fires. */
export interface ChaosFault {
  /** SMTP: the reply (4xx or 5xx) instead of the normal one. */
  reply?: { code: number; text: string };
  /** SMTP: the connection is closed with no reply. */
  drop?: true;
  /** Every surface: a wait before the reply (or the fault). */
  delayMs?: number;
  /** HTTP surfaces: the status, in the provider's own error shape. */
  status?: number;
  /** HTTP surfaces: the `Retry-After` header, in seconds. */
  retryAfterSeconds?: number;
  /** Twilio and Verify: the Twilio error code (20429, 21211, …). */
  twilioCode?: number;
  /** `delivery`: how long an accepted message stays invisible. */
  deliveryDelayMs?: number;
}

export interface ChaosRule {
  id: string;
  surface: ChaosSurface;
  match: ChaosMatch;
  fault: ChaosFault;
  /** Fires with this probability (0–1], each evaluation taking the next draw of a generator seeded by `seed`. */
  probability?: number;
  seed?: number;
  /** Fires on the next `times` evaluations that match, then never. */
  times?: number;
  /** When the rule stops by itself (ms since the epoch). */
  expiresAt: number;
  /** How often it fired. */
  fired: number;
  /** How often it matched (fired or not): the index of its next draw. */
  evaluated: number;
}

/**
 * Where a team server keeps its rule set (store/postgres/chaosRules.ts): a table every process
 * shares, with each rule's time to live, `times` limit and counters. It keeps rules and counts;
 * it decides nothing: ChaosRules checks, matches and draws, the same with or without it. A
 * process mirrors the table in memory (evaluation stays synchronous), reloaded on each change
 * another process announces and whenever its connection comes back.
 */
export interface SharedChaosRules {
  /** The rules alive at `now`, with the counters of every process (counts not yet written go first). */
  load(now: number): Promise<ChaosRule[]>;
  /** Adds the rule unless `max` rules alive at `now` are kept already: then false. */
  add(rule: ChaosRule, max: number, now: number): Promise<boolean>;
  /** Replaces the whole set, in one transaction. */
  replace(rules: readonly ChaosRule[]): Promise<void>;
  remove(id: string): Promise<boolean>;
  /** Removes every rule; resolves how many were alive at `now`. */
  clear(now: number): Promise<number>;
  /**
   * Claims one firing of a rule with a `times` limit, atomically across the processes: its
   * `fired` after, or undefined when its times are used up, it ended at `now`, or it is gone.
   */
  claim(id: string, now: number): Promise<number | undefined>;
  /** Adds one evaluation that did not fire (or whose firing `claim` counts) to the rule's counters: written soon, batched, and before any `load`. */
  count(id: string): void;
  /** Adds one evaluation and one firing of a rule without a `times` limit: resolves once written (or failed, logged), so a client that saw the fault finds it counted on every process. */
  fired(id: string): Promise<void>;
  /** `changed` runs whenever the set may have changed elsewhere, and after a lost connection comes back; resolves once that holds. */
  watch(changed: () => void): Promise<void>;
  /** Writes the counts still pending and stops watching. */
  close(): Promise<void>;
}
